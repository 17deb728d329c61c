"""The sign-in screen: cashier id and PIN, checked against the shared cashier
registry on a worker thread (scrypt takes ~50 ms and Redis may be slow).

Malformed input gets an inline message naming the field; a wrong PIN, a lock or a
disabled cashier get a sentence, never an exception. The PIN field is cleared after
every attempt and the PIN is never logged.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from core import InvalidRequest
from core.cashiers import Cashier, SignIn, check_pin
from core.validation import check_id

from .keypad import Keypad, beside_keypad
from .texts import id_error_words, pin_error_words, signin_words
from .i18n import Retranslates


class SignInPage(Retranslates, QWidget):
    signedIn = Signal(object)      # core.cashiers.Cashier

    def __init__(self, engine, parent=None):
        super().__init__(parent)
        self.setObjectName("signInPage")
        self.engine = engine
        self._busy = False
        self.title = QLabel(objectName="signInTitle", alignment=Qt.AlignmentFlag.AlignCenter)
        self.cashier_label, self.pin_label = QLabel(), QLabel()
        self.cashier_input = QLineEdit(objectName="cashierInput")
        self.cashier_input.setMaxLength(64)
        self.pin_input = QLineEdit(objectName="pinInput", echoMode=QLineEdit.EchoMode.Password)
        self.pin_input.setMaxLength(12)
        self.sign_in_button = QPushButton(objectName="signInButton", clicked=self.submit)
        self.sign_in_button.setProperty("role", "primary")
        self.message = QLabel(objectName="signInMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.cashier_input.returnPressed.connect(self.pin_input.setFocus)
        self.pin_input.returnPressed.connect(self.submit)
        self.keypad = Keypad(self._keypad_target, with_point=False)

        card = QFrame(objectName="signInCard")
        form = QVBoxLayout(card)
        form.setSpacing(10)
        form.addWidget(self.title)
        form.addWidget(self.cashier_label)
        form.addWidget(self.cashier_input)
        form.addWidget(self.pin_label)
        form.addWidget(self.pin_input)
        form.addWidget(self.message)
        form.addWidget(self.sign_in_button)
        beside_keypad(self, card, self.keypad)
        self.retranslate()

    def _keypad_target(self):
        return self.cashier_input if self.cashier_input.hasFocus() else self.pin_input

    def retranslate(self) -> None:
        self.title.setText(self.tr("Sign in to start selling"))
        self.cashier_label.setText(self.tr("Cashier id"))
        self.pin_label.setText(self.tr("PIN"))
        self.cashier_input.setPlaceholderText(self.tr("Scan your badge or type your id"))
        self.pin_input.setPlaceholderText(self.tr("4 to 12 digits"))
        self.sign_in_button.setText(self.tr("Sign in"))

    def reset(self) -> None:
        self.cashier_input.clear()
        self.pin_input.clear()
        self.message.clear()
        self.cashier_input.setFocus()

    def submit(self) -> None:
        if self._busy:
            return
        cashier_id, pin = self.cashier_input.text().strip(), self.pin_input.text()
        try:
            check_id(cashier_id, "cashier_id")
        except InvalidRequest as exc:
            self.message.setText(id_error_words(self.tr("Cashier id"), exc.reason))
            self.cashier_input.setFocus()
            return
        try:
            check_pin(pin)
        except InvalidRequest as exc:
            self.message.setText(pin_error_words(exc.reason))
            self.pin_input.clear()
            self.pin_input.setFocus()
            return
        self._busy = True
        self.sign_in_button.setEnabled(False)
        self.message.setText(self.tr("Checking…"))
        self.pin_input.clear()
        self.engine.sign_in(cashier_id, pin, self._answered, self._failed)

    def _answered(self, answer: SignIn) -> None:
        self._busy = False
        self.sign_in_button.setEnabled(True)
        if answer.ok:
            self.message.clear()
            self.signedIn.emit(answer.cashier)
            return
        self.message.setText(signin_words(answer.outcome, attempts_left=answer.attempts_left,
                                          locked_s=answer.locked_s))
        self.pin_input.setFocus()

    def _failed(self, exc: Exception) -> None:
        self._busy = False
        self.sign_in_button.setEnabled(True)
        self.message.setText(signin_words("offline"))


__all__ = ["SignInPage", "Cashier"]
