"""The split-tender dialog (issue 31): one sale paid partly by the member's card and the
rest by cash, WeChat Pay, Alipay, bank card or other, sent as ONE ledger operation (kind
`sale`, core/lua/sale.lua): the card leg and the other tender are recorded together, or,
when the card leg is declined, nothing is, and the screen says what the customer still
owes (the whole bill). There is no state in which the card was charged and the rest is
left open: a sale abandoned after it was sent is still one record of all its tenders.

Keyboard first: on the sale screen F1 opens it with the rest in cash, Insert with the rest
by WeChat Pay (the bill typed in the amount field, the member on screen); the card pays
its available balance (or less: the cashier types the card's part). For cash the amount
handed over is typed (it starts at the rest: exact money is just Enter) and the change
is shown large; Enter pays, Esc goes back to the sale. The other methods are one tap (or
Tab and Space) away.
"""
from __future__ import annotations

from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QFormLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout

from core.sales import TENDER_METHODS

from . import money
from .receipts.model import mask_name
from .sale_session import Refusal
from .texts import amount_error_words, method_words, refusal_words
from .till_dialog import TillDialog



class SplitTenderDialog(TillDialog):
    """Card + another tender for the bill `bill_minor` of the member `view` (an
    engine_reads.AccountView on the sale screen). `method`: the rest's tender to start with."""

    def __init__(self, sale_page, view, bill_minor: int, method: str = "cash", parent=None):
        super().__init__(parent)
        self.setObjectName("splitTenderDialog")
        self.sale = sale_page
        self.view = view
        self.bill_minor = bill_minor
        available = max(0, view.available_minor)
        self.card_default_minor = min(available, bill_minor - 1) if bill_minor > 1 else 0
        methods, self.method_buttons = self.choice_row(TENDER_METHODS, "splitMethod_", method)
        self.summary = QLabel(objectName="splitSummary", wordWrap=True)
        self.card_label = QLabel()
        self.card_input = QLineEdit(money.format_plain(self.card_default_minor), objectName="splitCardInput")
        self.card_input.setMaxLength(money.MAX_AMOUNT_TEXT_LEN)
        self.card_input.textEdited.connect(lambda _t: self._update())
        # the rest, the cash handed over and the change are large by the style sheet (desktop/style.py:
        # a font set here would lose to its 16 px for every QWidget)
        self.rest_label = QLabel(objectName="splitRest")
        self.tendered_label = QLabel()
        self.tendered_input = QLineEdit(objectName="splitTenderedInput")
        self.tendered_input.setMaxLength(money.MAX_AMOUNT_TEXT_LEN)
        self.tendered_input.textEdited.connect(lambda _t: self._update(typed=True))
        self.change_label = QLabel(objectName="splitChange")
        self.message = QLabel(objectName="splitMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="splitConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="splitCancelButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        form = QFormLayout()
        form.addRow(self.card_label, self.card_input)
        form.addRow(self.tendered_label, self.tendered_input)
        buttons = self.button_row()
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(methods)
        layout.addLayout(form)
        layout.addWidget(self.rest_label)
        layout.addWidget(self.change_label)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.setMinimumWidth(560)
        self._tendered_typed = False
        self.retranslate()
        self._update()

    # ---------------------------------------------------------------- state

    def method(self) -> str:
        return self.checked_choice(self.method_buttons)

    def choice_changed(self) -> None:
        self._update()

    def card_minor(self) -> int | None:
        try:
            return money.parse_amount_minor(self.card_input.text(), decimal_point=QLocale().decimalPoint())
        except money.AmountError:
            return None

    def tendered_minor(self) -> int | None:
        try:
            return money.parse_amount_minor(self.tendered_input.text(), decimal_point=QLocale().decimalPoint())
        except money.AmountError:
            return None

    def rest_minor(self) -> int | None:
        card = self.card_minor()
        return None if card is None else self.bill_minor - card

    def _update(self, *, typed: bool = False) -> None:
        """The rest, the cash field (cash only) and the change, as the cashier types."""
        loc = QLocale()
        self._tendered_typed = self._tendered_typed or typed
        rest = self.rest_minor()
        cash = self.method() == "cash"
        self.tendered_input.setVisible(cash)
        self.tendered_label.setVisible(cash)
        self.change_label.setVisible(cash)
        if rest is None or rest <= 0:
            self.rest_label.setText("")
            self.change_label.setText("")
            return
        self.rest_label.setText(self.tr("Rest by %1: %2").replace("%1", method_words(self.method()))
                                .replace("%2", money.format_minor(rest, loc)))
        if cash and not self._tendered_typed:
            self.tendered_input.setText(money.format_plain(rest))      # exact money: just Enter
        tendered = self.tendered_minor()
        if cash and tendered is not None and tendered >= rest:
            self.change_label.setText(self.tr("Change %1").replace("%1", money.format_minor(tendered - rest, loc)))
        elif cash:
            self.change_label.setText(self.tr("Change —"))

    def retranslate(self) -> None:
        loc = QLocale()
        self.setWindowTitle(self.tr("Card + other payment"))
        self.summary.setText(self.tr("Bill %1 for account %2. The card has %3 available.")
                             .replace("%1", money.format_minor(self.bill_minor, loc))
                             .replace("%2", self.view.account_id)
                             .replace("%3", money.format_minor(max(0, self.view.available_minor), loc)))
        for method, b in self.method_buttons.items():
            b.setText(method_words(method))
        self.card_label.setText(self.tr("From the card"))
        self.tendered_label.setText(self.tr("Cash handed over"))
        self.confirm_button.setText(self.tr("Pay  (Enter)"))
        self.cancel_button.setText(self.tr("Back  (Esc)"))
        self._update()

    def first_field(self):
        return self.tendered_input if self.method() == "cash" else self.card_input

    # ---------------------------------------------------------------- pay

    def confirm(self) -> None:
        loc = QLocale()
        card = self.card_minor()
        if card is None or card <= 0:
            self.fail(self.tr("From the card: type an amount above zero (the card pays part of the bill)"),
                      self.card_input)
            return
        if card >= self.bill_minor:
            self.fail(self.tr("From the card: less than the bill %1 (the card alone: Charge, F12)")
                      .replace("%1", money.format_minor(self.bill_minor, loc)), self.card_input)
            return
        rest = self.bill_minor - card
        method = self.method()
        change = 0
        if method == "cash":
            try:
                tendered = money.parse_amount_minor(self.tendered_input.text(), decimal_point=loc.decimalPoint())
            except money.AmountError as exc:
                self.fail(amount_error_words(exc.reason), self.tendered_input)
                return
            if tendered < rest:
                self.fail(self.tr("Cash handed over: at least the rest, %1").replace("%1", money.format_minor(rest, loc)),
                          self.tendered_input)
                return
            change = tendered - rest
        detail = {"tenders": {method: rest}, "total_minor": self.bill_minor, "change_minor": change}
        if self.view.holder_name:
            detail["member"] = mask_name(self.view.holder_name)       # the slip names the member, masked
        started = self.sale.try_operation("sale", self.view.account_id, card, card_no=self.view.card_no,
                                          detail=detail)
        if isinstance(started, Refusal):
            self.fail(refusal_words(started.reason), self.card_input)
            return
        self.accept()
