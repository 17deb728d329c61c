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

Every dialog here is a `TillDialog`: Enter anywhere in it runs its default action
(`confirm`), never Cancel, and an error keeps the dialog open with the message shown
and the focus on the field to correct (`fail`). Esc cancels. The refund and top-up
dialogs have the on-screen keypad for touch-only tills. `ConfirmDialog` asks yes or
no (release a hold, a large amount in words); `SupervisorDialog` asks for a
supervisor's id and PIN before an action that needs one (settings, closing another
cashier's shift).
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLocale, Qt, QTimer, Signal
from PySide6.QtWidgets import (QButtonGroup, QDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton,
                               QVBoxLayout, QWidget)

from core import InvalidRequest
from core.cashiers import check_pin
from core.members import PAYMENT_METHODS
from core.validation import check_id

from . import money
from .keypad import Keypad
from .outbox import Op
from .sale_session import Refusal
from .supervisor_fields import SupervisorFields
from .texts import amount_error_words, id_error_words, method_words, pin_error_words, refusal_words, signin_words
from .i18n import Retranslates


ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)
CHECK_MARK = "✓ "


class ChoiceButton(QPushButton):
    """One choice of a row (payment method, card reason). The checked one stands out by
    more than colour: a check mark before its text, bold, a thick border (the style
    sheet's role "choice"), so that Cash and WeChat Pay can be told apart at a glance."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._label = ""
        self.setProperty("role", "choice")
        self.toggled.connect(lambda _on: self._show())

    def setText(self, text: str) -> None:
        self._label = text
        self._show()

    def label(self) -> str:
        """The choice's words, without the check mark."""
        return self._label

    def _show(self) -> None:
        super().setText((CHECK_MARK if self.isChecked() else "") + self._label)


class TillDialog(Retranslates, QDialog):
    """A dialog whose Enter is its default action. Subclasses define `confirm()` and
    `confirm_button`, and report errors with `fail(text, field)`."""

    message: QLabel
    confirm_button: QPushButton
    # Fields a card is scanned into: the scanner's Enter only ends the scan (the field is
    # filled, the cursor moves to the next empty field); Enter once more acts.
    scan_fields: tuple[QLineEdit, ...] = ()

    def button_row(self) -> QHBoxLayout:
        """Cancel then the default action, right-aligned (the same place in every dialog)."""
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.confirm_button)
        return buttons

    def keyPressEvent(self, event) -> None:
        if event.key() in ENTER_KEYS and self._scan_entered(self.focusWidget()):
            event.accept()
            return
        if event.key() in ENTER_KEYS:
            focus = self.focusWidget()
            if isinstance(focus, QPushButton) and focus is not self.confirm_button and not focus.isCheckable():
                focus.click()          # the cashier tabbed to Cancel on purpose (a choice tapped, e.g. the
                                       # payment method, keeps Enter the default action)
            elif self.confirm_button.isEnabled():
                self.confirm()
            event.accept()
            return
        super().keyPressEvent(event)

    def _scan_entered(self, focus) -> bool:
        """Enter in a scan field whose text is new since its last Enter: the end of a scan
        (or of typing the card), never the dialog's action. True when it was taken."""
        if focus not in self.scan_fields or not focus.text().strip():
            return False
        entered = getattr(self, "_scan_texts", {})
        self._scan_texts = entered
        if entered.get(id(focus)) == focus.text():
            return False                      # Enter again on what was scanned: act
        entered[id(focus)] = focus.text()
        nxt = focus.nextInFocusChain()
        while nxt is not None and nxt is not focus:
            if isinstance(nxt, QLineEdit) and nxt.isVisibleTo(self) and nxt.isEnabled() and not nxt.text():
                nxt.setFocus(Qt.FocusReason.TabFocusReason)
                break
            nxt = nxt.nextInFocusChain()
        return True

    def showEvent(self, event) -> None:
        super().showEvent(event)
        QTimer.singleShot(0, self._fit_height)

    def _fit_height(self) -> None:
        # Word-wrapped labels make Qt under-estimate a dialog's height (the keypad's last
        # row was cut off): grow to what the layout needs at the width it got.
        layout = self.layout()
        if layout is None:
            return
        need = layout.totalHeightForWidth(self.width()) if layout.hasHeightForWidth() else \
            layout.totalMinimumSize().height()
        if need > self.height():
            self.resize(self.width(), need)
        self._focus_first()

    def first_field(self) -> QWidget | None:
        """The field that has the cursor when the dialog opens: the first field to type
        in (in tab order), so that typed digits and a scan land there. Dialogs whose
        first input is not a line edit (the pick list) answer it here."""
        widget = self.nextInFocusChain()
        while widget is not None and widget is not self:
            if (isinstance(widget, QLineEdit) and widget.isVisibleTo(self) and widget.isEnabled()
                    and not widget.isReadOnly()):
                return widget
            widget = widget.nextInFocusChain()
        return None

    def _focus_first(self) -> None:
        focus = self.focusWidget()
        first = self.first_field()
        if focus is not None and focus is first:
            return
        if isinstance(focus, QLineEdit) and self.isAncestorOf(focus) and focus.isVisibleTo(self):
            return                     # the dialog chose its field (e.g. the new card)
        if first is not None:
            first.setFocus(Qt.FocusReason.OtherFocusReason)
            if isinstance(first, QLineEdit):
                first.selectAll()      # a prefilled amount is replaced by what is typed
        elif self.confirm_button.isEnabled():
            # Qt gives the focus to the first button when there is no field to type in:
            # that would make Enter mean Cancel. Enter means the default action unless
            # the cashier tabs to Cancel.
            self.confirm_button.setFocus()

    def done(self, result: int) -> None:
        super().done(result)
        # Give the keyboard back to the main window even without a window manager
        # (kiosk tills): its shortcuts and the scanner need it to be the active window.
        owner = self.parentWidget()
        if owner is not None and owner.window().isVisible():
            owner.window().activateWindow()

    def choice_row(self, choices, object_prefix: str, default: str) -> tuple[QHBoxLayout, dict[str, QPushButton]]:
        """One checkable button per choice (payment method, card reason), one of them
        checked (ChoiceButton: marked, not by colour alone): a tap each on touch tills,
        Tab and Space on the keyboard, and Enter still the dialog's default action.
        A change of choice calls `choice_changed()` (the confirm button repeats it)."""
        group = QButtonGroup(self)
        group.setExclusive(True)
        row, buttons = QHBoxLayout(), {}
        for choice in choices:
            b = ChoiceButton(objectName=f"{object_prefix}{choice}", checkable=True)
            b.setAutoDefault(False)
            group.addButton(b)
            buttons[choice] = b
            row.addWidget(b)
        buttons[default].setChecked(True)
        group.buttonToggled.connect(lambda _b, on: on and self.choice_changed())
        return row, buttons

    def choice_changed(self) -> None:
        """A choice row's choice changed (subclasses repeat it where the cashier confirms)."""

    @staticmethod
    def with_choice(action: str, choice: str) -> str:
        """The confirm button's text with the choice it confirms, e.g. "Top up · Cash"."""
        return f"{action}  ·  {choice}"

    @staticmethod
    def checked_choice(buttons: dict[str, QPushButton]) -> str:
        return next(choice for choice, b in buttons.items() if b.isChecked())

    def quiet_buttons(self, *buttons: QPushButton) -> None:
        # QDialog would click an "auto default" button on Enter, in its own order
        # (Cancel came first): the dialog's keyPressEvent decides instead.
        for b in buttons:
            b.setAutoDefault(False)
            b.setDefault(False)

    def fail(self, text: str, field: QWidget | None = None) -> None:
        """Show `text` and put the cursor in `field` (the one to correct)."""
        self.message.setText(text)
        if field is not None:
            field.setFocus()
            if isinstance(field, QLineEdit):
                field.selectAll()

    _busy = False

    def ask_supervisor(self, engine, fields: SupervisorFields, on_approved, *,
                       not_allowed: tuple[str, ...] = (), not_allowed_text: str = "") -> None:
        """Check the supervisor id and PIN typed in `fields` (inline errors; the PIN on a
        worker thread), then `on_approved(supervisor_id)`: the approval is used up by
        that one action. `not_allowed` ids are refused with `not_allowed_text`."""
        if self._busy:
            return
        supervisor_input, pin_input = fields.supervisor_input, fields.pin_input
        supervisor_id = supervisor_input.text().strip()
        try:
            check_id(supervisor_id, "supervisor_id")
        except InvalidRequest as exc:
            self.fail(id_error_words(QCoreApplication.translate("TillDialog", "Supervisor id"), exc.reason), supervisor_input)
            return
        if supervisor_id in not_allowed:
            pin_input.clear()
            self.fail(not_allowed_text, supervisor_input)
            return
        pin = pin_input.text()
        pin_input.clear()
        try:
            check_pin(pin)
        except InvalidRequest as exc:
            self.fail(pin_error_words(exc.reason), pin_input)
            return
        self._busy = True
        self.confirm_button.setEnabled(False)
        self.message.setText(QCoreApplication.translate("TillDialog", "Checking the supervisor PIN…"))

        def answered(answer) -> None:
            self._busy = False
            self.confirm_button.setEnabled(True)
            signin, approval = answer
            if approval is None:
                self.fail(signin_words(signin.outcome, attempts_left=signin.attempts_left,
                                       locked_s=signin.locked_s),
                          supervisor_input if signin.outcome == "not_supervisor" else pin_input)
                return
            on_approved(approval.use())          # one approval, one action

        def failed(_exc: Exception) -> None:
            self._busy = False
            self.confirm_button.setEnabled(True)
            self.fail(signin_words("offline"), pin_input)
        engine.approve(supervisor_id, pin, answered, failed)

    def focused_line_edit(self, default: QLineEdit) -> QLineEdit:
        """The keypad's target: the field with the cursor, else `default`."""
        focus = self.focusWidget()
        return focus if isinstance(focus, QLineEdit) and self.isAncestorOf(focus) else default


class ConfirmDialog(TillDialog):
    """Yes or no: `accepted` when the cashier confirms."""

    def __init__(self, text: str, yes_text: str, parent=None):
        super().__init__(parent)
        self.setObjectName("confirmDialog")
        self.text = QLabel(text, objectName="confirmText", wordWrap=True)
        self.message = QLabel(objectName="confirmMessage")
        self.confirm_button = QPushButton(yes_text, objectName="confirmYesButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="confirmNoButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        buttons = self.button_row()
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addLayout(buttons)
        self.setMinimumWidth(460)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Please confirm"))
        self.cancel_button.setText(self.tr("Cancel"))

    def confirm(self) -> None:
        self.accept()


class SupervisorDialog(TillDialog):
    """A supervisor's id and PIN for one action (`purpose`): `approvedBy(supervisor_id)`
    once the PIN is checked; `not_allowed` ids (e.g. the cashier asking) are refused."""
    approvedBy = Signal(str)

    def __init__(self, engine, purpose: str, parent=None, *, not_allowed: tuple[str, ...] = ()):
        super().__init__(parent)
        self.setObjectName("supervisorDialog")
        self.engine = engine
        self.not_allowed = not_allowed
        self.purpose = QLabel(purpose, objectName="supervisorPurpose", wordWrap=True)
        self.supervisor = SupervisorFields()
        self.supervisor_input, self.pin_input = self.supervisor.supervisor_input, self.supervisor.pin_input
        self.message = QLabel(objectName="supervisorMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="supervisorConfirmButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.cancel_button = QPushButton(objectName="supervisorCancelButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.cancel_button)
        self.keypad = Keypad(lambda: self.focused_line_edit(self.pin_input), with_point=False)
        form = QFormLayout()
        self.supervisor.add_to(form)
        buttons = self.button_row()
        layout = QVBoxLayout(self)
        layout.addWidget(self.purpose)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(self.keypad)
        layout.addLayout(buttons)
        self.setMinimumWidth(480)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Supervisor approval"))
        self.supervisor.set_labels(self.tr("Supervisor id"), self.tr("Supervisor PIN"))
        self.confirm_button.setText(self.tr("Approve"))
        self.cancel_button.setText(self.tr("Cancel"))

    def confirm(self) -> None:
        self.ask_supervisor(self.engine, self.supervisor, self._approved, not_allowed=self.not_allowed,
                            not_allowed_text=self.tr("Another supervisor must approve this."))

    def _approved(self, supervisor_id: str) -> None:
        self.accept()
        self.approvedBy.emit(supervisor_id)


class RefundDialog(TillDialog):
    def __init__(self, sale_page, original: Op, parent=None):
        super().__init__(parent)
        self.setObjectName("refundDialog")
        self.sale = sale_page
        self.engine = sale_page.engine
        self.original = original
        self.refundable_minor = max(0, original.amount_minor - self.engine.outbox.refunded_minor(original.txn_id))
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

    def retranslate(self) -> None:
        loc = QLocale()
        self.setWindowTitle(self.tr("Refund"))
        self.summary.setText(
            self.tr("Refund of the charge of %1 to account %2. At most %3 can still be refunded.")
            .replace("%1", money.format_minor(self.original.amount_minor, loc))
            .replace("%2", self.original.account_id)
            .replace("%3", money.format_minor(self.refundable_minor, loc)))
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
        promo = self.sale.engine.ledger.bonus_for(amount_minor, self.promotions or [])
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
