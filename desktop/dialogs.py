"""The refund dialog (full or partial, approved by a supervisor's PIN), the top-up
dialog (for cashiers allowed to top up) and the complete-sale dialog (the final
amount of a held sale: all of the hold or less, the rest is released).

A refund needs a supervisor's id and PIN every time: the PIN is checked on a
worker thread and the approval it yields is used up by this one refund
(`SupervisorApproval.use()`), so it can never approve a second action. Both dialogs
check their input inline and hand the operation to the sale screen, which runs it
like a charge (outbox first, same txn id on every retry).
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QLocale
from PySide6.QtWidgets import (QDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton,
                               QVBoxLayout)

from core import InvalidRequest
from core.cashiers import check_pin
from core.validation import check_id

from . import money
from .keypad import Keypad
from .outbox import Op
from .texts import amount_error_words, id_error_words, pin_error_words, signin_words


class RefundDialog(QDialog):
    def __init__(self, sale_page, original: Op, parent=None):
        super().__init__(parent)
        self.setObjectName("refundDialog")
        self.sale = sale_page
        self.engine = sale_page.engine
        self.original = original
        self.refundable_minor = max(0, original.amount_minor - self.engine.outbox.refunded_minor(original.txn_id))
        self._busy = False
        self.summary = QLabel(objectName="refundSummary", wordWrap=True)
        self.amount_input = QLineEdit(money.format_plain(self.refundable_minor), objectName="refundAmountInput")
        self.amount_input.setMaxLength(money.MAX_AMOUNT_TEXT_LEN)
        self.supervisor_input = QLineEdit(objectName="supervisorInput")
        self.supervisor_input.setMaxLength(64)
        self.pin_input = QLineEdit(objectName="supervisorPinInput", echoMode=QLineEdit.EchoMode.Password)
        self.pin_input.setMaxLength(12)
        self.message = QLabel(objectName="refundMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="refundConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="refundCancelButton", clicked=self.reject)
        self.amount_label, self.supervisor_label, self.pin_label = QLabel(), QLabel(), QLabel()
        form = QFormLayout()
        form.addRow(self.amount_label, self.amount_input)
        form.addRow(self.supervisor_label, self.supervisor_input)
        form.addRow(self.pin_label, self.pin_input)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.confirm_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.setMinimumWidth(520)
        self.pin_input.returnPressed.connect(self.confirm)
        self.retranslate()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        loc = QLocale()
        self.setWindowTitle(self.tr("Refund"))
        self.summary.setText(
            self.tr("Refund of the charge of %1 to account %2. At most %3 can still be refunded.")
            .replace("%1", money.format_minor(self.original.amount_minor, loc))
            .replace("%2", self.original.account_id)
            .replace("%3", money.format_minor(self.refundable_minor, loc)))
        self.amount_label.setText(self.tr("Amount to refund"))
        self.supervisor_label.setText(self.tr("Supervisor id"))
        self.pin_label.setText(self.tr("Supervisor PIN"))
        self.confirm_button.setText(self.tr("Refund"))
        self.cancel_button.setText(self.tr("Cancel"))

    def confirm(self) -> None:
        if self._busy:
            return
        try:
            amount_minor = money.parse_amount_minor(self.amount_input.text(),
                                                    decimal_point=QLocale().decimalPoint())
        except money.AmountError as exc:
            self.message.setText(amount_error_words(exc.reason))
            return
        if amount_minor > self.refundable_minor:
            self.message.setText(self.tr("Amount: at most %1 can be refunded")
                                 .replace("%1", money.format_minor(self.refundable_minor, QLocale())))
            return
        supervisor_id = self.supervisor_input.text().strip()
        try:
            check_id(supervisor_id, "supervisor_id")
        except InvalidRequest as exc:
            self.message.setText(id_error_words(self.tr("Supervisor id"), exc.reason))
            return
        pin = self.pin_input.text()
        self.pin_input.clear()
        try:
            check_pin(pin)
        except InvalidRequest as exc:
            self.message.setText(pin_error_words(exc.reason))
            return
        self._busy = True
        self.confirm_button.setEnabled(False)
        self.message.setText(self.tr("Checking the supervisor PIN…"))
        self.engine.approve(supervisor_id, pin, lambda answer: self._approved(amount_minor, answer),
                            self._approval_failed)

    def _approved(self, amount_minor: int, answer) -> None:
        self._busy = False
        self.confirm_button.setEnabled(True)
        signin, approval = answer
        if approval is None:
            self.message.setText(signin_words(signin.outcome, attempts_left=signin.attempts_left,
                                              locked_s=signin.locked_s))
            return
        approved_by = approval.use()          # one approval, one refund
        op = self.sale.start_operation("refund", self.original.account_id, amount_minor,
                                       original_txn_id=self.original.txn_id, approved_by=approved_by)
        if op is None:
            self.message.setText(self.sale.result_label.text())
            return
        self.accept()

    def _approval_failed(self, exc: Exception) -> None:
        self._busy = False
        self.confirm_button.setEnabled(True)
        self.message.setText(signin_words("offline"))


class TopUpDialog(QDialog):
    def __init__(self, sale_page, account_id: str = "", parent=None):
        super().__init__(parent)
        self.setObjectName("topUpDialog")
        self.sale = sale_page
        self.account_input = QLineEdit(account_id, objectName="topUpAccountInput")
        self.account_input.setMaxLength(64)
        self.amount_input = QLineEdit(objectName="topUpAmountInput")
        self.amount_input.setMaxLength(money.MAX_AMOUNT_TEXT_LEN)
        self.message = QLabel(objectName="topUpMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.hint = QLabel(wordWrap=True)
        self.confirm_button = QPushButton(objectName="topUpConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="topUpCancelButton", clicked=self.reject)
        self.account_label, self.amount_label = QLabel(), QLabel()
        form = QFormLayout()
        form.addRow(self.account_label, self.account_input)
        form.addRow(self.amount_label, self.amount_input)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.confirm_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.setMinimumWidth(480)
        self.amount_input.returnPressed.connect(self.confirm)
        self.retranslate()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Top up"))
        self.hint.setText(self.tr("Take the customer's money first, then top up the account."))
        self.account_label.setText(self.tr("Account"))
        self.amount_label.setText(self.tr("Amount"))
        self.confirm_button.setText(self.tr("Top up"))
        self.cancel_button.setText(self.tr("Cancel"))

    def confirm(self) -> None:
        account_id = self.account_input.text().strip()
        try:
            check_id(account_id, "account_id")
        except InvalidRequest as exc:
            self.message.setText(id_error_words(self.tr("Account"), exc.reason))
            return
        try:
            amount_minor = money.parse_amount_minor(self.amount_input.text(),
                                                    decimal_point=QLocale().decimalPoint())
        except money.AmountError as exc:
            self.message.setText(amount_error_words(exc.reason))
            return
        if self.sale.start_operation("credit", account_id, amount_minor) is None:
            self.message.setText(self.sale.result_label.text())
            return
        self.accept()


class CompleteSaleDialog(QDialog):
    """Complete a held sale: the final amount (pre-filled with the amount typed on the
    sale screen when it fits the hold, else the whole hold), at most the held amount;
    the rest of the hold is released by the same capture."""

    def __init__(self, sale_page, hold: Op, parent=None):
        super().__init__(parent)
        self.setObjectName("completeSaleDialog")
        self.sale = sale_page
        self.hold = hold
        typed = sale_page.typed_amount_minor()
        prefill = typed if typed is not None and typed <= hold.amount_minor else hold.amount_minor
        self.summary = QLabel(objectName="completeSummary", wordWrap=True)
        self.amount_input = QLineEdit(money.format_plain(prefill), objectName="completeAmountInput")
        self.amount_input.setMaxLength(money.MAX_AMOUNT_TEXT_LEN)
        self.preview = QLabel(objectName="completePreview", wordWrap=True)
        self.message = QLabel(objectName="completeMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.keypad = Keypad(lambda: self.amount_input)
        self.keypad.setMinimumHeight(330)      # four rows of finger-sized keys
        self.confirm_button = QPushButton(objectName="completeConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "charge")
        self.cancel_button = QPushButton(objectName="completeCancelButton", clicked=self.reject)
        self.amount_label = QLabel()
        form = QFormLayout()
        form.addRow(self.amount_label, self.amount_input)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button, 1)
        buttons.addWidget(self.confirm_button, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(form)
        layout.addWidget(self.preview)
        layout.addWidget(self.message)
        layout.addWidget(self.keypad)
        layout.addLayout(buttons)
        self.setMinimumSize(560, 660)      # word-wrapped labels make Qt under-estimate the height
        self.amount_input.returnPressed.connect(self.confirm)
        self.amount_input.textChanged.connect(self._update_preview)
        self.retranslate()

    def changeEvent(self, event) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        loc = QLocale()
        self.setWindowTitle(self.tr("Complete sale"))
        self.summary.setText(
            self.tr("Hold of %1 on account %2. Enter the final amount: at most the hold; "
                    "the rest goes back to the account.")
            .replace("%1", money.format_minor(self.hold.amount_minor, loc))
            .replace("%2", self.hold.account_id))
        self.amount_label.setText(self.tr("Final amount"))
        self.confirm_button.setText(self.tr("Complete sale"))
        self.cancel_button.setText(self.tr("Cancel"))
        self._update_preview()

    def _final_minor(self) -> int:
        """The typed final amount; raises money.AmountError."""
        return money.parse_amount_minor(self.amount_input.text(), decimal_point=QLocale().decimalPoint())

    def _update_preview(self) -> None:
        self.message.clear()
        try:
            final_minor = self._final_minor()
        except money.AmountError:
            self.preview.clear()
            return
        loc = QLocale()
        if final_minor > self.hold.amount_minor:
            self.preview.clear()
            return
        self.preview.setText(self.tr("Charge %1 · release %2")
                             .replace("%1", money.format_minor(final_minor, loc))
                             .replace("%2", money.format_minor(self.hold.amount_minor - final_minor, loc)))

    def confirm(self) -> None:
        try:
            final_minor = self._final_minor()
        except money.AmountError as exc:
            self.message.setText(amount_error_words(exc.reason))
            return
        if final_minor > self.hold.amount_minor:
            self.message.setText(self.tr("Amount: at most %1 (the hold)")
                                 .replace("%1", money.format_minor(self.hold.amount_minor, QLocale())))
            return
        if self.sale.start_operation("capture", self.hold.account_id, final_minor,
                                     original_txn_id=self.hold.txn_id) is None:
            self.message.setText(self.sale.result_label.text())
            return
        self.accept()
