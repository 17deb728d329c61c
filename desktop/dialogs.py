"""The refund dialog (full or partial, approved by a supervisor's PIN), the top-up
dialog (for cashiers allowed to top up) and the complete-sale dialog (the final
amount of a held sale: all of the hold or less, the rest is released).

The top-up dialog asks how the customer paid and shows the promotion's bonus before
the cashier confirms. A refund needs a supervisor's id and PIN every time: the PIN is checked on a
worker thread and the approval it yields is used up by this one refund
(`SupervisorApproval.use()`), so it can never approve a second action. Both dialogs
check their input inline and hand the operation to the sale screen, which runs it
like a charge (outbox first, same txn id on every retry) or answers why not (a
sale_session.Refusal, shown in the dialog).

Every dialog here is a `TillDialog` (desktop/till_dialog.py: Enter is the default
action, an error keeps the dialog open on the field to correct, Esc cancels). The
refund and top-up dialogs have the on-screen keypad for touch-only tills. TillDialog,
ChoiceButton, ConfirmDialog and SupervisorDialog live in desktop/till_dialog.py and
can still be imported from here.
"""
from __future__ import annotations

from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout

from core import InvalidRequest
from core.members import PAYMENT_METHODS, best_promotion
from core.sales import refund_plan
from core.validation import check_id

from . import money
from .keypad import Keypad
from .outbox import Op
from .sale_session import Refusal
from .supervisor_fields import SupervisorFields
from .texts import amount_error_words, id_error_words, method_words, refusal_words
from .till_dialog import ChoiceButton, ConfirmDialog, SupervisorDialog, TillDialog

__all__ = ["RefundDialog", "TopUpDialog", "CompleteSaleDialog", "TillDialog", "ChoiceButton", "ConfirmDialog",
           "SupervisorDialog"]


class RefundDialog(TillDialog):
    def __init__(self, sale_page, original: Op, parent=None):
        super().__init__(parent)
        self.setObjectName("refundDialog")
        self.sale = sale_page
        self.engine = sale_page.engine
        self.original = original
        self.refundable_minor = max(0, original.amount_minor - self.engine.outbox.refunded_minor(original.txn_id))
        # a split-tender sale (issue 31): what each tender has left ({'card': ..., 'cash': ...});
        # by default each goes back where it came from, in proportion (core.sales.refund_plan)
        self.split_left: dict[str, int] | None = None
        if original.kind == "sale":
            given = self.engine.outbox.split_refunded(original.txn_id)
            paid = {"card": original.amount_minor, **original.details.get("tenders", {})}
            self.set_split_left({t: paid[t] - given.get(t, 0) for t in paid})
        self.summary = QLabel(objectName="refundSummary", wordWrap=True)
        self.amount_input = QLineEdit(money.format_plain(self.refundable_minor), objectName="refundAmountInput")
        self.amount_input.setMaxLength(money.MAX_AMOUNT_TEXT_LEN)
        self.supervisor = SupervisorFields()
        self.supervisor_input, self.pin_input = self.supervisor.supervisor_input, self.supervisor.pin_input
        self.message = QLabel(objectName="refundMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="refundConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="refundCancelButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        self.keypad = Keypad(lambda: self.focused_line_edit(self.amount_input))
        self.amount_label = QLabel()
        form = QFormLayout()
        form.addRow(self.amount_label, self.amount_input)
        self.supervisor.add_to(form)
        buttons = self.button_row()
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(self.keypad)
        layout.addLayout(buttons)
        self.setMinimumWidth(520)
        self.retranslate()

    def set_split_left(self, left: dict[str, int]) -> None:
        """What each tender of the split sale has left to give back."""
        self.split_left = {t: max(0, a) for t, a in left.items()}
        self.refundable_minor = sum(self.split_left.values())
        if hasattr(self, "amount_input"):          # (made after this in __init__, with this amount)
            self.amount_input.setText(money.format_plain(self.refundable_minor))

    def retranslate(self) -> None:
        loc = QLocale()
        self.setWindowTitle(self.tr("Refund"))
        self.summary.setText(
            self.tr("Refund of the charge of %1 to account %2. At most %3 can still be refunded.")
            .replace("%1", money.format_minor(self.original.amount_minor, loc))
            .replace("%2", self.original.account_id)
            .replace("%3", money.format_minor(self.refundable_minor, loc)))
        if self.split_left is not None:
            card_words = self.tr("card")
            left = " · ".join(f"{card_words if t == 'card' else method_words(t)} {money.format_minor(a, loc)}"
                              for t, a in self.split_left.items())
            self.summary.setText(
                self.tr("Refund of a card + other payment of account %1. Left to refund: %2. Each part goes "
                        "back where it came from (the card to the card, cash as cash), in proportion.")
                .replace("%1", self.original.account_id).replace("%2", left))
        self.amount_label.setText(self.tr("Amount to refund"))
        self.supervisor.set_labels(self.tr("Supervisor id"), self.tr("Supervisor PIN"))
        self.confirm_button.setText(self.tr("Refund"))
        self.cancel_button.setText(self.tr("Cancel"))

    def confirm(self) -> None:
        try:
            amount_minor = money.parse_amount_minor(self.amount_input.text(),
                                                    decimal_point=QLocale().decimalPoint())
        except money.AmountError as exc:
            self.fail(amount_error_words(exc.reason), self.amount_input)
            return
        if amount_minor > self.refundable_minor:
            self.fail(self.tr("Amount: at most %1 can be refunded")
                      .replace("%1", money.format_minor(self.refundable_minor, QLocale())), self.amount_input)
            return
        # four eyes: the supervisor at the till cannot approve their own refund
        own = (self.sale.cashier.cashier_id,) if self.sale.cashier is not None else ()
        self.ask_supervisor(self.engine, self.supervisor,
                            lambda supervisor_id: self._approved(amount_minor, supervisor_id), not_allowed=own,
                            not_allowed_text=self.tr("A supervisor cannot approve their own refund: "
                                                     "ask another supervisor."))

    def _approved(self, amount_minor: int, approved_by: str) -> None:
        if self.split_left is not None:
            # one row, one approval: the card's part and each tender's (engine _send_tender_refund)
            left = self.split_left
            plan = refund_plan(left.get("card", 0), {t: a for t, a in left.items() if t != "card"}, amount_minor)
            detail = {"card_minor": plan.get("card", 0), "tenders": {t: a for t, a in plan.items() if t != "card"}}
            started = self.sale.try_operation("tender_refund", self.original.account_id, amount_minor,
                                              original_txn_id=self.original.txn_id, approved_by=approved_by,
                                              detail=detail)
        else:
            started = self.sale.try_operation("refund", self.original.account_id, amount_minor,
                                              original_txn_id=self.original.txn_id, approved_by=approved_by)
        if isinstance(started, Refusal):
            self.fail(refusal_words(started.reason), self.amount_input)
            return
        self.accept()


class TopUpDialog(TillDialog):
    """Top up: account, amount, how the customer paid (cash, WeChat Pay, Alipay, bank
    card, other: one tap each) and, as the amount is typed, the promotion's bonus that
    will be booked with it. The shop's promotions are read when the dialog opens; a
    Top up pressed before they are known waits for them, and a bonus the cashier has
    not seen yet is shown first and needs Top up once more: a bonus is never booked
    without having been shown, nor shown and not booked."""

    def __init__(self, sale_page, account_id: str = "", parent=None):
        super().__init__(parent)
        self.setObjectName("topUpDialog")
        self.sale = sale_page
        self.promotions: list | None = None       # None: not read yet (or the read failed)
        self._bonus_shown: tuple[int, int] | None = None   # (amount, bonus) on screen now
        self._confirm_waiting = False             # Top up pressed before the promotions were known
        methods, self.method_buttons = self.choice_row(PAYMENT_METHODS, "topUpMethod_", "cash")
        self.bonus_label = QLabel(objectName="topUpBonus", wordWrap=True)
        # two lines always laid out: the bonus arrives after the dialog is shown, nothing moves
        self.bonus_label.setMinimumHeight(2 * self.bonus_label.fontMetrics().lineSpacing() + 4)
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
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        self.keypad = Keypad(lambda: self.focused_line_edit(self.amount_input))
        self.keypad.setMinimumHeight(330)      # four rows of finger-sized keys (the method row squeezed them)
        self.account_label, self.amount_label, self.method_label = QLabel(), QLabel(), QLabel()
        form = QFormLayout()
        form.addRow(self.account_label, self.account_input)
        form.addRow(self.amount_label, self.amount_input)
        form.addRow(self.method_label, methods)
        buttons = self.button_row()
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addLayout(form)
        layout.addWidget(self.bonus_label)
        layout.addWidget(self.message)
        layout.addWidget(self.keypad)
        layout.addLayout(buttons)
        self.setMinimumWidth(560)
        if account_id:
            self.amount_input.setFocus()
        self.amount_input.textChanged.connect(lambda _t: self._show_bonus())
        self.retranslate()
        self.sale.engine.promotions(self._promotions_read, self._promotions_failed)

    @property
    def method(self) -> str:
        return self.checked_choice(self.method_buttons)

    def _promotions_read(self, promotions) -> None:
        self.promotions = list(promotions)
        self._show_bonus()
        if self._confirm_waiting and self.isVisible():
            self._confirm_waiting = False
            self.confirm()

    def _promotions_failed(self, _exc) -> None:
        self.promotions = None
        if self._confirm_waiting:
            self._confirm_waiting = False
            self.fail(self.tr("The promotions cannot be read now: the top-up was not made."), self.amount_input)
        self.bonus_label.setText(self.tr("The promotions cannot be read now (no connection to the central "
                                         "server): try again in a moment."))

    def bonus_minor(self, amount_minor: int) -> int:
        """The bonus the shop's promotions give a top-up of `amount_minor` (0: none)."""
        promo = best_promotion(amount_minor, self.promotions or [])
        return promo.bonus_minor if promo is not None else 0

    def _show_bonus(self) -> None:
        self._bonus_shown = None
        if self.promotions is None:
            self.bonus_label.setText(self.tr("Reading the promotions…"))
            return
        try:
            amount_minor = money.parse_amount_minor(self.amount_input.text(), decimal_point=QLocale().decimalPoint())
        except money.AmountError:
            self.bonus_label.setText("")
            return
        loc = QLocale()
        bonus = self.bonus_minor(amount_minor)
        self._bonus_shown = (amount_minor, bonus)
        if bonus:
            self.bonus_label.setText(self.tr("Bonus %1 (promotion): the account gets %2, of which %1 is bonus "
                                             "(spendable, never paid out).")
                                     .replace("%1", money.format_minor(bonus, loc))
                                     .replace("%2", money.format_minor(amount_minor + bonus, loc)))
        else:
            self.bonus_label.setText(self.tr("No promotion for this amount."))

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Top up"))
        self.hint.setText(self.tr("Take the customer's money first, then top up the account."))
        self.account_label.setText(self.tr("Account"))
        self.amount_label.setText(self.tr("Amount"))
        self.method_label.setText(self.tr("Paid by"))
        for method, b in self.method_buttons.items():
            b.setText(method_words(method))
        self._show_bonus()
        self.choice_changed()
        self.cancel_button.setText(self.tr("Cancel"))

    def choice_changed(self) -> None:
        self.confirm_button.setText(self.with_choice(self.tr("Top up"), method_words(self.method)))

    def confirm(self) -> None:
        account_id = self.account_input.text().strip()
        try:
            check_id(account_id, "account_id")
        except InvalidRequest as exc:
            self.fail(id_error_words(self.tr("Account"), exc.reason), self.account_input)
            return
        try:
            amount_minor = money.parse_amount_minor(self.amount_input.text(),
                                                    decimal_point=QLocale().decimalPoint())
        except money.AmountError as exc:
            self.fail(amount_error_words(exc.reason), self.amount_input)
            return
        if self.promotions is None:
            self._confirm_waiting = True          # confirmed again once they are known
            self.message.setText(self.tr("Reading the promotions…"))
            return
        bonus, method = self.bonus_minor(amount_minor), self.method
        if bonus and self._bonus_shown != (amount_minor, bonus):
            self._show_bonus()
            self.fail(self.tr("This top-up gets a bonus of %1: check it with the customer, then press "
                              "Top up again.").replace("%1", money.format_minor(bonus, QLocale())),
                      self.amount_input)
            return
        self.sale.confirm_large(amount_minor, lambda: self._start(account_id, amount_minor, method, bonus),
                                parent=self)

    def _start(self, account_id: str, amount_minor: int, method: str = "cash", bonus_minor: int = 0) -> None:
        started = self.sale.try_operation("credit", account_id, amount_minor, method=method,
                                          bonus_minor=bonus_minor)
        if isinstance(started, Refusal):
            self.fail(refusal_words(started.reason), self.amount_input)
            return
        self.accept()


class CompleteSaleDialog(TillDialog):
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
        self.quiet_buttons(self.confirm_button, self.cancel_button)
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
        self.setMinimumWidth(560)
        self.amount_input.textChanged.connect(self._update_preview)
        self.retranslate()

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
            self.fail(amount_error_words(exc.reason), self.amount_input)
            return
        if final_minor > self.hold.amount_minor:
            self.fail(self.tr("Amount: at most %1 (the hold)")
                      .replace("%1", money.format_minor(self.hold.amount_minor, QLocale())), self.amount_input)
            return
        self.sale.confirm_large(final_minor, lambda: self._start(final_minor), parent=self)

    def _start(self, final_minor: int) -> None:
        started = self.sale.try_operation("capture", self.hold.account_id, final_minor,
                                          original_txn_id=self.hold.txn_id)
        if isinstance(started, Refusal):
            self.fail(refusal_words(started.reason), self.amount_input)
            return
        self.accept()
