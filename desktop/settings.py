"""The terminal's settings (terminal id, central Redis URL, language, how long a
hold lasts, after how long idle the till locks, how old a displayed balance may be)
and where its local data lives,
plus the settings dialog shown on first run.

Settings are kept with QSettings (the platform's native store, or an INI file given
with ``--config`` / ``CASHIER_TERMINAL_CONFIG``). Local data (the outbox, logs) go
to the platform's user data directory from platformdirs, or to ``--data-dir`` /
``CASHIER_TERMINAL_DATA_DIR``. The dialog saves a Redis URL only after a connection
to it has succeeded, and tests it on a worker thread; a change of the language (or
hold time) alone is saved without a test. Opened from the main window (after a
supervisor's PIN) it shows the values the running terminal uses, which may come
from the command line (``--redis-url``, ``--terminal-id``, as under the demo), not
from the store. Numbers kept in the store are read strictly (whole numbers in
range; anything else falls back to the default).
"""
from __future__ import annotations

import os
from pathlib import Path

import platformdirs
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (QComboBox, QDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QPushButton, QSpinBox, QVBoxLayout)

from core import InvalidRequest
from core.validation import check_id

from . import i18n
from .texts import id_error_words
from .workers import Background
from .i18n import Retranslates

APP_NAME = "cashier-terminal"
ORG_NAME = "CashierLedger"
DATA_DIR_ENV = "CASHIER_TERMINAL_DATA_DIR"
CONFIG_ENV = "CASHIER_TERMINAL_CONFIG"
DEFAULT_HOLD_MINUTES = 30
MAX_HOLD_MINUTES = 7 * 24 * 60           # the ledger's default retention; the engine caps it too
DEFAULT_READ_CACHE_MAX_AGE_MS = 500      # display reads only (0 = off)
MAX_READ_CACHE_MAX_AGE_MS = 1000
DEFAULT_LARGE_AMOUNT_MINOR = 100_000     # ¥1,000
DEFAULT_LOCK_IDLE_S = 5 * 60             # the till locks after 5 minutes without a key or a tap
MAX_LOCK_IDLE_S = 24 * 60 * 60           # 0 = never


def data_dir(override: str | os.PathLike | None = None) -> Path:
    """Where the outbox and logs live (created if missing)."""
    chosen = override or os.environ.get(DATA_DIR_ENV) or platformdirs.user_data_dir(APP_NAME, ORG_NAME)
    path = Path(chosen)
    path.mkdir(parents=True, exist_ok=True)
    return path


class TerminalSettings:
    """terminal_id, redis_url and language, persisted with QSettings."""

    def __init__(self, config_path: str | os.PathLike | None = None):
        path = config_path or os.environ.get(CONFIG_ENV)
        self.q = QSettings(str(path), QSettings.Format.IniFormat) if path else QSettings(ORG_NAME, APP_NAME)

    def _get(self, key: str, default: str = "") -> str:
        value = self.q.value(key, default)
        return str(value) if value is not None else default

    @property
    def terminal_id(self) -> str:
        return self._get("terminal/id")

    @property
    def redis_url(self) -> str:
        return self._get("terminal/redis_url")

    @property
    def language(self) -> str:
        return self._get("ui/language", i18n.SYSTEM)

    def _get_int(self, key: str, default: int, low: int, high: int) -> int:
        text = self._get(key, str(default)).strip()
        if not text.isascii() or not text.isdigit() or not low <= int(text) <= high:
            return default
        return int(text)

    def int_setting(self, key: str, default: int, low: int, high: int) -> int:
        """A whole number in low..high kept under `key`, else `default`."""
        return self._get_int(key, default, low, high)

    def text_setting(self, key: str, default: str = "") -> str:
        return self._get(key, default)

    @property
    def large_amount_minor(self) -> int:
        """Amounts above this (INI key confirm/large_amount_minor, fen; default ¥1,000)
        are confirmed with the amount in words."""
        return self._get_int("confirm/large_amount_minor", DEFAULT_LARGE_AMOUNT_MINOR, 1, 10 ** 11)

    @property
    def fullscreen(self) -> bool:
        """ui/fullscreen = true|1: start full screen (kiosk tills); also --fullscreen."""
        return self._get("ui/fullscreen", "false").strip().lower() in ("1", "true", "yes")

    @property
    def hold_minutes(self) -> int:
        """How long a hold reserves its amount (ui: Hold lasts), 1 .. 7 days in minutes."""
        return self._get_int("holds/minutes", DEFAULT_HOLD_MINUTES, 1, MAX_HOLD_MINUTES)

    @property
    def read_cache_max_age_ms(self) -> int:
        """How old a *displayed* balance may be (INI key display/read_cache_max_age_ms,
        0 .. 1000 ms). Decisions never use it."""
        return self._get_int("display/read_cache_max_age_ms", DEFAULT_READ_CACHE_MAX_AGE_MS,
                             0, MAX_READ_CACHE_MAX_AGE_MS)

    @property
    def lock_idle_s(self) -> int:
        """After how many seconds without a key press or a tap the till locks (INI key
        lock/idle_s, 0 = never, at most a day; default 5 minutes). The settings dialog
        shows it in minutes."""
        return self._get_int("lock/idle_s", DEFAULT_LOCK_IDLE_S, 0, MAX_LOCK_IDLE_S)

    @property
    def complete(self) -> bool:
        return bool(self.terminal_id and self.redis_url)

    def save(self, terminal_id: str | None = None, redis_url: str | None = None,
             language: str | None = None, hold_minutes: int | None = None,
             lock_idle_s: int | None = None) -> None:
        if terminal_id is not None:
            self.q.setValue("terminal/id", terminal_id)
        if redis_url is not None:
            self.q.setValue("terminal/redis_url", redis_url)
        if language is not None:
            self.q.setValue("ui/language", language)
        if hold_minutes is not None:
            self.q.setValue("holds/minutes", str(int(hold_minutes)))
        if lock_idle_s is not None:
            if not 0 <= int(lock_idle_s) <= MAX_LOCK_IDLE_S:
                raise InvalidRequest("lock_idle_s", f"must be 0 (never) to {MAX_LOCK_IDLE_S} seconds")
            self.q.setValue("lock/idle_s", str(int(lock_idle_s)))
        self.q.sync()


def probe_redis(url: str) -> str:
    """Worker thread: connect to `url` and check it holds a ledger. Returns 'ok',
    'no_ledger', or raises (the dialog shows why)."""
    from core.connection import connect
    from core.keys import META_KEY
    client = connect(url, socket_timeout_s=3.0, connect_timeout_s=3.0)
    try:
        client.ping()
        return "ok" if client.exists(META_KEY) else "no_ledger"
    finally:
        client.close()


class SettingsDialog(Retranslates, QDialog):
    """Terminal id, Redis URL (tested before saving) and language."""

    def __init__(self, settings: TerminalSettings, parent=None, *, first_run: bool = False,
                 in_use: dict | None = None):
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.settings = settings
        self.first_run = first_run
        self._worker = Background(1, "settings")
        self._tested_url: str | None = None
        # what the running terminal uses (may differ from the store: command-line options)
        in_use = in_use or {}
        self._terminal_in_use = in_use.get("terminal_id") or settings.terminal_id
        self._url_in_use = in_use.get("redis_url") or settings.redis_url

        self.terminal_input = QLineEdit(self._terminal_in_use, objectName="terminalIdInput")
        self.terminal_input.setMaxLength(20)
        self.url_input = QLineEdit(self._url_in_use or "redis://127.0.0.1:6379/0", objectName="redisUrlInput")
        self.language_box = QComboBox(objectName="languageBox")
        self.hold_minutes_input = QSpinBox(objectName="holdMinutesInput")
        self.hold_minutes_input.setRange(1, MAX_HOLD_MINUTES)
        self.hold_minutes_input.setValue(settings.hold_minutes)
        self.hold_minutes_input.setMinimumHeight(52)
        # minutes in the dialog (the store keeps seconds: a value that is no whole number of
        # minutes, e.g. a test's, stays as it is unless the cashier changes this box)
        self.lock_minutes_input = QSpinBox(objectName="lockIdleMinutesInput")
        self.lock_minutes_input.setRange(0, MAX_LOCK_IDLE_S // 60)
        self._lock_minutes_shown = round(settings.lock_idle_s / 60)
        self.lock_minutes_input.setValue(self._lock_minutes_shown)
        self.lock_minutes_input.setMinimumHeight(52)
        self.test_button = QPushButton(objectName="testConnectionButton", clicked=self.test_connection)
        self.save_button = QPushButton(objectName="saveSettingsButton", clicked=self.save)
        self.cancel_button = QPushButton(objectName="cancelSettingsButton", clicked=self.reject)
        self.message = QLabel(objectName="settingsMessage", wordWrap=True)
        self.save_button.setEnabled(False)
        # Enter means Save (once it may save), never Cancel nor another test: only Save is
        # the dialog's default button; Cancel is clicked or reached with Tab and Space.
        for b in (self.test_button, self.cancel_button):
            b.setAutoDefault(False)
            b.setDefault(False)
        self.save_button.setAutoDefault(True)
        self.save_button.setDefault(True)
        self.url_input.textChanged.connect(self._url_changed)
        self.terminal_input.textChanged.connect(self._url_changed)

        self.form = QFormLayout()
        self.terminal_label, self.url_label, self.language_label = QLabel(), QLabel(), QLabel()
        self.hold_minutes_label, self.lock_minutes_label = QLabel(), QLabel()
        self.form.addRow(self.terminal_label, self.terminal_input)
        self.form.addRow(self.url_label, self.url_input)
        self.form.addRow(self.language_label, self.language_box)
        self.form.addRow(self.hold_minutes_label, self.hold_minutes_input)
        self.form.addRow(self.lock_minutes_label, self.lock_minutes_input)
        buttons = QHBoxLayout()
        buttons.addWidget(self.test_button)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        self.intro = QLabel(wordWrap=True)
        layout.addWidget(self.intro)
        layout.addLayout(self.form)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.setMinimumWidth(560)
        self.retranslate()
        self._url_changed()
        current = settings.language
        self.language_box.setCurrentIndex(max(0, [i18n.SYSTEM, *i18n.LANGUAGES].index(current)
                                              if current in (i18n.SYSTEM, *i18n.LANGUAGES) else 0))

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Terminal settings"))
        self.intro.setText(self.tr("This terminal needs a name and the address of the central server. "
                                   "The address is tested before it is saved."))
        self.terminal_label.setText(self.tr("Terminal id"))
        self.url_label.setText(self.tr("Central Redis URL"))
        self.language_label.setText(self.tr("Language"))
        self.hold_minutes_label.setText(self.tr("A hold lasts (minutes)"))
        self.lock_minutes_label.setText(self.tr("Lock when idle (minutes, 0 = never)"))
        self.test_button.setText(self.tr("Test connection"))
        self.save_button.setText(self.tr("Save"))
        self.cancel_button.setText(self.tr("Cancel"))
        index = self.language_box.currentIndex()
        self.language_box.clear()
        # Language names stay in their own language so that anyone can find theirs.
        self.language_box.addItem(self.tr("Same as the computer"), i18n.SYSTEM)
        self.language_box.addItem("English", "en")
        self.language_box.addItem("简体中文", "zh_CN")
        self.language_box.setCurrentIndex(max(index, 0))

    def _needs_test(self) -> bool:
        """Only a new server address (or terminal id) must be tested; the language, the
        hold time or the idle lock alone are saved as they are."""
        return (self.first_run or not self._url_in_use or self.url_input.text().strip() != self._url_in_use
                or self.terminal_input.text().strip() != self._terminal_in_use)

    def _url_changed(self) -> None:
        self.save_button.setEnabled(not self._needs_test() or self._tested_url == self.url_input.text().strip())

    def test_connection(self) -> None:
        url = self.url_input.text().strip()
        if not url:
            self.message.setText(self.tr("Central Redis URL: must not be empty"))
            return
        if self.test_button.hasFocus():
            # a disabled button passes the focus on (to Cancel): keep it in the form
            self.url_input.setFocus()
        self.test_button.setEnabled(False)
        self.message.setText(self.tr("Testing the connection…"))
        self._worker.run(lambda: probe_redis(url), lambda answer: self._tested(url, answer),
                         lambda exc: self._test_failed(exc))

    def _tested(self, url: str, answer: str) -> None:
        self.test_button.setEnabled(True)
        self._tested_url = url
        if answer == "ok":
            self.message.setText(self.tr("Connected: the central server answers."))
        else:
            self.message.setText(self.tr("Connected, but the server holds no ledger yet: "
                                         "run `cashierctl init` there first."))
        self._url_changed()
        if self.save_button.isEnabled() and not isinstance(self.focusWidget(), QLineEdit):
            self.save_button.setFocus()          # tested: Enter saves

    def _test_failed(self, exc: Exception) -> None:
        self.test_button.setEnabled(True)
        self._tested_url = None
        self._url_changed()
        if isinstance(exc, InvalidRequest):
            self.message.setText(self.tr("Central Redis URL: must start with redis://, rediss:// "
                                         "or redis+cluster://"))
        else:
            self.message.setText(self.tr("Could not connect: %1").replace("%1", type(exc).__name__))

    def save(self) -> None:
        terminal_id = self.terminal_input.text().strip()
        try:
            check_id(terminal_id, "terminal_id")
        except InvalidRequest as exc:
            self.message.setText(id_error_words(self.tr("Terminal id"), exc.reason))
            return
        url = self.url_input.text().strip()
        if self._needs_test():
            if url != self._tested_url:
                self.message.setText(self.tr("Test the connection before saving."))
                return
            self.settings.save(terminal_id, url, self.language_box.currentData(), self.hold_minutes_input.value(),
                               lock_idle_s=self._lock_idle_s())
        else:      # nothing about the connection changed: leave what the store holds
            self.settings.save(language=self.language_box.currentData(),
                               hold_minutes=self.hold_minutes_input.value(), lock_idle_s=self._lock_idle_s())
        self.accept()

    def _lock_idle_s(self) -> int | None:
        """The idle lock to save, in seconds: None when the box still shows what was read."""
        minutes = self.lock_minutes_input.value()
        return None if minutes == self._lock_minutes_shown else minutes * 60

    def done(self, result: int) -> None:
        self._worker.wait(10_000)
        super().done(result)
