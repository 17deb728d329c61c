"""Recognises a keyboard-wedge card scanner wherever the keyboard focus is in the main
window, so that a scan is never lost in the history table nor appended to what a
field already holds.

A wedge scanner "types" the card number, usually followed by Enter. People type
a character every 80 ms or more; scanners every 1 to 50 ms. `ScanDetector` is an
application-level event filter that measures the time between key presses: a run
of at least `min_chars` id characters (letters, digits, . _ : -), each within
`max_key_gap_ms` of the previous one, ended by the suffix key, is a scan. An
optional prefix character (most scanners can send one) must then start the run.
The characters of a run still reach a line edit as they are typed (a person
typing sees them at once); when the run turns out to be a scan, the field gets
back the text it had before the run, and the scan goes to `on_scan`. Characters
typed while focus is on something that cannot take text (the history table, a
button) are kept out of it, and Enter ending a scan never reaches the focused
widget.

Speed alone is not enough (a cashier typing an amount at 45 ms a key, or keys bunched
by a loaded machine, look like a scanner), so a run typed into an amount field (a line
edit with the Qt property ``amountField``) is a scan only when it cannot be an amount:
it starts with the configured prefix, has a character no amount has (a letter, ``-``,
``:``, ``_``), or is at least `amount_min_chars` digits with no decimal point (a card
number; nobody types ¥10,000,000). The suffix must also follow the last character
within the scanner's gap. Likewise a run typed into a PIN field (property ``pinField``:
the lock screen's) is a scan only when it cannot be a PIN (a prefix, a character other
than a digit, or more digits than a PIN has), so a PIN typed fast is still the PIN. Settings: INI keys ``scanner/*`` (see `ScannerConfig.from_settings` and
docs/terminal.md).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget

ID_CHAR_RE = re.compile(r"[A-Za-z0-9._:-]")
MODIFIER_KEYS = {Qt.Key.Key_Shift, Qt.Key.Key_Control, Qt.Key.Key_Alt, Qt.Key.Key_Meta,
                 Qt.Key.Key_AltGr, Qt.Key.Key_CapsLock}
SUFFIX_KEYS = {"enter": (Qt.Key.Key_Return, Qt.Key.Key_Enter), "tab": (Qt.Key.Key_Tab,)}

DEFAULT_MAX_KEY_GAP_MS = 60      # scanners: 1-50 ms per key; people: 80 ms and more
DEFAULT_MIN_CHARS = 6            # shorter runs are left to the focused field
DEFAULT_AMOUNT_MIN_CHARS = 8     # in an amount field, shorter digit runs are the amount being typed
AMOUNT_RE = re.compile(r"[0-9]*(?:[.,][0-9]*)?")   # what a person types as an amount (either decimal mark)
AMOUNT_FIELD_PROPERTY = "amountField"
PIN_FIELD_PROPERTY = "pinField"
PIN_MAX_DIGITS = 12                 # core.cashiers.PIN_MAX_DIGITS (no core import: Qt-only module)


def may_be_amount(code: str, amount_min_chars: int = DEFAULT_AMOUNT_MIN_CHARS) -> bool:
    """Could `code`, typed into an amount field, be the amount the cashier is typing?"""
    if not AMOUNT_RE.fullmatch(code):
        return False                       # letters, '-', ':': a card number
    return "." in code or "," in code or len(code) < amount_min_chars


def may_be_pin(code: str) -> bool:
    """Could `code`, typed into a PIN field, be a PIN (digits only, at most 12)?"""
    return code.isascii() and code.isdigit() and len(code) <= PIN_MAX_DIGITS


@dataclass(frozen=True)
class ScannerConfig:
    """prefix: '' or one character the scanner sends first; suffix: 'enter', 'tab'
    or one character it sends last; max_key_gap_ms: the slowest scanner's time
    between two keys; min_chars: the shortest card number; amount_min_chars: the
    shortest all-digit card number taken from an amount field (without a prefix)."""
    prefix: str = ""
    suffix: str = "enter"
    max_key_gap_ms: int = DEFAULT_MAX_KEY_GAP_MS
    min_chars: int = DEFAULT_MIN_CHARS
    amount_min_chars: int = DEFAULT_AMOUNT_MIN_CHARS

    @classmethod
    def from_settings(cls, settings) -> "ScannerConfig":
        """From TerminalSettings (None: the defaults). Values out of range fall back."""
        if settings is None:
            return cls()
        prefix = settings.text_setting("scanner/prefix", "")
        suffix = settings.text_setting("scanner/suffix", "enter").lower()
        if suffix not in SUFFIX_KEYS and len(suffix) != 1:
            suffix = "enter"
        return cls(prefix=prefix if len(prefix) == 1 else "",
                   suffix=suffix,
                   max_key_gap_ms=settings.int_setting("scanner/max_key_gap_ms", DEFAULT_MAX_KEY_GAP_MS, 1, 500),
                   min_chars=settings.int_setting("scanner/min_chars", DEFAULT_MIN_CHARS, 1, 64),
                   amount_min_chars=settings.int_setting("scanner/amount_min_chars", DEFAULT_AMOUNT_MIN_CHARS,
                                                         1, 64))


class ScanDetector(QObject):
    """Application event filter; `window` is the main window, `active()` says whether
    scans are wanted now (the sale screen is showing), `on_scan(code)` takes a scan."""

    def __init__(self, window: QWidget, on_scan: Callable[[str], None], active: Callable[[], bool],
                 config: ScannerConfig | None = None):
        super().__init__(window)
        self.window = window
        self.on_scan = on_scan
        self.active = active
        self.config = config or ScannerConfig()
        self._run: list[str] = []
        self._last_ms: float | None = None
        self._prefixed = False
        self._saved: tuple[QLineEdit, str, int] | None = None   # the field's text before the run
        self._in_amount = False             # the run is being typed into an amount field
        self._in_pin = False                # ... into a PIN field
        QApplication.instance().installEventFilter(self)

    def uninstall(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)

    def _reset(self) -> None:
        self._run, self._prefixed, self._saved, self._in_amount, self._in_pin = [], False, None, False, False

    def _is_suffix(self, event) -> bool:
        keys = SUFFIX_KEYS.get(self.config.suffix)
        if keys is not None:
            return event.key() in keys
        return event.text() == self.config.suffix

    @staticmethod
    def _stamp_ms(event) -> float:
        # The window system's time of the key press (X11 gives it): right even when the
        # UI thread was busy and delivers several keys at once. Synthetic events have 0.
        stamp = event.timestamp()
        return float(stamp) if stamp else time.monotonic() * 1000

    def eventFilter(self, obj, event) -> bool:
        if event.type() != QEvent.Type.KeyPress or not isinstance(obj, QWidget):
            return False
        app = QApplication.instance()
        target = app.focusWidget() or self.window
        # Only the first delivery (to the focused widget), not the copies sent to its
        # parents, and only in the main window while the sale screen is showing.
        if obj is not target or obj.window() is not self.window or not self.active():
            return False
        if event.key() in MODIFIER_KEYS:
            return False                    # Shift for a capital letter: part of the run
        if event.isAutoRepeat():            # a key held down repeats as fast as a scanner
            self._reset()
            self._last_ms = None
            return False
        now_ms = self._stamp_ms(event)
        gap_ms = None if self._last_ms is None else now_ms - self._last_ms
        self._last_ms = now_ms
        in_time = gap_ms is not None and 0 <= gap_ms <= self.config.max_key_gap_ms
        text = event.text()
        cfg = self.config
        if self._is_suffix(event):
            code, prefixed, saved, in_amount = "".join(self._run), self._prefixed, self._saved, self._in_amount
            in_pin = self._in_pin
            self._reset()
            # the amount field's own typing is never a scan, however fast (nor a PIN's)
            amount_typed = in_amount and not prefixed and may_be_amount(code, cfg.amount_min_chars)
            pin_typed = in_pin and not prefixed and may_be_pin(code)
            if (in_time and len(code) >= cfg.min_chars and (prefixed or not cfg.prefix)
                    and not amount_typed and not pin_typed):
                if saved is not None:
                    field, before, cursor = saved
                    field.setText(before)
                    field.setCursorPosition(cursor)
                self.on_scan(code)
                return True                 # the Enter of a scan is not the cashier's Enter
            return False
        if cfg.prefix and text == cfg.prefix:
            self._reset()
            self._prefixed = True
            self._snapshot(obj)
            return not isinstance(obj, QLineEdit)
        if len(text) == 1 and ID_CHAR_RE.fullmatch(text):
            if self._prefixed and not self._run and in_time:
                pass                            # the prefix started this run (and saved the field)
            elif not in_time or not self._run or (cfg.prefix and not self._prefixed):
                # a new run (also right after a scan's suffix): remember where it is typed
                self._reset()
                self._snapshot(obj)
            self._run.append(text)
            # a field shows what is typed; anything else (the table, a button) must not
            # act on a scanned character (e.g. jump to another row)
            return not isinstance(obj, QLineEdit)
        self._reset()
        return False

    def _snapshot(self, obj) -> None:
        if isinstance(obj, QLineEdit):
            self._saved = (obj, obj.text(), obj.cursorPosition())
            self._in_amount = bool(obj.property(AMOUNT_FIELD_PROPERTY))
            self._in_pin = bool(obj.property(PIN_FIELD_PROPERTY))
