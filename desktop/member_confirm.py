"""The till's step for the member's own confirmation of a charge (issue 31 items 6-8):
whenever the engine answers a charge or hold CONFIRMATION_REQUIRED (whichever screen
started it: the sale screen, a split sale's card leg), `MemberConfirmation` opens
`MemberPinDialog`, meant for the customer: they type their 6-digit payment PIN on the
keypad (or a member code is scanned into it), the customer display shows the amount to
confirm, and the charge is re-sent with the SAME txn id carrying it (Engine.confirm:
in memory for that one send, never in the outbox or a log). A wrong PIN says how many
attempts are left; a locked one says so and that a supervisor can reset it (Member…
F7, member profile); a used or expired code asks for the current one. Cancel leaves the
charge not made (nothing was applied).

A member code scanned into the account field (`MC1:<account>:<digits>`) is held by the
engine for that account and goes with its next charge (desktop/engine_confirm.py), so
the gateway has its confirmation at once and no PIN is asked.
"""
from __future__ import annotations

import logging

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton

from core.member_codes import is_member_code
from core.member_pins import MEMBER_PIN_DIGITS

from . import money
from .engine import Refused
from .engine_confirm import confirmation_refusal, needs_confirmation
from .keypad import Keypad
from .sale_session import Refusal
from .till_dialog import TillDialog

log = logging.getLogger(__name__)
translate = QCoreApplication.translate


class MemberPinDialog(TillDialog):
    """The member's payment PIN (or a scanned member code) for one charge:
    `entered(kind, value)` with kind 'pin' or 'code'. `note`: why it is asked again (a
    wrong PIN and the attempts left, ...); `locked`: the member's confirmation is locked,
    nothing can be entered (a supervisor must reset it)."""
    entered = Signal(str, str)

    def __init__(self, amount_minor: int, kind: str, note: str = "", *, locked: bool = False, parent=None):
        super().__init__(parent)
        self.setObjectName("memberPinDialog")
        self.amount_minor, self.kind, self.locked = amount_minor, kind, locked
        self.about = QLabel(objectName="memberPinAbout", wordWrap=True)
        self.amount_label = QLabel(objectName="memberPinAmount", alignment=Qt.AlignmentFlag.AlignCenter)
        self.amount_label.setStyleSheet("font-size: 32px; font-weight: 700;")   # what the customer confirms
        self.pin_input = QLineEdit(objectName="memberPinInput", echoMode=QLineEdit.EchoMode.Password)
        self.pin_input.setInputMethodHints(Qt.InputMethodHint.ImhDigitsOnly | Qt.InputMethodHint.ImhSensitiveData)
        self.pin_input.setEnabled(not locked)
        self.message = QLabel(note, objectName="memberPinMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="memberPinConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.confirm_button.setEnabled(not locked)
        self.cancel_button = QPushButton(objectName="memberPinCancelButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        self.scan_fields = (self.pin_input,)
        self.keypad = Keypad(lambda: self.pin_input, with_point=False)
        self.keypad.setEnabled(not locked)
        self.keypad_layout(self.about, self.amount_label, self.pin_input, buttons=self.button_row(), min_width_px=480)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Member's confirmation"))
        if self.locked:
            self.about.setText(self.tr("The member's payment PIN is locked after too many wrong entries. A "
                                       "supervisor can reset it (Member…  F7, Reset payment PIN). The charge is not made."))
        else:
            self.about.setText(self.tr("Please ask the customer to enter their %1-digit payment PIN, or scan their "
                                       "member code, to confirm:").replace("%1", str(MEMBER_PIN_DIGITS)))
        self.amount_label.setText(money.format_minor(self.amount_minor))
        self.pin_input.setPlaceholderText(self.tr("Payment PIN"))
        self.confirm_button.setText(self.tr("Confirm"))
        self.cancel_button.setText(self.tr("Close") if self.locked else self.tr("Cancel"))

    def _scan_entered(self, focus) -> bool:
        # a member code scanned into the field is the whole answer: its Enter confirms
        return False

    def confirm(self) -> None:
        typed = self.pin_input.text().strip()
        self.pin_input.clear()                  # the PIN stays in no widget
        if is_member_code(typed):
            self.accept()
            self.entered.emit("code", typed)
            return
        if len(typed) != MEMBER_PIN_DIGITS or not (typed.isascii() and typed.isdigit()):
            self.fail(self.tr("The payment PIN is %1 digits.").replace("%1", str(MEMBER_PIN_DIGITS)), self.pin_input)
            return
        self.accept()
        self.entered.emit("pin", typed)


def refusal_words(refusal) -> str:
    """Why the PIN or code just given did not confirm the charge, for the dialog."""
    if refusal is None:
        return ""
    if refusal.outcome == "wrong_pin":
        return translate("MemberPinDialog", "Wrong PIN: %1 tries left before a lock.").replace(
            "%1", str(refusal.attempts_left))
    if refusal.outcome == "wrong_code":
        return translate("MemberPinDialog", "Wrong member code: %1 tries left before a lock.").replace(
            "%1", str(refusal.attempts_left))
    words = {
        "code_used": translate("MemberPinDialog", "This member code was used already: ask the customer to show "
                                                  "the next one."),
        "code_expired": translate("MemberPinDialog", "This member code has expired: ask the customer to show the "
                                                     "current one."),
        "not_enrolled": translate("MemberPinDialog", "This member has no member code: ask for the payment PIN."),
        "no_pin": translate("MemberPinDialog", "This member has no payment PIN: scan their member code."),
        "other_member": translate("MemberPinDialog", "This member code is another member's."),
    }
    return words.get(refusal.outcome) or translate("MemberPinDialog", "Not confirmed: ask the customer again.")


class MemberConfirmation(QObject):
    """The reusable step keyed on CONFIRMATION_REQUIRED: listens to the engine's answers
    and asks for the member's confirmation of this cashier's charges (see the module
    docstring). `window`: the main window (its cashier, sale page, customer display)."""
    asked = Signal(object)        # the dialog opened (tests, screenshots)

    def __init__(self, window, engine):
        super().__init__(window)
        self.window, self.engine = window, engine
        self.dialog: MemberPinDialog | None = None
        engine.opResolved.connect(self._resolved)

    def _resolved(self, op) -> None:
        cashier = self.window.cashier
        if not needs_confirmation(op) or op.recovered or cashier is None or op.cashier_id != cashier.cashier_id:
            return
        refusal = confirmation_refusal(op)
        locked = refusal is not None and refusal.outcome == "locked"
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.reject()
        self.dialog = MemberPinDialog(op.amount_minor, op.kind, refusal_words(refusal), locked=locked,
                                      parent=self.window)
        self.dialog.entered.connect(lambda kind, value: self._send(op, kind, value))
        self.dialog.rejected.connect(self._given_up)
        display = self.window.customer_display
        if display is not None:
            display.show_confirm(op)
        self.dialog.open()
        self.asked.emit(self.dialog)

    def _send(self, op, kind: str, value: str) -> None:
        page = self.window.sale_page
        try:
            reopened = self.engine.confirm(op, **({"member_pin": value} if kind == "pin" else {"member_code": value}))
        except Refused as exc:
            page.panel.refuse(Refusal(exc.reason), op.account_id)
            return
        page.resume_operation(reopened)

    def _given_up(self) -> None:
        display = self.window.customer_display
        if display is not None:
            display.show_idle()
