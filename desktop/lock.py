"""The lock screen: a signed-in cashier steps away and the till locks, by a key (F2 or
Ctrl+L, or the Lock button) or by itself after `lock/idle_s` seconds without a key
press or a tap (desktop/settings.py; 0 = never).

Locked, the main window's stack shows `LockPage` instead of the sale screen, so the
sale screen is covered and its keys (F12, Enter, F5 ...) are off: a shortcut of a hidden
widget never fires. The main window's dialogs (a refund, a top-up, a confirmation, an
outcome) are hidden with it and come back, as they were, after the unlock; one that
opens while the till is locked (an answer that arrives meanwhile) is hidden at once and
shown after the unlock too. Card scans are taken by the lock page and do nothing (the
field they were typed into gets its text back). Whatever is in flight goes on: a charge
sent before the lock is resolved meanwhile, and its result is on the sale screen when
it comes back, with the account and the amount on screen as they were.

The signed-in cashier's PIN unlocks (checked on a worker thread by the cashier registry,
as at sign-in, `Engine.sign_in`: a wrong PIN says so and counts toward the lockout of
five wrong PINs in 15 minutes); so does a supervisor's id and PIN (`Engine.approve`), for
a cashier who is locked out or has gone. The session then goes on as the signed-in
cashier's. The PIN field is cleared after every attempt and a PIN is never logged. The
PINs can only be checked while the central server answers (as at sign-in).
"""
from __future__ import annotations

import logging
from typing import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (QApplication, QDialog, QFrame, QLabel, QLineEdit, QPushButton,
                               QVBoxLayout, QWidget)

from core import InvalidRequest
from core.cashiers import check_pin
from core.validation import check_id

from .i18n import Retranslates
from .keypad import Keypad, beside_keypad
from .scanner import PIN_FIELD_PROPERTY
from .texts import id_error_words, pin_error_words, signin_words

log = logging.getLogger(__name__)

ACTIVITY_EVENTS = (QEvent.Type.KeyPress, QEvent.Type.MouseButtonPress, QEvent.Type.Wheel,
                   QEvent.Type.TouchBegin)
LOCK_KEYS = ("F2", "Ctrl+L")     # free: the till's other keys are F1, F3-F12, Insert and Esc


class LockPage(Retranslates, QWidget):
    """What the locked till shows: who is signed in, a cashier id (the signed-in
    cashier's; a supervisor types theirs) and a PIN, with the keypad."""
    unlocked = Signal(str)        # who unlocked: the signed-in cashier's id, or a supervisor's

    def __init__(self, engine, parent=None):
        super().__init__(parent)
        self.setObjectName("lockPage")
        self.engine = engine
        self.cashier = None
        self._busy = False
        self._attempt = 0             # an answer to an earlier lock's attempt is dropped
        self.title = QLabel(objectName="lockTitle", alignment=Qt.AlignmentFlag.AlignCenter)
        self.info = QLabel(objectName="lockInfo", wordWrap=True, alignment=Qt.AlignmentFlag.AlignCenter)
        self.cashier_label, self.pin_label = QLabel(), QLabel()
        self.cashier_input = QLineEdit(objectName="lockCashierInput")
        self.cashier_input.setMaxLength(64)
        self.pin_input = QLineEdit(objectName="lockPinInput", echoMode=QLineEdit.EchoMode.Password)
        self.pin_input.setMaxLength(12)
        self.pin_input.setProperty(PIN_FIELD_PROPERTY, True)     # a PIN typed fast is no card scan
        self.unlock_button = QPushButton(objectName="unlockButton", clicked=self.submit)
        self.unlock_button.setProperty("role", "primary")
        self.message = QLabel(objectName="lockMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.cashier_input.returnPressed.connect(self.pin_input.setFocus)
        self.pin_input.returnPressed.connect(self.submit)
        self.keypad = Keypad(lambda: self.cashier_input if self.cashier_input.hasFocus() else self.pin_input,
                             with_point=False)
        card = QFrame(objectName="lockCard")
        form = QVBoxLayout(card)
        form.setSpacing(10)
        for w in (self.title, self.info, self.cashier_label, self.cashier_input, self.pin_label, self.pin_input,
                  self.message, self.unlock_button):
            form.addWidget(w)
        beside_keypad(self, card, self.keypad)
        self.retranslate()

    def retranslate(self) -> None:
        self.title.setText(self.tr("Locked"))
        if self.cashier is not None:
            name = f"{self.cashier.name} ({self.cashier.cashier_id})"
            self.info.setText(self.tr("%1 is signed in. Enter the PIN to unlock; a supervisor can unlock "
                                      "with their id and PIN.").replace("%1", name))
        self.cashier_label.setText(self.tr("Cashier id"))
        self.pin_label.setText(self.tr("PIN"))
        self.pin_input.setPlaceholderText(self.tr("4 to 12 digits"))
        self.unlock_button.setText(self.tr("Unlock"))

    def start(self, cashier) -> None:
        """The till locks with `cashier` signed in."""
        self.cashier = cashier
        self._attempt += 1
        self._busy = False
        self.unlock_button.setEnabled(True)
        self.cashier_input.setText(cashier.cashier_id)
        self.pin_input.clear()
        self.message.clear()
        self.retranslate()
        self.pin_input.setFocus()

    def scan_ignored(self) -> None:
        """A card scanned while locked: nothing is looked up, nothing is charged."""
        self.message.setText(self.tr("The till is locked: the scan was not used. Unlock first."))

    def submit(self) -> None:
        if self._busy or self.cashier is None:
            return
        who, pin = self.cashier_input.text().strip(), self.pin_input.text()
        self.pin_input.clear()
        try:
            check_id(who, "cashier_id")
        except InvalidRequest as exc:
            self.message.setText(id_error_words(self.tr("Cashier id"), exc.reason))
            self.cashier_input.setFocus()
            return
        try:
            check_pin(pin)
        except InvalidRequest as exc:
            self.message.setText(pin_error_words(exc.reason))
            self.pin_input.setFocus()
            return
        self._busy = True
        self.unlock_button.setEnabled(False)
        self.message.setText(self.tr("Checking…"))
        attempt = self._attempt
        if who == self.cashier.cashier_id:
            self.engine.sign_in(who, pin, lambda answer: self._answered(attempt, who, answer, None),
                                lambda exc: self._failed(attempt, exc))
        else:         # a supervisor unlocks (a cashier who is locked out, or has gone)
            self.engine.approve(who, pin, lambda answer: self._answered(attempt, who, *answer),
                                lambda exc: self._failed(attempt, exc))

    def _answered(self, attempt: int, who: str, signin, approval) -> None:
        if attempt != self._attempt:
            return
        self._busy = False
        self.unlock_button.setEnabled(True)
        supervisor = who != self.cashier.cashier_id
        if signin.ok and (approval is not None or not supervisor):
            if approval is not None:
                approval.use()
            self.message.clear()
            self.unlocked.emit(who)
            return
        if signin.outcome == "not_supervisor":
            self.message.setText(self.tr("Only %1 or a supervisor can unlock this till.")
                                 .replace("%1", self.cashier.cashier_id))
            self.cashier_input.setFocus()
            self.cashier_input.selectAll()
            return
        self.message.setText(signin_words(signin.outcome, attempts_left=signin.attempts_left,
                                          locked_s=signin.locked_s))
        self.pin_input.setFocus()

    def _failed(self, attempt: int, _exc: Exception) -> None:
        if attempt != self._attempt:
            return
        self._busy = False
        self.unlock_button.setEnabled(True)
        self.message.setText(signin_words("offline"))
        self.pin_input.setFocus()


def is_lock_key(event) -> bool:
    """F2 or Ctrl+L (not a key held down)."""
    if event.isAutoRepeat():
        return False
    pressed = QKeySequence(event.keyCombination())
    return any(pressed.matches(QKeySequence(key)) == QKeySequence.SequenceMatch.ExactMatch for key in LOCK_KEYS)


class ScreenLock(QObject):
    """The lock keys, the idle timer and the dialogs the lock covers, for `window` (the
    main window). `lock(reason)` is called on F2 or Ctrl+L in the window or one of its
    dialogs (reason 'key'; a QShortcut of the window would not fire while a modal dialog
    has the keyboard) and when the till has been idle `idle_s` seconds (0: never; reason
    'idle'); it answers whether it locked. The window calls `cover()` when it locks and
    `uncover()` when it unlocks."""

    def __init__(self, window: QWidget, idle_s: int, lock: Callable[[str], bool], is_locked: Callable[[], bool]):
        super().__init__(window)
        self.window = window
        self.lock = lock
        self.is_locked = is_locked
        self.idle_s = 0
        self._covered: list[QDialog] = []
        self.timer = QTimer(self, singleShot=True, timeout=self._idle)
        self.set_idle_s(idle_s)
        QApplication.instance().installEventFilter(self)

    def uninstall(self) -> None:
        self.timer.stop()
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)

    def set_idle_s(self, idle_s: int) -> None:
        self.idle_s = max(0, int(idle_s))
        running = self.timer.isActive()
        self.timer.setInterval(self.idle_s * 1000)
        if not self.idle_s:
            self.timer.stop()
        elif running:
            self.timer.start()

    def arm(self) -> None:
        """Count the idle time from now (signed in, unlocked)."""
        if self.idle_s:
            self.timer.start()

    def disarm(self) -> None:
        self.timer.stop()

    def _idle(self) -> None:
        if not self.lock("idle"):
            self.arm()                       # not lockable now (e.g. signed out): count again

    # ---------------------------------------------------------------- dialogs

    def _ours(self, widget) -> bool:
        parent = widget.parentWidget() if isinstance(widget, QDialog) else None
        return parent is not None and parent.window() is self.window

    def cover(self) -> None:
        """Hide every dialog of the window (kept to be shown again after the unlock)."""
        for widget in QApplication.topLevelWidgets():
            if self._ours(widget) and widget.isVisible():
                self._hide(widget)

    def _hide(self, dialog: QDialog) -> None:
        if dialog not in self._covered:
            self._covered.append(dialog)
            dialog.finished.connect(lambda _r, d=dialog: d in self._covered and self._covered.remove(d))
        dialog.hide()

    def _hide_late(self, dialog: QDialog) -> None:
        if self.is_locked() and dialog.isVisible():
            self._hide(dialog)
            self.window.activateWindow()         # the keyboard back to the lock page

    def uncover(self) -> bool:
        """Show the dialogs again that are still open; True when there was one."""
        covered, self._covered = self._covered, []
        shown = False
        for dialog in covered:
            try:
                dialog.show()
            except RuntimeError:      # deleted meanwhile
                continue
            dialog.raise_()
            dialog.activateWindow()
            shown = True
        return shown

    def forget(self) -> None:
        self._covered = []

    # ---------------------------------------------------------------- events

    def eventFilter(self, obj, event) -> bool:
        kind = event.type()
        if kind in ACTIVITY_EVENTS:
            if self.timer.isActive():
                self.timer.start()               # a key or a tap: idle from now
            if (kind == QEvent.Type.KeyPress and isinstance(obj, QWidget) and is_lock_key(event)
                    and (obj.window() is self.window or self._ours(obj.window()))):
                return bool(self.lock("key"))    # taken when it locked (else the key goes on)
        elif kind == QEvent.Type.Show and self.is_locked() and self._ours(obj) and obj.isWindow():
            # opened while locked (an answer that came meanwhile): behind the lock too
            QTimer.singleShot(0, lambda d=obj: self._hide_late(d))
        return False
