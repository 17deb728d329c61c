"""The sale screen: scan or type an account, enter an amount, charge (or hold, and
later complete the sale or release the hold), see the result; the shift's history
below, with refund and top-up.

One sale at a time: from the moment a charge starts until the ledger has answered,
the charge button, Enter and F12 do nothing, so one sale cannot be charged twice.
A charge without an answer is shown as "being checked" while the engine retries it
with the same txn id; only that account waits (the engine refuses it until the
charge is resolved), other customers can be charged meanwhile, and when the charge
resolves the screen says so (on the result panel if its customer is still on
screen, else in the notice). A card scanned anywhere in the window (desktop/scanner.py)
replaces the account on screen. A new account on screen clears the result panel and
the amount typed for the previous customer; a connection change updates the panel.
The account on screen shows
its status, balance, the amount on hold and the available balance; it is re-read
every `DISPLAY_REFRESH_MS` while it stays on screen (display reads may come from the
ledger's short read cache; every operation's own answer is fresh and shown at once).
A hold is completed or released from the hold panel: it acts on the hold selected in
the history, or else on the newest open hold of the account on screen.

The account field takes a card, an account id, a phone number, a holder's name or its
pinyin initials (`zs` for 张三). One match puts that account on screen (the field then
holds the account id: every operation names the account, never the card); several
show a short pick list (desktop/members.py: arrows and Enter, or a tap); a blocked
card is refused in words. A look-up is cancelled (desktop/workers.Task) once the cashier
types, scans or looks up something else: its answer is dropped, so the screen never
shows a stale or another customer's account. The balance line shows the principal and
the bonus beside the balance when the account has a bonus. A receipt number typed in
the account field or scanned opens that sale (`receiptRequested`: desktop/receipts).

This module is the view: the state and the rules are desktop/sale_session.py's
`SaleSession` (refusals come from it as values), the sentences desktop/sale_texts.py's,
the history's rows desktop/history_model.py's and the layout desktop/sale_layout.py's.
"""
from __future__ import annotations

import re

from PySide6.QtCore import QLocale, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QSizePolicy, QWidget

from core import AccountNotFound, InvalidRequest
from core.kinds import RECEIPT_NUMBER_PATTERN
from core.members import MAX_QUERY_LEN
from core.validation import check_id

from . import money
from .engine import ONLINE, AccountView, Refused
from .history_model import COLUMNS, ROW_COLOURS, ROW_TONE_ROLE, SPEND_KINDS, HistoryTable, clock_time, shift_row
from .i18n import Retranslates
from .keypad import Keypad
from .outbox import Op
from .sale_layout import fix_heights, lay_out
from .sale_session import LARGE_AMOUNT_MINOR, Reason, Refusal, SaleSession
from .sale_texts import (account_words, checking_words, decision_words, hold_panel_words, large_amount_words,
                         lookup_error_words, refund_hint_words, release_words, resolved_words, working_words)
from .texts import amount_error_words, id_error_words, refusal_words

__all__ = ["SalePage", "DISPLAY_REFRESH_MS", "LARGE_AMOUNT_MINOR", "ROW_COLOURS", "ROW_TONE_ROLE", "clock_time"]

DISPLAY_REFRESH_MS = 3000   # re-read the account on screen this often (may hit the read cache)
RECEIPT_NUMBER = re.compile(RECEIPT_NUMBER_PATTERN)
CLEARS_AMOUNT_KINDS = SPEND_KINDS + ("hold",)   # an applied one used the amount typed on this screen


class SalePage(Retranslates, QWidget):
    refundRequested = Signal(object)     # Op to refund
    topUpRequested = Signal(str)         # account id typed so far
    completeRequested = Signal(object)   # hold Op to complete (capture)
    membersRequested = Signal()          # Member… : new member, card, close
    pickRequested = Signal(str, object, object)   # query, matches, the look-up (a Task): the pick list
    lookupStarted = Signal()             # a new look-up: an open pick list is another customer's
    receiptRequested = Signal(str)       # a receipt number typed in the account field or scanned

    COLUMNS = COLUMNS

    def __init__(self, engine, parent=None):
        super().__init__(parent)
        self.setObjectName("salePage")
        self.engine = engine
        self.session = SaleSession(engine)
        self.confirm_dialog = None

        self.account_label, self.amount_label = QLabel(), QLabel()
        self.account_input = QLineEdit(objectName="accountInput")
        self.account_input.setMaxLength(64)
        self.lookup_button = QPushButton(objectName="lookupButton", clicked=self.look_up)
        self.members_button = QPushButton(objectName="membersButton", clicked=lambda: self.membersRequested.emit())
        self.account_error = QLabel(objectName="accountError", wordWrap=True)
        self.account_error.setProperty("tone", "error")
        self.balance_label = QLabel(objectName="balanceLabel", wordWrap=True)
        self.amount_input = QLineEdit(objectName="amountInput")
        self.amount_input.setMaxLength(money.MAX_AMOUNT_TEXT_LEN)
        self.amount_error = QLabel(objectName="amountError", wordWrap=True)
        self.amount_error.setProperty("tone", "error")
        self.charge_button = QPushButton(objectName="chargeButton", clicked=self.charge)
        self.charge_button.setProperty("role", "charge")
        self.hold_button = QPushButton(objectName="holdButton", clicked=self.hold)
        self.hold_info = QLabel(objectName="holdInfoLabel", wordWrap=True)
        self.complete_button = QPushButton(objectName="completeSaleButton", clicked=self.complete_sale)
        self.complete_button.setProperty("role", "primary")
        self.release_button = QPushButton(objectName="releaseHoldButton", clicked=self.release_hold)
        self.new_sale_button = QPushButton(objectName="newSaleButton", clicked=self.new_sale)
        self.result_label = QLabel(objectName="resultLabel", wordWrap=True, alignment=Qt.AlignmentFlag.AlignCenter)
        # The notice sits in the history bar with a fixed height, always laid out (empty
        # when there is nothing to say), so that nothing moves when it appears.
        self.notice_label = QLabel(objectName="noticeLabel", wordWrap=True)
        self.notice_label.setProperty("tone", "none")
        self.notice_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.keypad = Keypad(lambda: self.amount_input)
        self.keypad.setMaximumHeight(330)
        self.history_title = QLabel(objectName="historyTitle")
        self.history_table = HistoryTable()
        self.history_table.itemSelectionChanged.connect(self._update_buttons)
        self.refund_button = QPushButton(objectName="refundButton", clicked=self._ask_refund)
        self.refund_button.setEnabled(False)
        self.top_up_button = QPushButton(objectName="topUpButton",
                                         clicked=lambda: self.topUpRequested.emit(self._typed()))

        self.account_input.returnPressed.connect(self.look_up)
        self.account_input.returnPressed.connect(self._receipt_typed)     # after the look-up: it drops it
        self.account_input.textEdited.connect(self._account_edited)
        self.amount_input.returnPressed.connect(self.charge)
        self.amount_input.textEdited.connect(lambda _t: self.amount_error.clear())
        self.f12 = QShortcut(QKeySequence(Qt.Key.Key_F12), self, activated=self.charge)
        self.f9 = QShortcut(QKeySequence(Qt.Key.Key_F9), self, activated=self.hold)
        # keyboard-only tills: every action has a key, shown on its button
        self.esc = QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self.new_sale)
        self.f5 = QShortcut(QKeySequence(Qt.Key.Key_F5), self, activated=self.refund_shortcut)
        self.f6 = QShortcut(QKeySequence(Qt.Key.Key_F6), self, activated=self.top_up_button.click)
        self.f7 = QShortcut(QKeySequence(Qt.Key.Key_F7), self, activated=self.members_button.click)
        self.refresh_timer = QTimer(self, interval=DISPLAY_REFRESH_MS, timeout=self.refresh_account)
        self.history_bar = lay_out(self)

        engine.opResolved.connect(self._resolved)
        engine.opUncertain.connect(self._uncertain)
        engine.connectionChanged.connect(self._connection_changed)
        self._set_result("", "")
        self.retranslate()
        self._update_buttons()

    # the session's state, as the main window, the dialogs and the tests read it
    cashier = property(lambda self: self.session.cashier)
    shift_id = property(lambda self: self.session.shift_id)
    busy_txn = property(lambda self: self.session.busy_txn)
    _account = property(lambda self: self.session.account)
    _rows = property(lambda self: self.session.history.rows)
    _ops = property(lambda self: self.session.history.ops)
    _last_result = property(lambda self: self.session.last_result)
    _refreshing = property(lambda self: self.session.refresh is not None and self.session.refresh.pending)
    large_amount_minor = property(lambda self: self.session.large_amount_minor,
                                  lambda self, value: setattr(self.session, "large_amount_minor", value))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        fix_heights(self)

    def add_history_action(self, widget: QWidget) -> None:
        """A widget in the history bar, left of Top up… (the receipts' Reprint, Earlier sale…)."""
        self.history_bar.insertWidget(self.history_bar.indexOf(self.top_up_button), widget)

    # ---------------------------------------------------------------- texts

    def retranslate(self) -> None:
        self.account_label.setText(self.tr("Account (scan the card or type)"))
        self.account_input.setPlaceholderText(self.tr("Card, phone or name"))
        self.lookup_button.setText(self.tr("Look up"))
        self.members_button.setText(self.tr("Member…  (F7)"))
        self.amount_label.setText(self.tr("Amount"))
        self.amount_input.setPlaceholderText(money.format_minor(0, QLocale()))
        self.charge_button.setText(self.tr("Charge  (F12)"))
        self.hold_button.setText(self.tr("Hold  (F9)"))
        self.complete_button.setText(self.tr("Complete sale…"))
        self.release_button.setText(self.tr("Release hold"))
        self.new_sale_button.setText(self.tr("Next customer  (Esc)"))
        self.history_title.setText(self.tr("This shift"))
        self.refund_button.setText(self.tr("Refund…  (F5)"))
        self.top_up_button.setText(self.tr("Top up…  (F6)"))
        self.history_table.retranslate()
        self._show_account()
        for op in self.session.history.ops.values():
            self._fill_row(op)
        self.hold_info.setText(hold_panel_words(self.target_hold()))
        if self.session.last_result:
            self._show_decision(self.session.last_result[1])

    @staticmethod
    def _set_tone(label: QLabel, tone: str) -> None:
        label.setProperty("tone", tone)
        label.style().unpolish(label)
        label.style().polish(label)

    def _set_result(self, tone: str, text: str, *, remember: tuple | None = None,
                    account_id: str | None = None, reason: str = "") -> None:
        """The result panel: `account_id` is the customer it is about (None: nobody in
        particular), `reason` the refusal it shows, so that a new customer or a
        connection change can take it away."""
        self.session.result_shown(remember, account_id, reason)
        self.result_label.setText(text)
        self._set_tone(self.result_label, tone or "idle")

    def _refuse(self, refusal: Refusal, account_id: str | None = None) -> Refusal:
        self._set_result("checking" if refusal.reason == Reason.BUSY else "declined", refusal_words(refusal.reason),
                         account_id=account_id, reason=refusal.reason)
        return refusal

    def show_notice(self, text: str) -> None:
        """A note beside the history (e.g. a charge that was being checked is decided);
        the full text is also the tooltip when it is longer than the bar."""
        self.notice_label.setText(text)
        self.notice_label.setToolTip(text)
        self._set_tone(self.notice_label, "info" if text else "none")

    # ---------------------------------------------------------------- session

    def start(self, cashier, shift_id: int, ops: list[Op]) -> None:
        self.session.start(cashier, shift_id)
        self.history_table.setRowCount(0)
        for op in ops:
            self._add_or_update(op)
        for op in self.engine.unresolved():      # e.g. left by an earlier run
            self._add_or_update(op)
        for hold in self.engine.outbox.open_holds():   # holds of earlier shifts still open
            self._add_or_update(hold, any_shift=True)
        self.top_up_button.setVisible(bool(cashier and cashier.can_top_up))
        self.refresh_timer.start()
        self.new_sale()

    def stop(self) -> None:
        self.session.stop()
        self.refresh_timer.stop()
        self.new_sale()

    def new_sale(self) -> None:
        """Clear the screen for the next customer. A charge still being checked stays
        with the engine (counted in the status bar) and keeps its account blocked."""
        self.session.new_sale()
        self.account_input.clear()
        self.amount_input.clear()
        self.account_error.clear()
        self.amount_error.clear()
        self._set_result("", "")
        self._show_account()
        self._update_buttons()
        self.account_input.setFocus()

    # ---------------------------------------------------------------- account

    def _typed(self) -> str:
        return self.account_input.text().strip()

    def _account_edited(self, text: str) -> None:
        dropped, others_result = self.session.account_edited(text)
        self.account_error.clear()
        if dropped:
            self._show_account()
        if others_result:
            self._set_result("", "")      # that result was another customer's
        self._update_buttons()            # the hold panel follows the account typed

    def take_scan(self, code: str) -> None:
        """A code scanned anywhere in the window (scanner.ScanDetector): a receipt's
        number opens that sale; anything else is a card, which replaces whatever the
        account field held and is looked up at once."""
        if self.session.cashier is not None and RECEIPT_NUMBER.fullmatch(code):
            self.receiptRequested.emit(code)
            return
        self.account_input.setText(code)
        self.look_up()

    def _receipt_typed(self) -> None:
        """A receipt number typed (or scanned) into the account field: not an account."""
        number = self._typed()
        if self.session.cashier is None or not RECEIPT_NUMBER.fullmatch(number):
            return
        self.account_input.clear()           # the account look-up's answer is then ignored
        self.balance_label.clear()
        self.receiptRequested.emit(number)

    def _customer_changes_to(self, account_id: str) -> None:
        """A different account comes on screen: the previous customer's result, amount
        and operation in flight are not this customer's."""
        change = self.session.customer_changes_to(account_id)
        if change is None:
            return
        clear_amount, clear_result = change
        if clear_amount:
            self.amount_input.clear()
            self.amount_error.clear()
        if clear_result:
            self._set_result("", "")
        self._update_buttons()

    def look_up(self) -> None:
        """Enter in the account field, Look up, a scan: find the card, account or member."""
        query = self._typed()
        if not query or len(query) > MAX_QUERY_LEN:
            self.account_error.setText(id_error_words(self.tr("Account"),
                                                      "must not be empty" if not query else "longer than 64"))
            self.account_input.setFocus()
            return
        self.session.cancel_lookup()
        self.lookupStarted.emit()
        self.account_error.clear()
        self._customer_changes_to(query)
        self.session.account = None
        self.balance_label.setText(self.tr("Looking up %1…").replace("%1", query))
        self.amount_input.setFocus()
        self.amount_input.selectAll()
        lookup = self.engine.find(query, lambda found: self._found(lookup, query, found),
                                  lambda exc: self._lookup_failed(query, exc, lookup))
        self.session.lookup = lookup

    def _found(self, lookup, query: str, found) -> None:
        if not self.session.lookup_wanted(lookup) or self._typed() != query:
            return                                   # the cashier has moved on
        if found.view is not None:
            self.show_account(found.view, query)
        elif found.blocked is not None:
            self._lookup_failed(query, found.blocked, lookup)
        elif found.matches:
            self.balance_label.setText(self.tr("%1 members found: pick one").replace("%1", str(len(found.matches))))
            self.pickRequested.emit(query, found.matches, lookup)
        else:
            self._lookup_failed(query, AccountNotFound(query), lookup)

    def show_account(self, view: AccountView, query: str = "") -> None:
        """Put a found account on screen; the field holds its id from now on. `query`:
        what found it (a card, a phone: the same customer, so what was typed for them
        meanwhile stays)."""
        self.session.found_as(query, view.account_id)
        self._customer_changes_to(view.account_id)
        self.account_input.setText(view.account_id)
        self.session.account = view
        self.account_error.clear()
        self._show_account()
        self._update_buttons()

    def pick(self, lookup, account_id: str) -> bool:
        """The pick list's answer: look that account up, unless the cashier has moved on
        since `lookup` (then nothing happens and False is answered)."""
        if not self.session.lookup_wanted(lookup):
            return False
        self.account_input.setText(account_id)
        self.look_up()
        return True

    def _looked_up(self, account_id: str, view: AccountView) -> None:
        if self._typed() != account_id:
            return                                   # the cashier has moved on
        self.session.account = view
        self._show_account()
        self._update_buttons()

    def refresh_account(self) -> None:
        """Re-read the account on screen (timer; after each operation). Quiet: no focus
        change, and a failed read keeps what is shown."""
        if self.engine.closed:
            self.refresh_timer.stop()
            return
        view, refresh = self.session.account, self.session.refresh
        if view is not None and (refresh is None or not refresh.pending) and self.engine.state == ONLINE:
            self.session.refresh = self.engine.lookup(
                view.account_id, lambda new: self.session.refreshed(new) and self._show_account(), lambda _exc: None)
        for hold in self.session.history.holds():     # holds change state with time (expiry)
            self._fill_row(hold)

    def _lookup_failed(self, account_id: str, exc: Exception, lookup=None) -> None:
        if self._typed() != account_id or (lookup is not None and not self.session.lookup_wanted(lookup)):
            return
        self.session.account = None
        self.balance_label.clear()
        self._update_buttons()
        self.account_error.setText(lookup_error_words(account_id, exc))
        self.account_input.setFocus()
        self.account_input.selectAll()

    def _show_account(self) -> None:
        info = self.session.account
        if info is None:
            if not self._typed():
                self.balance_label.setText(self.tr("Scan a card to start"))
            return
        self.balance_label.setText(account_words(info))
        self._set_tone(self.balance_label, "frozen" if info.status == "frozen" else "")

    # ---------------------------------------------------------------- charge

    def _update_buttons(self) -> None:
        can = self.session.controls(self.engine.state == ONLINE, self.selected_op(), self._typed())
        self.charge_button.setEnabled(can.charge)
        self.hold_button.setEnabled(can.charge)
        self.refund_button.setEnabled(can.refund)
        self.top_up_button.setEnabled(can.top_up)
        self.complete_button.setEnabled(can.hold_actions)
        self.release_button.setEnabled(can.hold_actions)
        self.hold_info.setText(hold_panel_words(can.hold))
        self._set_tone(self.hold_info, "hold" if can.hold is not None else "")

    def _validated(self) -> tuple[str, int] | None:
        account_id = self._typed()
        ok = True
        try:
            check_id(account_id, "account_id")
        except InvalidRequest as exc:
            self.account_error.setText(id_error_words(self.tr("Account"), exc.reason))
            ok = False
        try:
            amount_minor = money.parse_amount_minor(self.amount_input.text(), decimal_point=QLocale().decimalPoint())
        except money.AmountError as exc:
            self.amount_error.setText(amount_error_words(exc.reason))
            ok = False
        if not ok:
            (self.account_input if self.account_error.text() else self.amount_input).setFocus()
            return None
        self.account_error.clear()
        self.amount_error.clear()
        return account_id, amount_minor

    def charge(self) -> None:
        """Enter in the amount field, F12 and the button all come here."""
        self._start_typed("deduct")

    def hold(self) -> None:
        """F9 and the Hold button: reserve the typed amount on the account (pre-authorise)."""
        self._start_typed("hold")

    def _start_typed(self, kind: str) -> None:
        """Start `kind` on the typed account and amount, unless an operation is in flight."""
        if self.session.busy_txn is not None:
            self._refuse(Refusal(Reason.BUSY))
            return
        if self.session.cashier is None or self.session.shift_id is None:
            return
        checked = self._validated()
        if checked is not None:
            self.confirm_large(checked[1], lambda: self.start_operation(kind, *checked), parent=self)

    def confirm_large(self, amount_minor: int, go, *, parent) -> None:
        """Run `go()` now, or, for an amount above `large_amount_minor`, once the cashier
        has confirmed the amount shown in words (dialogs.ConfirmDialog)."""
        if not self.session.needs_confirming(amount_minor):
            go()
            return
        self._confirm(large_amount_words(amount_minor), self.tr("Yes, this amount"), go, parent.window())

    def _confirm(self, text: str, yes_text: str, go, window) -> None:
        from .dialogs import ConfirmDialog
        self.confirm_dialog = ConfirmDialog(text, yes_text, window)
        self.confirm_dialog.accepted.connect(go)
        self.confirm_dialog.open()

    def typed_amount_minor(self) -> int | None:
        """The amount in the amount field if it is a valid amount, else None (no message)."""
        try:
            return money.parse_amount_minor(self.amount_input.text(), decimal_point=QLocale().decimalPoint())
        except money.AmountError:
            return None

    # ---------------------------------------------------------------- holds

    def target_hold(self) -> Op | None:
        """The hold the panel acts on: the open hold selected in the history, else the
        newest open hold of the account on screen; None when there is none."""
        return self.session.target_hold(self.selected_op(), self._typed())

    def complete_sale(self) -> None:
        """Complete sale…: asks for the final amount (the main window opens the dialog)."""
        hold = self.target_hold()
        refusal = self.session.hold_refusal(hold)
        if refusal is not None:
            self._refuse(refusal)
            return
        self.completeRequested.emit(hold)

    def release_hold(self) -> None:
        """Release hold: gives the whole held amount back to the account (void)."""
        hold = self.target_hold()
        refusal = self.session.hold_refusal(hold)
        if refusal is not None:
            self._refuse(refusal)
            return
        self._confirm(release_words(hold), self.tr("Release hold"), lambda: self.start_operation(
            "void", hold.account_id, hold.amount_minor, original_txn_id=hold.txn_id), self.window())

    # ---------------------------------------------------------------- operations

    def start_operation(self, kind: str, account_id: str, amount_minor: int, **details) -> Op | None:
        """`try_operation`, answering None when it was refused (the panel says why)."""
        started = self.try_operation(kind, account_id, amount_minor, **details)
        return started if isinstance(started, Op) else None

    def try_operation(self, kind: str, account_id: str, amount_minor: int, *,
                      original_txn_id: str = "", approved_by: str = "", method: str = "",
                      bonus_minor: int = 0, card_no: str = "", detail: dict | None = None) -> Op | Refusal:
        """Start a charge, refund, top-up, hold, capture or void, or a member operation
        (open, card_replace, close), as this screen's one operation in flight: the Op,
        or the Refusal (also shown on the panel) when it was not started."""
        refusal = self.session.refusal(kind, original_txn_id)
        if refusal is not None:
            return self._refuse(refusal)
        if account_id != self._typed():
            # e.g. a refund of an earlier customer's charge picked in the history: that
            # customer comes on screen, so the result is never shown under someone else
            self.account_input.setText(account_id)
            if kind == "open":            # not there yet: looked up once it is opened
                self.session.cancel_lookup()
                self._customer_changes_to(account_id)
                self.session.account = None
                self.account_error.clear()
                self.balance_label.clear()
            else:
                self.look_up()
        try:
            op = self.engine.submit(kind, account_id, amount_minor, self.session.cashier.cashier_id,
                                    shift_id=self.session.shift_id, original_txn_id=original_txn_id,
                                    approved_by=approved_by, method=method, bonus_minor=bonus_minor,
                                    card_no=card_no, detail=detail)
        except Refused as exc:
            return self._refuse(Refusal(exc.reason), account_id)
        self.session.started(op, account_id)
        self._update_buttons()
        self._add_or_update(op)
        self._set_result("working", working_words(kind, account_id, amount_minor), account_id=account_id)
        return op

    def _resolved(self, op: Op) -> None:
        self._add_or_update(op)
        done = self.session.resolved(op, self._typed())
        if done.account_changed:
            self._show_account()
            self.refresh_account()            # the rest (e.g. others' holds), read fresh: own write
        elif done.read_account:
            self.engine.lookup(op.account_id, lambda view: self._looked_up(op.account_id, view),
                               lambda _exc: None)
        if done.notice:                       # the panel moved on: say it in the notice
            self.show_notice(resolved_words(op))
        if not done.decided:
            return
        self._show_decision(op)
        if op.applied:
            if op.kind in CLEARS_AMOUNT_KINDS:
                self.amount_input.clear()
            self.account_input.setFocus()
            self.account_input.selectAll()
        else:
            self.amount_input.setFocus()
        self._update_buttons()

    def _show_decision(self, op: Op) -> None:
        outcome = "approved" if op.applied else "declined"
        self._set_result(outcome, decision_words(op, self.session.released_minor(op)), remember=(outcome, op))

    def _uncertain(self, op: Op) -> None:
        self._add_or_update(op)
        if self.session.uncertain(op):
            self._set_result("checking", checking_words(), account_id=op.account_id)
            self._update_buttons()

    def _connection_changed(self, state: str, _detail: str = "") -> None:
        """The panel must not say "No connection" once it is back, nor stay quiet when
        it is lost while nothing is in flight."""
        change = self.session.connection_changed(state, state == ONLINE)
        if isinstance(change, Refusal):
            self._set_result("declined", refusal_words(change.reason), reason=change.reason)
        elif change is not None:
            self._set_result("approved", self.tr("Connected again: charges can be made."))
        self._update_buttons()

    # ---------------------------------------------------------------- history

    def _add_or_update(self, op: Op, *, any_shift: bool = False) -> None:
        change = self.session.history.add(op, self.session.shift_id, any_shift=any_shift)
        if change is None:
            return
        if change.new_row:
            self.history_table.insertRow(0)
        self._fill_row(op)
        if change.also is not None:
            self._fill_row(change.also)       # the hold's state changed
        self._update_buttons()

    def _fill_row(self, op: Op) -> None:
        hold_state = (self.engine.outbox.hold_state(op) if op.kind == "hold" and op.applied
                      and not self.engine.closed else None)
        self.history_table.show_row(self.session.history.rows[op.txn_id], shift_row(op, hold_state))

    def op_at_row(self, row: int) -> Op | None:
        txn_id = self.history_table.txn_at(row)
        return self.session.history.op(txn_id) if txn_id else None

    def selected_op(self) -> Op | None:
        txn_id = self.history_table.selected_txn()
        return self.session.history.op(txn_id) if txn_id else None

    _selected_op = selected_op

    def _ask_refund(self) -> None:
        op = self.session.refundable(self.selected_op())
        if op is not None:
            self.refundRequested.emit(op)

    def refund_shortcut(self) -> None:
        """F5: refund the selected charge; with none selected, say how to choose one."""
        if not self.refund_button.isEnabled():
            if self.session.refundable(self.selected_op()) is None and self.session.cashier is not None:
                self._set_result("declined", refund_hint_words())
                self.history_table.setFocus()
            return
        self._ask_refund()
