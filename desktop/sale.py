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
the amount typed for the previous customer; a connection change updates the panel, and
a look-up refused in the outage runs again when the connection is back.
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
`SaleSession` (refusals come from it as values), the result panel and the notice
desktop/sale_panel.py's, the sentences desktop/sale_texts.py's, the history's table
model and view desktop/history_model.py's and the layout desktop/sale_layout.py's.
"""
from __future__ import annotations

from PySide6.QtCore import QLocale, QTimer, Signal
from PySide6.QtWidgets import QWidget

from .engine import ONLINE, Refused
from .history_model import ROW_COLOURS, ROW_TONE_ROLE, SPEND_KINDS, clock_time
from .i18n import Retranslates
from .outbox import Op
from .receipts.model import mask_name
from .sale_layout import fix_heights, retranslate_ui, set_tab_order, set_tone, setup_ui
from .sale_lookup import RECEIPT_NUMBER, AccountLookup
from .sale_panel import ResultPanel
from .sale_session import LARGE_AMOUNT_MINOR, Reason, Refusal, SaleSession, check_entry, parse_amount
from .sale_texts import (checking_words, hold_panel_words, large_amount_words, offline_sale_words,
                         offline_status_words, refund_hint_words, release_words, resolved_words, working_words)
from .texts import amount_error_words, id_error_words

__all__ = ["SalePage", "DISPLAY_REFRESH_MS", "LARGE_AMOUNT_MINOR", "RECEIPT_NUMBER", "ROW_COLOURS", "ROW_TONE_ROLE",
           "clock_time"]

DISPLAY_REFRESH_MS = 3000   # re-read the account on screen this often (may hit the read cache)
CLEARS_AMOUNT_KINDS = SPEND_KINDS + ("hold",)   # an applied one used the amount typed on this screen


class SalePage(Retranslates, QWidget):
    refundRequested = Signal(object)     # Op to refund
    topUpRequested = Signal(str)         # account id typed so far
    completeRequested = Signal(object)   # hold Op to complete (capture)
    membersRequested = Signal()          # Member… : new member, card, close
    pickRequested = Signal(str, object, object)   # query, matches, the look-up (a Task): the pick list
    lookupStarted = Signal()             # a new look-up: an open pick list is another customer's
    receiptRequested = Signal(str)       # a receipt number typed in the account field or scanned
    nextCustomer = Signal()              # the customer on screen left (Esc, another account): old news go
    splitRequested = Signal(object, int, str)   # the member on screen, the bill, the rest's tender (F1 / Insert)

    def __init__(self, engine, parent=None):
        super().__init__(parent)
        self.setObjectName("salePage")
        self.engine = engine
        self.session = SaleSession(engine)
        self.confirm_dialog = None
        self.lookup = AccountLookup(self, changed=self._update_buttons, clear_result=lambda: self._set_result("", ""))
        for signal in ("pickRequested", "lookupStarted", "receiptRequested"):
            getattr(self.lookup, signal).connect(getattr(self, signal))
        setup_ui(self)
        self.panel = ResultPanel(self.session, self.result_label, self.notice_label)
        self.history_table.selectionModel().selectionChanged.connect(self._update_buttons)
        self.account_input.returnPressed.connect(self.look_up)
        self.account_input.returnPressed.connect(self.lookup.receipt_typed)     # after the look-up: it drops it
        self.account_input.textEdited.connect(self.lookup.edited)
        self.amount_input.returnPressed.connect(self.charge)
        self.amount_input.textEdited.connect(lambda _t: self.amount_error.clear())
        self.refresh_timer = QTimer(self, interval=DISPLAY_REFRESH_MS, timeout=self.refresh_account)
        engine.opResolved.connect(self._resolved)
        engine.opUncertain.connect(self._uncertain)
        engine.connectionChanged.connect(self._connection_changed)
        engine.offlineChanged.connect(self._offline_changed)
        self._set_result("", "")
        self.retranslate()
        self._update_buttons()

    # the session's state, as the main window, the dialogs and the tests read it
    cashier = property(lambda self: self.session.cashier)
    shift_id = property(lambda self: self.session.shift_id)
    busy_txn = property(lambda self: self.session.busy_txn)
    _account = property(lambda self: self.session.account)
    _rows = property(lambda self: self.session.history.rows)
    _last_result = property(lambda self: self.session.last_result)
    _refreshing = property(lambda self: self.session.refresh is not None and self.session.refresh.pending)
    large_amount_minor = property(lambda self: self.session.large_amount_minor,
                                  lambda self, value: setattr(self.session, "large_amount_minor", value))

    # the account field's actions: sale_lookup.AccountLookup says what each does
    def look_up(self) -> None:
        """Enter in the account field, Look up, a scan: find the card, account or member."""
        self.lookup.look_up()

    def take_scan(self, code: str) -> None:
        """A code scanned anywhere in the window (scanner.ScanDetector)."""
        self.lookup.take_scan(code)

    def pick(self, lookup, account_id: str) -> bool:
        """The pick list's answer to look-up `lookup` (False: the cashier has moved on)."""
        return self.lookup.pick(lookup, account_id)

    def refresh_account(self) -> None:
        """Re-read the account on screen (timer; after each operation), quietly."""
        self.lookup.refresh()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        fix_heights(self)

    def add_history_action(self, widget: QWidget) -> None:
        """A widget in the history bar, left of Top up… (the receipts' Reprint, Earlier sale…)."""
        self.history_bar.insertWidget(self.history_bar.indexOf(self.top_up_button), widget)
        set_tab_order(self)

    # ---------------------------------------------------------------- texts

    def retranslate(self) -> None:
        retranslate_ui(self)
        self.history_table.retranslate()
        self.lookup.show()
        self.hold_info.setText(hold_panel_words(self.target_hold()))
        if self.session.last_result:
            self.panel.decision(self.session.last_result[1])

    def _set_result(self, tone: str, text: str, **about) -> None:
        """The result panel (sale_panel.ResultPanel.show: `remember`, `account_id`, `reason`)."""
        self.panel.show(tone, text, **about)

    def show_notice(self, text: str) -> None:
        """A note beside the history (e.g. a charge that was being checked is decided)."""
        self.panel.notice(text)

    # ---------------------------------------------------------------- session

    def start(self, cashier, shift_id: int, ops: list[Op]) -> None:
        self.session.start(cashier, shift_id)
        self.history_table.show_shift(shift_id, ops)
        self.top_up_button.setVisible(bool(cashier and cashier.can_top_up))
        self.refresh_timer.start()
        self.new_sale()

    def stop(self) -> None:
        self.session.stop()
        self.refresh_timer.stop()
        self.new_sale()

    def next_customer(self) -> None:
        """The customer on screen has gone: the notice about an earlier one (a checked
        charge, a slip printed) is old news."""
        self.show_notice("")
        self.nextCustomer.emit()

    def new_sale(self) -> None:
        """Clear the screen for the next customer. A charge still being checked stays
        with the engine (counted in the status bar) and keeps its account blocked."""
        if self.session.screen_account:
            self.next_customer()
        self.session.new_sale()
        for field in (self.account_input, self.amount_input, self.account_error, self.amount_error):
            field.clear()
        self._set_result("", "")
        self.lookup.show()
        self._update_buttons()
        self.account_input.setFocus()

    # ---------------------------------------------------------------- charge

    def _update_buttons(self) -> None:
        online = self.engine.state == ONLINE
        can = self.session.controls(online, self.selected_op(), self.lookup.typed(),
                                    offline_sales=self.engine.selling_offline)
        # offline (issue 27) only a plain charge: no hold, no split sale
        for button, enabled in ((self.charge_button, can.charge), (self.hold_button, can.charge and online),
                                (self.split_cash_button, can.charge and online),
                                (self.split_wechat_button, can.charge and online),
                                (self.refund_button, can.refund), (self.top_up_button, can.top_up),
                                (self.complete_button, can.hold_actions), (self.release_button, can.hold_actions)):
            button.setEnabled(enabled)
        self.hold_info.setText(hold_panel_words(can.hold))
        set_tone(self.hold_info, "hold" if can.hold is not None else "")

    def _validated(self) -> tuple[str, int] | None:
        """The account and amount typed (sale_session.check_entry), or None with the
        fields' errors shown."""
        entry = check_entry(self.lookup.typed(), self.amount_input.text(), QLocale().decimalPoint())
        if entry.account_reason:
            self.account_error.setText(id_error_words(self.tr("Account"), entry.account_reason))
        if entry.amount_reason:
            self.amount_error.setText(amount_error_words(entry.amount_reason))
        if not entry.ok:
            (self.account_input if self.account_error.text() else self.amount_input).setFocus()
            return None
        self.account_error.clear()
        self.amount_error.clear()
        return entry.account_id, entry.amount_minor

    def charge(self) -> None:
        """Enter in the amount field, F12 and the button all come here."""
        self._start_typed("deduct")

    def hold(self) -> None:
        """F9 and the Hold button: reserve the typed amount on the account (pre-authorise)."""
        self._start_typed("hold")

    def _start_typed(self, kind: str) -> None:
        """Start `kind` on the typed account and amount, unless an operation is in flight."""
        refusal = self.session.typed_refusal(self.lookup.typed())
        if refusal is not None:
            if refusal.reason != Reason.NO_SHIFT:         # nobody signed in: nothing to say
                self.panel.refuse(refusal)
            if refusal.reason == Reason.NOT_LOOKED_UP:    # the account typed is not the one on screen
                self.account_input.setFocus()             # Enter there looks it up
            return
        checked = self._validated()
        if checked is not None:
            # found by card: the card goes with the charge, so a block since the look-up declines it
            shown = self.session.account
            on_screen = shown is not None and shown.account_id == checked[0]
            card_no = shown.card_no if on_screen else ""
            # the slip names the member, masked (the outbox keeps only that)
            member = mask_name(shown.holder_name) if on_screen and shown.holder_name else ""
            detail = {"member": member} if member else None
            self.confirm_large(checked[1], lambda: self.start_operation(kind, *checked, card_no=card_no,
                                                                        detail=detail), parent=self)

    def split_tender(self, method: str) -> None:
        """F1 (the rest in cash) and Insert (the rest by WeChat Pay): the bill typed, paid partly
        by the card of the member on screen (desktop/split_tender.py)."""
        refusal = self.session.typed_refusal(self.lookup.typed())
        if refusal is not None:
            if refusal.reason != Reason.NO_SHIFT:
                self.panel.refuse(refusal)
            if refusal.reason == Reason.NOT_LOOKED_UP:
                self.account_input.setFocus()
            return
        checked = self._validated()
        shown = self.session.account
        if checked is None or shown is None or shown.account_id != checked[0]:
            return
        self.splitRequested.emit(shown, checked[1], method)

    def confirm_large(self, amount_minor: int, go, *, parent) -> None:
        """Run `go()` now, or, for an amount above `large_amount_minor`, once the cashier
        has confirmed the amount shown in words (till_dialog.ConfirmDialog)."""
        if not self.session.needs_confirming(amount_minor):
            go()
            return
        self._confirm(large_amount_words(amount_minor), self.tr("Yes, this amount"), go, parent.window())

    def _confirm(self, text: str, yes_text: str, go, window) -> None:
        from .till_dialog import ConfirmDialog
        self.confirm_dialog = ConfirmDialog(text, yes_text, window)
        self.confirm_dialog.accepted.connect(go)
        self.confirm_dialog.open()

    def typed_amount_minor(self) -> int | None:
        """The amount in the amount field if it is a valid amount, else None (no message)."""
        return parse_amount(self.amount_input.text(), QLocale().decimalPoint())[0]

    # ---------------------------------------------------------------- holds

    def target_hold(self) -> Op | None:
        """The hold the panel acts on: the open hold selected in the history, else the
        newest open hold of the account on screen; None when there is none."""
        return self.session.target_hold(self.selected_op(), self.lookup.typed())

    def complete_sale(self) -> None:
        """Complete sale…: asks for the final amount (the main window opens the dialog)."""
        hold = self.session.hold_to_act_on(self.selected_op(), self.lookup.typed())
        if isinstance(hold, Refusal):
            self.panel.refuse(hold)
        else:
            self.completeRequested.emit(hold)

    def release_hold(self) -> None:
        """Release hold: gives the whole held amount back to the account (void)."""
        hold = self.session.hold_to_act_on(self.selected_op(), self.lookup.typed())
        if isinstance(hold, Refusal):
            self.panel.refuse(hold)
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
            return self.panel.refuse(refusal)
        self.lookup.bring_on_screen(account_id, opening=kind == "open")
        try:
            op = self.engine.submit(kind, account_id, amount_minor, self.session.cashier.cashier_id,
                                    shift_id=self.session.shift_id, original_txn_id=original_txn_id,
                                    approved_by=approved_by, method=method, bonus_minor=bonus_minor,
                                    card_no=card_no, detail=detail)
        except Refused as exc:
            return self.panel.refuse(Refusal(exc.reason), account_id)
        if op.offline:                      # made offline: saved, its slip printed; settled on reconnect
            self._add_or_update(op)
            self._set_result("approved", offline_sale_words(op, self.engine.offline_use()), account_id=account_id)
            self._update_buttons()
            return op
        self.session.started(op, account_id)
        self._update_buttons()
        self._add_or_update(op)
        self._set_result("working", working_words(kind, account_id, amount_minor), account_id=account_id)
        return op

    def resume_operation(self, op: Op) -> None:
        """`op`, answered CONFIRMATION_REQUIRED, is re-sent with the member's confirmation
        (desktop/member_confirm.py): this screen's operation in flight again."""
        self.session.started(op, op.account_id)
        self._update_buttons()
        self._add_or_update(op)
        self._set_result("working", working_words(op.kind, op.account_id, op.amount_minor), account_id=op.account_id)

    def _resolved(self, op: Op) -> None:
        self._add_or_update(op)
        done = self.session.resolved(op, self.lookup.typed())
        if done.account_changed:
            self.lookup.show()
            self.refresh_account()            # the rest (e.g. others' holds), read fresh: own write
        elif done.read_account:
            self.engine.lookup(op.account_id, lambda view: self.lookup.looked_up(op.account_id, view),
                               lambda _exc: None)
        if done.notice:                       # the panel moved on: say it in the notice
            self.show_notice(resolved_words(op))
        if not done.decided:
            return
        self.panel.decision(op)
        if op.applied:
            if op.kind in CLEARS_AMOUNT_KINDS:
                self.amount_input.clear()
            self.account_input.setFocus()
            self.account_input.selectAll()
        else:
            self.amount_input.setFocus()
        self._update_buttons()

    def _uncertain(self, op: Op) -> None:
        self._add_or_update(op)
        if self.session.uncertain(op):
            self._set_result("checking", checking_words(), account_id=op.account_id)
            self._update_buttons()

    def _offline_changed(self, use) -> None:
        """The till starts (or stops) selling offline: say so while nothing is in flight."""
        self._update_buttons()
        if use is not None and self.session.watch_txn is None and self.session.busy_txn is None:
            self._set_result("checking", offline_status_words(use))

    def _connection_changed(self, state: str, _detail: str = "") -> None:
        self.panel.connection_changed(state, state == ONLINE)
        self._update_buttons()
        if state == ONLINE:
            self.lookup.connection_back()        # a look-up refused in the outage runs again

    # ---------------------------------------------------------------- history

    def _add_or_update(self, op: Op, *, any_shift: bool = False) -> None:
        if self.history_table.put(op, self.session.shift_id, any_shift=any_shift):
            self._update_buttons()

    def selected_op(self) -> Op | None:
        return self.history_table.selected_op()

    def ask_refund(self) -> None:
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
        self.ask_refund()
