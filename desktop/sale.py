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
card is refused in words. Every look-up carries a number: an answer that arrives after
the cashier typed, scanned or looked up something else is dropped, so the screen never
shows a stale or another customer's account. The balance line shows the principal and
the bonus beside the balance when the account has a bonus.
"""
from __future__ import annotations

from datetime import datetime

from dataclasses import replace

from PySide6.QtCore import QLocale, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (QAbstractItemView, QFrame, QGridLayout, QHBoxLayout, QHeaderView, QLabel,
                               QLineEdit, QPushButton, QSizePolicy, QTableWidget, QTableWidgetItem, QVBoxLayout,
                               QWidget)

from core import AccountNotFound, InvalidRequest
from core.members import MAX_QUERY_LEN
from core.validation import check_id

from . import money
from .engine import ONLINE, AccountView, Refused
from .keypad import Keypad
from .outbox import HOLD_OPEN, MEMBER_KINDS, Op, now_ms
from .texts import (account_status_words, amount_error_words, card_reason_words, hold_state_words,
                    id_error_words, kind_words, member_outcome_words, method_words, refusal_words,
                    short_status, status_words)
from .i18n import Retranslates

DISPLAY_REFRESH_MS = 3000   # re-read the account on screen this often (may hit the read cache)
ROW_TONE_ROLE = Qt.ItemDataRole.UserRole + 1     # "applied", "declined" or "pending" (tests, colour)
ROW_COLOURS = {"declined": "#a3241b", "pending": "#855a00"}
LARGE_AMOUNT_MINOR = 100_000   # default: amounts above ¥1,000 are confirmed with the amount in words


def clock_time(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000).strftime("%H:%M")


class SalePage(Retranslates, QWidget):
    refundRequested = Signal(object)     # Op to refund
    topUpRequested = Signal(str)         # account id typed so far
    completeRequested = Signal(object)   # hold Op to complete (capture)
    membersRequested = Signal()          # Member… : new member, card, close
    pickRequested = Signal(str, object, int)   # query, matches, look-up number: the pick list
    lookupStarted = Signal()             # a new look-up: an open pick list is another customer's

    COLUMNS = 7

    def __init__(self, engine, parent=None):
        super().__init__(parent)
        self.setObjectName("salePage")
        self.engine = engine
        self.cashier = None
        self.shift_id: int | None = None
        self.busy_txn: str | None = None          # the sale's operation until answered
        self._account: AccountView | None = None
        self._refreshing = False
        self._rows: dict[str, int] = {}           # txn id -> history row
        self._ops: dict[str, Op] = {}
        self._screen_account = ""                 # the customer on screen (looked up or charged)
        self._watch_txn: str | None = None        # the panel's operation while it is being checked
        self._checking: set[str] = set()          # operations shown as being checked, not yet resolved
        self._result_account: str | None = None   # whose result the panel shows
        self._result_reason = ""                  # the refusal the panel shows (e.g. offline)
        self._lookup_no = 0                       # the look-up whose answer may still be shown
        self.large_amount_minor = LARGE_AMOUNT_MINOR
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
        self.result_label = QLabel(objectName="resultLabel", wordWrap=True,
                                   alignment=Qt.AlignmentFlag.AlignCenter)
        # The notice sits in the history bar with a fixed height, always laid out (empty
        # when there is nothing to say), so that nothing moves when it appears.
        self.notice_label = QLabel(objectName="noticeLabel", wordWrap=True)
        self.notice_label.setProperty("tone", "none")
        self.notice_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.keypad = Keypad(lambda: self.amount_input)
        self.keypad.setMaximumHeight(330)
        self.history_title = QLabel(objectName="historyTitle")
        self.history_table = QTableWidget(0, self.COLUMNS, objectName="historyTable")
        self.history_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.history_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.history_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.history_table.verticalHeader().hide()
        self.history_table.setMinimumHeight(110)
        self.history_table.setTabKeyNavigation(False)     # Tab leaves the table, never trapped in it
        self.history_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        # card numbers are long: that column takes the room it needs
        self.history_table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.history_table.itemSelectionChanged.connect(self._selection_changed)
        self.refund_button = QPushButton(objectName="refundButton", clicked=self._ask_refund)
        self.refund_button.setEnabled(False)
        self.top_up_button = QPushButton(objectName="topUpButton",
                                         clicked=lambda: self.topUpRequested.emit(self.account_input.text().strip()))

        self.account_input.returnPressed.connect(self.look_up)
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

        form = QGridLayout()
        form.setVerticalSpacing(6)
        form.addWidget(self.account_label, 0, 0, 1, 3)
        form.addWidget(self.account_input, 1, 0)
        form.addWidget(self.lookup_button, 1, 1)
        form.addWidget(self.members_button, 1, 2)
        form.addWidget(self.account_error, 2, 0, 1, 3)
        form.addWidget(self.balance_label, 3, 0, 1, 3)
        form.addWidget(self.amount_label, 4, 0, 1, 3)
        form.addWidget(self.amount_input, 5, 0, 1, 3)
        form.addWidget(self.amount_error, 6, 0, 1, 3)
        buttons = QHBoxLayout()
        buttons.addWidget(self.charge_button, 3)
        buttons.addWidget(self.hold_button, 2)
        buttons.addWidget(self.new_sale_button, 2)
        hold_panel = QFrame(objectName="holdPanel")
        hold_column = QVBoxLayout(hold_panel)
        hold_column.setContentsMargins(10, 6, 6, 6)
        hold_column.setSpacing(6)
        hold_column.addWidget(self.hold_info)
        hold_buttons = QHBoxLayout()
        hold_buttons.addWidget(self.complete_button, 3)
        hold_buttons.addWidget(self.release_button, 2)
        hold_column.addLayout(hold_buttons)
        left = QVBoxLayout()
        left.addLayout(form)
        left.addLayout(buttons)
        left.addWidget(self.result_label)
        right = QVBoxLayout()        # the keypad, and under it the hold panel (no extra height)
        right.addWidget(self.keypad, 1)
        right.addSpacing(8)
        right.addWidget(hold_panel, 0)
        top = QHBoxLayout()
        top.addLayout(left, 3)
        top.addSpacing(24)
        top.addLayout(right, 2)
        history_bar = QHBoxLayout()
        history_bar.addWidget(self.history_title)
        history_bar.addSpacing(12)
        history_bar.addWidget(self.notice_label, 1)
        history_bar.addWidget(self.top_up_button)
        history_bar.addWidget(self.refund_button)
        card = QFrame(objectName="saleCard")
        card.setLayout(top)
        top.setContentsMargins(12, 8, 12, 8)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addWidget(card, 0)
        outer.addLayout(history_bar)
        outer.addWidget(self.history_table, 1)

        engine.opResolved.connect(self._resolved)
        engine.opUncertain.connect(self._uncertain)
        engine.connectionChanged.connect(self._connection_changed)
        self._set_result("", "")
        self.retranslate()
        self._update_buttons()

    def resizeEvent(self, event) -> None:
        # Heights that must not change with their text (so that no button moves when a
        # notice, an error or a hold appears): set from the current (scaled) fonts.
        super().resizeEvent(event)
        self.notice_label.setFixedHeight(self.refund_button.sizeHint().height())
        self.hold_info.setFixedHeight(2 * self.hold_info.fontMetrics().lineSpacing() + 10)   # 2 lines, bold or not
        for label in (self.account_error, self.amount_error):
            label.setMinimumHeight(label.fontMetrics().lineSpacing())
        self.history_table.verticalHeader().setDefaultSectionSize(self.history_table.fontMetrics().height() + 8)
        # the result panel has room for three lines whatever it says
        self.result_label.setFixedHeight(3 * self.result_label.fontMetrics().lineSpacing() + 14)

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
        self.history_table.setHorizontalHeaderLabels([
            self.tr("Time"), self.tr("Type"), self.tr("Account"), self.tr("Amount"), self.tr("Result"),
            self.tr("Balance after"), self.tr("Cashier")])
        self._show_account()
        for txn_id in self._rows:
            self._fill_row(self._ops[txn_id])
        self._show_hold_panel(self.target_hold())
        if self._last_result:
            self._show_decision(self._last_result[1])

    _last_result: tuple | None = None

    def _set_result(self, tone: str, text: str, *, remember: tuple | None = None,
                    account_id: str | None = None, reason: str = "") -> None:
        """The result panel: `account_id` is the customer it is about (None: nobody in
        particular), `reason` the refusal it shows, so that a new customer or a
        connection change can take it away."""
        self._last_result = remember
        self._result_account = remember[1].account_id if remember else account_id
        self._result_reason = reason
        self.result_label.setText(text)
        self.result_label.setProperty("tone", tone or "idle")
        self.result_label.style().unpolish(self.result_label)
        self.result_label.style().polish(self.result_label)

    # ---------------------------------------------------------------- session

    def start(self, cashier, shift_id: int, ops: list[Op]) -> None:
        self.cashier, self.shift_id = cashier, shift_id
        self.history_table.setRowCount(0)
        self._rows.clear()
        self._ops.clear()
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
        self.cashier, self.shift_id = None, None
        self.refresh_timer.stop()
        self.new_sale()

    # ---------------------------------------------------------------- account

    def _account_edited(self, text: str) -> None:
        self._lookup_no += 1              # an answer to what was there before is not for this
        self.account_error.clear()
        if self._account is not None:
            self._account = None
            self._show_account()
        if self._result_account is not None and self._result_account != text.strip():
            self._clear_result()      # that result was another customer's
        self._update_buttons()        # the hold panel follows the account typed

    def take_scan(self, code: str) -> None:
        """A card scanned anywhere in the window (scanner.ScanDetector): it replaces
        whatever the account field held and is looked up at once."""
        self.account_input.setText(code)
        self.look_up()

    def _customer_changes_to(self, account_id: str) -> None:
        """A different account comes on screen: the previous customer's result, amount
        and operation in flight are not this customer's."""
        if account_id == self._screen_account:
            return
        if self._screen_account:
            self.amount_input.clear()
            self.amount_error.clear()
        self._screen_account = account_id
        self.busy_txn = None                  # still with the engine; its end goes to the notice
        self._watch_txn = None
        if self._result_account != account_id:
            self._clear_result()
        self._update_buttons()

    def _clear_result(self) -> None:
        self._set_result("", "")

    def look_up(self) -> None:
        """Enter in the account field, Look up, a scan: find the card, account or member."""
        query = self.account_input.text().strip()
        if not query:
            self.account_error.setText(id_error_words(self.tr("Account"), "must not be empty"))
            self.account_input.setFocus()
            return
        if len(query) > MAX_QUERY_LEN:
            self.account_error.setText(id_error_words(self.tr("Account"), "longer than 64"))
            self.account_input.setFocus()
            return
        self._lookup_no += 1
        number = self._lookup_no
        self.lookupStarted.emit()
        self.account_error.clear()
        self._customer_changes_to(query)
        self._account = None
        self.balance_label.setText(self.tr("Looking up %1…").replace("%1", query))
        self.amount_input.setFocus()
        self.amount_input.selectAll()
        self.engine.find(query, lambda found: self._found(number, query, found),
                         lambda exc: self._lookup_failed(query, exc, number))

    def _current(self, number: int, query: str) -> bool:
        """Is the answer to look-up `number` still wanted (nothing typed or looked up since)?"""
        return number == self._lookup_no and self.account_input.text().strip() == query

    def _found(self, number: int, query: str, found) -> None:
        if not self._current(number, query):
            return                                   # the cashier has moved on
        if found.view is not None:
            self.show_account(found.view, query)
        elif found.blocked is not None:
            self._lookup_failed(query, found.blocked, number)
        elif found.matches:
            self.balance_label.setText(self.tr("%1 members found: pick one").replace("%1", str(len(found.matches))))
            self.pickRequested.emit(query, found.matches, number)
        else:
            self._lookup_failed(query, AccountNotFound(query), number)

    def show_account(self, view: AccountView, query: str = "") -> None:
        """Put a found account on screen; the field holds its id from now on. `query`:
        what found it (a card, a phone: the same customer, so what was typed for them
        meanwhile stays)."""
        self._lookup_no += 1
        if query and self._screen_account == query:
            self._screen_account = view.account_id
            if self._result_account == query:
                self._result_account = view.account_id
        self._customer_changes_to(view.account_id)
        self.account_input.setText(view.account_id)
        self._account = view
        self.account_error.clear()
        self._show_account()
        self._update_buttons()

    def pick(self, number: int, account_id: str) -> bool:
        """The pick list's answer: look that account up, unless the cashier has moved on
        since look-up `number` (then nothing happens and False is answered)."""
        if number != self._lookup_no:
            return False
        self.account_input.setText(account_id)
        self.look_up()
        return True

    def _looked_up(self, account_id: str, view: AccountView) -> None:
        if self.account_input.text().strip() != account_id:
            return                                   # the cashier has moved on
        self._account = view
        self._show_account()
        self._update_buttons()

    def refresh_account(self) -> None:
        """Re-read the account on screen (timer; after each operation). Quiet: no focus
        change, and a failed read keeps what is shown."""
        if self.engine.closed:
            self.refresh_timer.stop()
            return
        view = self._account
        if view is None or self._refreshing or self.engine.state != ONLINE:
            self._refill_hold_rows()
            return
        self._refreshing = True

        def done(new: AccountView) -> None:
            self._refreshing = False
            current = self._account
            if current is not None and current.account_id == new.account_id and new.read_ms >= current.read_ms:
                self._account = new
                self._show_account()

        def failed(_exc: Exception) -> None:
            self._refreshing = False
        self.engine.lookup(view.account_id, done, failed)
        self._refill_hold_rows()

    def _lookup_failed(self, account_id: str, exc: Exception, number: int | None = None) -> None:
        if self.account_input.text().strip() != account_id or (number is not None and number != self._lookup_no):
            return
        self._account = None
        self.balance_label.clear()
        self._update_buttons()
        if getattr(exc, "status", None) is not None and getattr(exc, "card_no", None):   # a blocked card
            self.account_error.setText(
                self.tr("Card %1 is blocked (reported %2): it cannot be used. Find the member by phone or "
                        "name, then give them a new card (Member…).").replace("%1", exc.card_no)
                .replace("%2", card_reason_words(exc.reason or "lost").lower()))
        elif isinstance(exc, AccountNotFound):
            self.account_error.setText(self.tr("Account: unknown account %1 (no card, phone or name matches)").replace("%1", account_id))
        elif isinstance(exc, InvalidRequest):
            self.account_error.setText(id_error_words(self.tr("Account"), exc.reason))
        else:
            self.account_error.setText(self.tr("Account: cannot look up now (no connection to the central server)"))
        self.account_input.setFocus()
        self.account_input.selectAll()

    def _show_account(self) -> None:
        info = self._account
        if info is None:
            if not self.account_input.text().strip():
                self.balance_label.setText(self.tr("Scan a card to start"))
            return
        loc = QLocale()
        text = (self.tr("Account %1 · %2").replace("%1", info.account_id)
                .replace("%2", account_status_words(info.status)))
        if info.holder_name:   # a name, not UI text: shown as given, never translated
            text += f" · {info.holder_name}"
        text += "\n"
        if info.held_minor:
            text += (self.tr("Balance %1 · On hold %2 · Available %3")
                     .replace("%1", money.format_minor(info.balance_minor, loc))
                     .replace("%2", money.format_minor(info.held_minor, loc))
                     .replace("%3", money.format_minor(info.available_minor, loc)))
        else:
            text += self.tr("Balance %1").replace("%1", money.format_minor(info.balance_minor, loc))
        if info.bonus_minor:
            text += " · " + (self.tr("principal %1 + bonus %2")
                             .replace("%1", money.format_minor(info.principal_minor, loc))
                             .replace("%2", money.format_minor(info.bonus_minor, loc)))
        self.balance_label.setText(text)
        self.balance_label.setProperty("tone", "frozen" if info.status == "frozen" else "")
        self.balance_label.style().unpolish(self.balance_label)
        self.balance_label.style().polish(self.balance_label)

    # ---------------------------------------------------------------- charge

    def _update_buttons(self) -> None:
        idle = self.busy_txn is None and self.cashier is not None
        online = self.engine.state == ONLINE
        self.charge_button.setEnabled(idle and online)
        self.hold_button.setEnabled(idle and online)
        self.refund_button.setEnabled(idle and online and self._selected_refundable() is not None)
        self.top_up_button.setEnabled(idle and online)
        hold = self.target_hold()
        self.complete_button.setEnabled(idle and online and hold is not None)
        self.release_button.setEnabled(idle and online and hold is not None)
        self._show_hold_panel(hold)
        self.hold_info.setProperty("tone", "hold" if hold is not None else "")
        self.hold_info.style().unpolish(self.hold_info)
        self.hold_info.style().polish(self.hold_info)

    def _validated(self) -> tuple[str, int] | None:
        account_id = self.account_input.text().strip()
        ok = True
        try:
            check_id(account_id, "account_id")
        except InvalidRequest as exc:
            self.account_error.setText(id_error_words(self.tr("Account"), exc.reason))
            ok = False
        try:
            amount_minor = money.parse_amount_minor(self.amount_input.text(),
                                                    decimal_point=QLocale().decimalPoint())
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
        if self.busy_txn is not None:
            self._set_result("checking", refusal_words("busy"))
            return
        if self.cashier is None or self.shift_id is None:
            return
        checked = self._validated()
        if checked is None:
            return
        self.confirm_large(checked[1], lambda: self.start_operation(kind, *checked), parent=self)

    def confirm_large(self, amount_minor: int, go, *, parent) -> None:
        """Run `go()` now, or, for an amount above `large_amount_minor`, once the cashier
        has confirmed the amount shown in words (dialogs.ConfirmDialog)."""
        if amount_minor <= self.large_amount_minor:
            go()
            return
        from .dialogs import ConfirmDialog
        loc = QLocale()
        self.confirm_dialog = ConfirmDialog(
            self.tr("Large amount: %1\n%2\nIs this amount right?")
            .replace("%1", money.format_minor(amount_minor, loc))
            .replace("%2", money.amount_in_words(amount_minor, loc)),
            self.tr("Yes, this amount"), parent.window())
        self.confirm_dialog.accepted.connect(go)
        self.confirm_dialog.open()

    # ---------------------------------------------------------------- holds

    def target_hold(self) -> Op | None:
        """The hold the panel acts on: the open hold selected in the history, else the
        newest open hold of the account on screen; None when there is none."""
        if self.engine.closed:
            return None
        selected = self._selected_op()
        if selected is not None and selected.kind == "hold":
            if selected.applied and self.engine.outbox.hold_state(selected) == HOLD_OPEN:
                return selected
            return None
        account_id = self.account_input.text().strip()
        if not account_id:
            return None
        for hold in self.engine.outbox.open_holds(account_id):
            if self.engine.outbox.hold_state(hold) == HOLD_OPEN:
                return hold
        return None

    def _show_hold_panel(self, hold: Op | None) -> None:
        if hold is None:
            self.hold_info.setText(self.tr("No open hold"))
            return
        self.hold_info.setText(self.tr("Open hold: %2 until %3\nAccount %1")
                               .replace("%1", hold.account_id)
                               .replace("%2", money.format_minor(hold.amount_minor, QLocale()))
                               .replace("%3", clock_time(hold.expires_ms)))

    def complete_sale(self) -> None:
        """Complete sale…: asks for the final amount (the main window opens the dialog)."""
        if self.busy_txn is not None:
            self._set_result("checking", refusal_words("busy"))
            return
        hold = self.target_hold()
        if hold is None:
            self._set_result("declined", refusal_words("no_hold"))
            return
        self.completeRequested.emit(hold)

    def release_hold(self) -> None:
        """Release hold: gives the whole held amount back to the account (void)."""
        if self.busy_txn is not None:
            self._set_result("checking", refusal_words("busy"))
            return
        hold = self.target_hold()
        if hold is None:
            self._set_result("declined", refusal_words("no_hold"))
            return
        from .dialogs import ConfirmDialog
        self.confirm_dialog = ConfirmDialog(
            self.tr("Release the hold of %1 on account %2? The money goes back to the account.")
            .replace("%1", money.format_minor(hold.amount_minor, QLocale())).replace("%2", hold.account_id),
            self.tr("Release hold"), self.window())
        self.confirm_dialog.accepted.connect(
            lambda: self.start_operation("void", hold.account_id, hold.amount_minor, original_txn_id=hold.txn_id))
        self.confirm_dialog.open()

    def typed_amount_minor(self) -> int | None:
        """The amount in the amount field if it is a valid amount, else None (no message)."""
        try:
            return money.parse_amount_minor(self.amount_input.text(), decimal_point=QLocale().decimalPoint())
        except money.AmountError:
            return None

    # ---------------------------------------------------------------- operations

    def start_operation(self, kind: str, account_id: str, amount_minor: int, *,
                        original_txn_id: str = "", approved_by: str = "", method: str = "",
                        bonus_minor: int = 0, card_no: str = "", detail: dict | None = None) -> Op | None:
        """Start a charge, refund, top-up, hold, capture or void, or a member operation
        (open, card_replace, close), as this screen's one operation in flight."""
        if self.busy_txn is not None:
            self._set_result("checking", refusal_words("busy"))
            return None
        if self.cashier is None:
            self._set_result("declined", refusal_words("no_shift"))
            return None
        if kind in ("capture", "void"):
            hold = self.engine.outbox.get(original_txn_id)
            if hold is not None and hold.kind == "hold" and self.engine.outbox.hold_state(hold) != HOLD_OPEN:
                self._set_result("declined", refusal_words("hold_closed"))
                return None
        if account_id != self.account_input.text().strip():
            # e.g. a refund of an earlier customer's charge picked in the history: that
            # customer comes on screen, so the result is never shown under someone else
            self.account_input.setText(account_id)
            if kind == "open":            # not there yet: looked up once it is opened
                self._lookup_no += 1
                self._customer_changes_to(account_id)
                self._account = None
                self.account_error.clear()
                self.balance_label.clear()
            else:
                self.look_up()
        try:
            op = self.engine.submit(kind, account_id, amount_minor, self.cashier.cashier_id,
                                    shift_id=self.shift_id, original_txn_id=original_txn_id,
                                    approved_by=approved_by, method=method, bonus_minor=bonus_minor,
                                    card_no=card_no, detail=detail)
        except Refused as exc:
            self._set_result("declined", refusal_words(exc.reason), account_id=account_id, reason=exc.reason)
            return None
        self.busy_txn = op.txn_id
        self._watch_txn = op.txn_id
        self._screen_account = account_id
        self._update_buttons()
        self._add_or_update(op)
        loc = QLocale()
        text = {"deduct": self.tr("Charging %1 to %2…"), "refund": self.tr("Refunding %1 to %2…"),
                "credit": self.tr("Topping up %1 to %2…"), "hold": self.tr("Holding %1 on %2…"),
                "capture": self.tr("Completing the sale: %1 from %2…"),
                "void": self.tr("Releasing the hold of %1 on %2…"),
                "open": self.tr("Opening member account %2…"),
                "card_replace": self.tr("Changing the card of %2…"),
                "close": self.tr("Closing account %2…")}[kind]
        self._set_result("working", text.replace("%1", money.format_minor(amount_minor, loc))
                         .replace("%2", account_id), account_id=account_id)
        return op

    def _resolved(self, op: Op) -> None:
        self._add_or_update(op)
        if op.applied and self._account is not None and self._account.account_id == op.account_id:
            self._account = self._after(self._account, op)
            self._show_account()
            self.refresh_account()            # the rest (e.g. others' holds), read fresh: own write
        elif op.applied and self._account is None and self.account_input.text().strip() == op.account_id:
            # typed without a look-up: read it now (fresh: this write dropped the cached entry)
            self.engine.lookup(op.account_id, lambda view: self._looked_up(op.account_id, view),
                               lambda _exc: None)
        was_checked = op.txn_id in self._checking
        self._checking.discard(op.txn_id)
        if op.txn_id != self._watch_txn:
            if was_checked:               # the panel moved on: say it in the notice
                self.show_notice(self.resolved_words(op))
            return
        self.busy_txn = None
        self._watch_txn = None
        self._show_decision(op)
        if op.applied:
            if op.kind in ("deduct", "hold", "capture"):
                self.amount_input.clear()
            self.account_input.setFocus()
            self.account_input.selectAll()
        else:
            self.amount_input.setFocus()
        self._update_buttons()

    def _after(self, view: AccountView, op: Op) -> AccountView:
        """The account on screen right after `op` applied, from the op's own (fresh) answer:
        the balance after it (a hold answers the available balance instead)."""
        if op.kind == "hold":
            return replace(view, available_minor=op.balance_after_minor, read_ms=now_ms())
        held_minor = view.held_minor
        if op.kind == "credit":           # the bonus came with it
            view = replace(view, bonus_minor=view.bonus_minor + op.bonus_minor)
        elif op.kind == "close":
            view = replace(view, bonus_minor=0, status="closed")
        elif op.bonus_delta_minor is not None:
            view = replace(view, bonus_minor=max(0, view.bonus_minor + op.bonus_delta_minor))
        if op.kind in ("capture", "void"):
            hold = self.engine.outbox.get(op.original_txn_id)
            held_minor = max(0, held_minor - (hold.amount_minor if hold else 0))
        # a charge's split is read later: until the refresh, never more bonus than balance
        return replace(view, balance_minor=op.balance_after_minor, bonus_minor=min(view.bonus_minor,
                                                                                   op.balance_after_minor),
                       available_minor=op.balance_after_minor - held_minor, read_ms=now_ms())

    def _show_decision(self, op: Op) -> None:
        loc = QLocale()
        fmt = lambda m: money.format_minor(m, loc)  # noqa: E731
        if op.applied:
            if op.kind == "hold":
                text = (self.tr("Held: %1 until %2").replace("%1", fmt(op.amount_minor))
                        .replace("%2", clock_time(op.expires_ms)) + "\n"
                        + self.tr("Available now %1").replace("%1", fmt(op.balance_after_minor)))
            elif op.kind == "void":
                text = (self.tr("Hold released: %1").replace("%1", fmt(op.amount_minor)) + "\n"
                        + self.tr("Balance %1").replace("%1", fmt(op.balance_after_minor)))
            elif op.kind in ("open", "card_replace", "close"):
                text = member_outcome_words(op)
            elif op.kind == "credit":
                text = ((self.tr("Topped up: %1 (%2)") if not op.bonus_minor else
                         self.tr("Topped up: %1 (%2) + bonus %3"))
                        .replace("%1", fmt(op.amount_minor)).replace("%2", method_words(op.method or "cash"))
                        .replace("%3", fmt(op.bonus_minor)) + "\n"
                        + self.tr("New balance %1").replace("%1", fmt(op.balance_after_minor)))
            else:
                hold = self.engine.outbox.get(op.original_txn_id) if op.kind == "capture" else None
                if hold is not None and hold.amount_minor > op.amount_minor:
                    verb = (self.tr("Sale completed: %1 charged, %2 released")
                            .replace("%2", fmt(hold.amount_minor - op.amount_minor)))
                else:
                    verb = {"deduct": self.tr("Approved: %1 charged"), "refund": self.tr("Refunded: %1"),
                            "credit": self.tr("Topped up: %1"),
                            "capture": self.tr("Sale completed: %1 charged")}[op.kind]
                text = (verb.replace("%1", fmt(op.amount_minor)) + "\n"
                        + self.tr("New balance %1").replace("%1", fmt(op.balance_after_minor)))
            self._set_result("approved", text, remember=("approved", op))
        else:
            self._set_result("declined", member_outcome_words(op) if op.kind in MEMBER_KINDS
                             else status_words(op.status), remember=("declined", op))

    def resolved_words(self, op: Op) -> str:
        """One line for an operation that was being checked and is now decided."""
        return (self.tr("Checked: %1 %2 for %3: %4").replace("%1", kind_words(op.kind))
                .replace("%2", money.format_minor(op.amount_minor, QLocale())).replace("%3", op.account_id)
                .replace("%4", short_status(op.status, op.pending)))

    def _uncertain(self, op: Op) -> None:
        self._add_or_update(op)
        self._checking.add(op.txn_id)
        if op.txn_id == self._watch_txn:
            # Only this account waits (the engine refuses it until the answer is known);
            # the next customer can be served meanwhile.
            self.busy_txn = None
            self._set_result("checking", self.tr(
                "Being checked: the central server has not answered yet.\n"
                "Do NOT charge again. The terminal keeps trying on its own."), account_id=op.account_id)
            self._update_buttons()

    def _connection_changed(self, state: str, _detail: str = "") -> None:
        """The panel must not say "No connection" once it is back, nor stay quiet when
        it is lost while nothing is in flight."""
        if self._watch_txn is None:
            if state == ONLINE and self._result_reason in ("offline", "not_initialized", "unsafe"):
                self._set_result("approved", self.tr("Connected again: charges can be made."))
            elif state in ("offline", "not_initialized", "unsafe"):
                self._set_result("declined", refusal_words(state), reason=state)
        self._update_buttons()

    def new_sale(self) -> None:
        """Clear the screen for the next customer. A charge still being checked stays
        with the engine (counted in the status bar) and keeps its account blocked."""
        self.busy_txn = None
        self._watch_txn = None
        self._screen_account = ""
        self._account = None
        self.account_input.clear()
        self.amount_input.clear()
        self.account_error.clear()
        self.amount_error.clear()
        self._set_result("", "")
        self._show_account()
        self._update_buttons()
        self.account_input.setFocus()

    def show_notice(self, text: str) -> None:
        """A note beside the history (e.g. a charge that was being checked is decided);
        the full text is also the tooltip when it is longer than the bar."""
        self.notice_label.setText(text)
        self.notice_label.setToolTip(text)
        self.notice_label.setProperty("tone", "info" if text else "none")
        self.notice_label.style().unpolish(self.notice_label)
        self.notice_label.style().polish(self.notice_label)

    # ---------------------------------------------------------------- history

    def _add_or_update(self, op: Op, *, any_shift: bool = False) -> None:
        if (op.shift_id != self.shift_id and op.txn_id not in self._rows and not op.pending
                and not any_shift):
            return
        self._ops[op.txn_id] = op
        if op.txn_id not in self._rows:
            self.history_table.insertRow(0)
            self._rows = {t: r + 1 for t, r in self._rows.items()}
            self._rows[op.txn_id] = 0
        self._fill_row(op)
        if op.kind in ("capture", "void") and op.original_txn_id in self._rows:
            self._fill_row(self._ops[op.original_txn_id])     # the hold's state changed
        self._update_buttons()

    def _refill_hold_rows(self) -> None:
        """Holds change state with time (expiry): re-show them."""
        for txn_id in self._rows:
            if self._ops[txn_id].kind == "hold":
                self._fill_row(self._ops[txn_id])

    def _fill_row(self, op: Op) -> None:
        row, loc = self._rows[op.txn_id], QLocale()
        # only money that moved gets a sign: a declined charge took nothing
        sign = -1 if op.kind in ("deduct", "capture") and op.applied else 1
        if op.kind == "hold" and op.applied and not self.engine.closed:
            result = hold_state_words(self.engine.outbox.hold_state(op), clock_time(op.expires_ms))
        else:
            result = short_status(op.status, op.pending)
        shows_balance = op.balance_after_minor is not None and op.applied and op.kind != "hold"
        cells = [datetime.fromtimestamp(op.created_ms / 1000).strftime("%H:%M:%S"), kind_words(op.kind),
                 op.account_id, money.format_minor(sign * op.amount_minor, loc), result,
                 money.format_minor(op.balance_after_minor, loc) if shows_balance else "",
                 op.cashier_id]
        tone = "pending" if op.pending else "applied" if op.applied else "declined"
        for col, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, op.txn_id)
            item.setData(ROW_TONE_ROLE, tone)
            if col in (3, 5):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if tone != "applied":
                item.setForeground(QBrush(QColor(ROW_COLOURS[tone])))
                if tone == "declined" and col == 3:
                    font = item.font()
                    font.setStrikeOut(True)    # the amount that was not taken
                    item.setFont(font)
            self.history_table.setItem(row, col, item)

    def op_at_row(self, row: int) -> Op | None:
        item = self.history_table.item(row, 0)
        return self._ops.get(item.data(Qt.ItemDataRole.UserRole)) if item else None

    def _selected_op(self) -> Op | None:
        rows = self.history_table.selectionModel().selectedRows() if self.history_table.selectionModel() else []
        return self.op_at_row(rows[0].row()) if rows else None

    def _selected_refundable(self) -> Op | None:
        """A selected applied charge or completed sale (a capture refunds like a charge)."""
        op = self._selected_op()
        return op if op and op.kind in ("deduct", "capture") and op.applied else None

    def _selection_changed(self) -> None:
        self._update_buttons()

    def _ask_refund(self) -> None:
        op = self._selected_refundable()
        if op is not None:
            self.refundRequested.emit(op)

    def refund_shortcut(self) -> None:
        """F5: refund the selected charge; with none selected, say how to choose one."""
        if not self.refund_button.isEnabled():
            if self._selected_refundable() is None and self.cashier is not None:
                self._set_result("declined", self.tr("Refund: select an approved charge in the list first "
                                                     "(Tab to the list, arrow keys to choose)."))
                self.history_table.setFocus()
            return
        self._ask_refund()
