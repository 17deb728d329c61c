"""The member's own means of confirming a charge, set up at the till from Member… (F7)
(issue 31 items 6 and 7):

`MemberPinSetDialog`: the member sets their 6-digit payment PIN, entered twice on the
keypad (a member who has one gives the current one first); checked and stored by the
gateway only (POST /v1/members/{id}/pin): the till keeps no PIN once the dialog closes.

`MemberCodeEnrolDialog`: a supervisor's id and PIN enrol the member's dynamic member
code (POST /v1/members/{id}/code); the secret's QR (an otpauth:// URI the member's
authenticator app scans) is shown this once, in the dialog only, and forgotten when it
closes. Enrolling again replaces the secret (a lost phone is cut off).

`MemberPinResetDialog`: a supervisor's id and PIN remove the member's payment PIN and
lift the lock of their confirmations (5 wrong PINs or codes; POST
/v1/members/{id}/pin/reset); the member then sets a new PIN.
"""
from __future__ import annotations

import logging

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPixmap
from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QPushButton

from core import AccountNotFound, InvalidRequest
from core.member_pins import MEMBER_PIN_DIGITS
from gateway.wire import GatewayRefused

from .keypad import Keypad
from .supervisor_fields import SupervisorFields
from .texts import signin_words
from .till_dialog import TillDialog

log = logging.getLogger(__name__)
translate = QCoreApplication.translate
QR_MODULE_PX = 6


def qr_pixmap(text: str, module_px: int = QR_MODULE_PX) -> QPixmap:
    """`text` as a QR code image (the qrcode package's matrix, drawn here: no Pillow)."""
    import qrcode
    qr = qrcode.QRCode(border=2, error_correction=qrcode.constants.ERROR_CORRECT_M)
    qr.add_data(text)
    qr.make(fit=True)
    matrix = qr.get_matrix()
    size = len(matrix)
    image = QImage(size, size, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    black = QColor("black").rgb()
    for y, row in enumerate(matrix):
        for x, dark in enumerate(row):
            if dark:
                image.setPixel(x, y, black)
    return QPixmap.fromImage(image.scaled(size * module_px, size * module_px))


def _refusal_words(exc: Exception) -> tuple[str, str]:
    """(words, the field to correct) for a refusal of the gateway."""
    if isinstance(exc, GatewayRefused) and exc.code in ("approval_refused", "self_approval"):
        outcome = "self_approval" if exc.code == "self_approval" else exc.detail.get("outcome", "wrong_pin")
        return signin_words(outcome, attempts_left=int(exc.detail.get("attempts_left", 0)),
                            locked_s=int(exc.detail.get("locked_s", 0))), (
            "supervisor" if outcome in ("not_supervisor", "self_approval") else "supervisor_pin")
    if isinstance(exc, GatewayRefused):
        outcome = exc.detail.get("outcome", "")
        if outcome == "old_pin_required":
            return translate("MemberSecurity", "The member has a payment PIN: enter the current one first."), "old"
        if outcome == "wrong_pin":
            return translate("MemberSecurity", "Wrong PIN: %1 tries left before a lock.").replace(
                "%1", str(exc.detail.get("attempts_left", 0))), "old"
        if outcome == "locked":
            return translate("MemberSecurity", "The member's payment PIN is locked: a supervisor must reset it "
                                               "first."), "old"
    if isinstance(exc, AccountNotFound):
        return translate("MemberSecurity", "No such member."), ""
    if isinstance(exc, InvalidRequest):
        if exc.field == "pin_again":
            return translate("MemberSecurity", "The two entries of the new PIN differ."), "again"
        return translate("MemberSecurity", "Not accepted (%1).").replace("%1", f"{exc.field}: {exc.reason}"), ""
    return translate("MemberSecurity", "The central server did not answer: try again."), ""


class MemberPinSetDialog(TillDialog):
    """The member's new payment PIN, entered twice (and the current one when they have
    one): `done_for(account_id)` once the gateway stored it."""
    done_for = Signal(str)

    def __init__(self, engine, account_id: str, parent=None):
        super().__init__(parent)
        self.setObjectName("memberPinSetDialog")
        self.engine, self.account_id = engine, account_id
        self.about = QLabel(objectName="memberPinSetAbout", wordWrap=True)
        self.old_input = self._pin_field("memberPinOldInput")
        self.new_input = self._pin_field("memberPinNewInput")
        self.again_input = self._pin_field("memberPinAgainInput")
        self.old_label, self.new_label, self.again_label = QLabel(), QLabel(), QLabel()
        form = QFormLayout()
        form.addRow(self.old_label, self.old_input)
        form.addRow(self.new_label, self.new_input)
        form.addRow(self.again_label, self.again_input)
        self.message = QLabel(objectName="memberPinSetMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="memberPinSetConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="memberPinSetCancelButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        self.keypad = Keypad(lambda: self.focused_line_edit(self.new_input), with_point=False)
        self.keypad_layout(self.about, form, buttons=self.button_row(), min_width_px=480)
        self.new_input.setFocus()
        self.retranslate()

    @staticmethod
    def _pin_field(name: str) -> QLineEdit:
        field = QLineEdit(objectName=name, echoMode=QLineEdit.EchoMode.Password)
        field.setMaxLength(MEMBER_PIN_DIGITS)
        field.setInputMethodHints(Qt.InputMethodHint.ImhDigitsOnly | Qt.InputMethodHint.ImhSensitiveData)
        return field

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Member's payment PIN"))
        self.about.setText(self.tr("Member %1: please ask the member to enter a new %2-digit payment PIN twice "
                                   "(and their current PIN if they have one).")
                           .replace("%1", self.account_id).replace("%2", str(MEMBER_PIN_DIGITS)))
        self.old_label.setText(self.tr("Current PIN (if set)"))
        self.new_label.setText(self.tr("New PIN"))
        self.again_label.setText(self.tr("New PIN again"))
        self.confirm_button.setText(self.tr("Set PIN"))
        self.cancel_button.setText(self.tr("Cancel"))

    def first_field(self):
        return self.new_input

    def _clear(self) -> None:
        for field in (self.old_input, self.new_input, self.again_input):
            field.clear()

    def confirm(self) -> None:
        if self._busy:
            return
        old, new, again = self.old_input.text(), self.new_input.text(), self.again_input.text()
        for field, value in ((self.new_input, new), (self.again_input, again)):
            if len(value) != MEMBER_PIN_DIGITS or not (value.isascii() and value.isdigit()):
                self.fail(self.tr("The payment PIN is %1 digits.").replace("%1", str(MEMBER_PIN_DIGITS)), field)
                return
        if new != again:
            self.again_input.clear()
            self.fail(self.tr("The two entries of the new PIN differ."), self.again_input)
            return
        self._clear()                                   # the PINs stay in no widget
        self._busy = True
        self.confirm_button.setEnabled(False)
        self.message.setText(self.tr("Saving…"))

        def saved(_answer) -> None:
            self._busy = False
            self.confirm_button.setEnabled(True)
            self.accept()
            self.done_for.emit(self.account_id)

        def failed(exc: Exception) -> None:
            self._busy = False
            self.confirm_button.setEnabled(True)
            words, field = _refusal_words(exc)
            self.fail(words, self.old_input if field == "old" else self.new_input)
        self.engine.set_member_pin(self.account_id, new, again, old or None, saved, failed)


class MemberCodeEnrolDialog(TillDialog):
    """A supervisor enrols the member's member code; the QR is shown once (`qr_label`).
    `reset`: the supervisor resets the member's payment PIN and its lock instead
    (MemberPinResetDialog)."""
    reset = False

    def __init__(self, engine, account_id: str, parent=None, *, not_allowed: tuple[str, ...] = ()):
        super().__init__(parent)
        self.setObjectName("memberPinResetDialog" if self.reset else "memberCodeEnrolDialog")
        self.engine, self.account_id, self.not_allowed = engine, account_id, not_allowed
        self.enrolled = False
        self.about = QLabel(objectName="memberCodeAbout", wordWrap=True)
        self.supervisor = SupervisorFields()
        self.supervisor_input, self.pin_input = self.supervisor.supervisor_input, self.supervisor.pin_input
        form = QFormLayout()
        self.supervisor.add_to(form)
        self.qr_label = QLabel(objectName="memberCodeQr", alignment=Qt.AlignmentFlag.AlignCenter)
        self.qr_label.setVisible(False)
        self.message = QLabel(objectName="memberCodeMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="memberCodeConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="memberCodeCancelButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        self.keypad = Keypad(lambda: self.focused_line_edit(self.pin_input), with_point=False)
        self.keypad_layout(self.about, form, self.qr_label, buttons=self.button_row(), min_width_px=480)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Member code"))
        self.supervisor.set_labels(self.tr("Supervisor id"), self.tr("Supervisor PIN"))
        self.cancel_button.setText(self.tr("Cancel"))
        if self.reset:
            self.setWindowTitle(self.tr("Reset the member's payment PIN"))
            self.about.setText(self.tr("Member %1: a supervisor removes the member's payment PIN and lifts the lock "
                                       "after wrong PINs or codes; the member then sets a new PIN.")
                               .replace("%1", self.account_id))
            self.confirm_button.setText(self.tr("Reset PIN"))
            return
        if self.enrolled:
            self.about.setText(self.tr("Member %1: ask the member to scan this QR code with their authenticator "
                                       "app now. It is shown this once.").replace("%1", self.account_id))
            self.confirm_button.setText(self.tr("Done"))
        else:
            self.about.setText(self.tr("Member %1: a supervisor enrols the member's dynamic member code (会员码). "
                                       "Enrolling again replaces an earlier one.").replace("%1", self.account_id))
            self.confirm_button.setText(self.tr("Enrol"))

    def confirm(self) -> None:
        if self.enrolled:
            self.accept()
            return
        if self._busy:
            return
        supervisor_id, pin = self.supervisor_input.text().strip(), self.pin_input.text()
        self.pin_input.clear()
        if not supervisor_id or not pin:
            self.fail(self.tr("A supervisor's id and PIN are needed."),
                      self.supervisor_input if not supervisor_id else self.pin_input)
            return
        if supervisor_id in self.not_allowed:
            self.fail(self.tr("Another supervisor must approve this."), self.supervisor_input)
            return
        self._busy = True
        self.confirm_button.setEnabled(False)
        self.message.setText(self.tr("Checking the supervisor PIN…"))

        def enrolled(answer) -> None:
            self._busy = False
            self.confirm_button.setEnabled(True)
            self.enrolled = True
            self.supervisor.set_visible(False)
            self.keypad.setVisible(False)
            self.qr_label.setPixmap(qr_pixmap(answer["otpauth_uri"]))     # the URI is kept nowhere else
            self.qr_label.setVisible(True)
            self.message.clear()
            self.cancel_button.setVisible(False)
            self.retranslate()
            self.adjustSize()

        def failed(exc: Exception) -> None:
            self._busy = False
            self.confirm_button.setEnabled(True)
            words, field = _refusal_words(exc)
            self.fail(words, self.supervisor_input if field == "supervisor" else self.pin_input)
        if self.reset:
            self.engine.reset_member_pin(self.account_id, supervisor_id, pin, lambda _a: self.accept(), failed)
        else:
            self.engine.enrol_member_code(self.account_id, supervisor_id, pin, enrolled, failed)

    def done(self, result: int) -> None:
        self.qr_label.clear()                            # the secret's QR is shown once
        super().done(result)


class MemberPinResetDialog(MemberCodeEnrolDialog):
    """A supervisor resets the member's payment PIN and lifts the lock (objectName
    memberPinResetDialog)."""
    reset = True
