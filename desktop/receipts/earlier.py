"""Refunds and reprints of earlier sales, at any terminal, in any later shift.

"Earlier sale…" opens `EarlierSaleDialog`: scan the receipt's QR code or barcode (a
keyboard-wedge scanner types the receipt number and Enter into the focused receipt
number field), type the number, or show an account's recent history (last operations
of every terminal) and pick one. The operation is loaded from the central Redis
(`core.history`, read-only, on the engine's read worker): amount, what is refunded
already and what is left. "Refund…" then opens the usual refund dialog (supervisor PIN,
full or partial) with what is left as the limit; "Reprint" prints the slip again marked
REPRINT. Outside the refund window the dialog says so and what to do instead.
"""
from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QLocale, Qt
from PySide6.QtWidgets import QDialog, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton, QVBoxLayout

from core import InvalidRequest, LedgerError
from core.history import OperationNotFound, PastOperation, RefundCheck
from core.kinds import MONEY_KINDS
from core.members import check_phone
from core.validation import check_id

from .. import money
from core.sales import decode_tenders

from ..dialogs import RefundDialog
from ..history_model import HistoryModel, HistoryView, past_row
from ..outbox import RESOLVED, Op, now_ms
from ..texts import id_error_words, kind_words
from .model import RECEIPT_KINDS
from ..i18n import Retranslates

RECENT_COUNT = 20


def op_of(past: PastOperation) -> Op:
    """The loaded operation as the terminal's refund dialog takes it."""
    return Op(past.txn_id, past.kind, past.account_id, past.amount_minor, past.terminal_id,
              past.cashier_id, None, past.occurred_ms, state=RESOLVED, status=past.status,
              balance_after_minor=past.balance_after_minor)


class EarlierRefundDialog(RefundDialog):
    """The refund dialog for a sale loaded from the ledger: the limit is what the ledger
    says is left (refunds from every terminal), less this terminal's refunds of it that
    are still being checked."""

    def __init__(self, sale_page, past: PastOperation, parent=None):
        super().__init__(sale_page, op_of(past), parent)
        in_flight = sum(op.amount_minor for op in sale_page.engine.unresolved()
                        if op.kind == "refund" and op.original_txn_id == past.txn_id)
        self.refundable_minor = max(0, past.refundable_minor - in_flight)
        self.amount_input.setText(money.format_plain(self.refundable_minor))
        if past.kind == "sale":
            # a split-tender sale: each tender's part the ledger says is left, less this
            # terminal's refunds of it still being checked
            checking: dict[str, int] = {}
            for op in sale_page.engine.unresolved():
                if op.original_txn_id == past.txn_id and op.kind in ("refund", "tender_refund"):
                    parts = {"card": op.amount_minor} if op.kind == "refund" else \
                        {"card": op.details.get("card_minor", 0), **op.details.get("tenders", {})}
                    for tender, given in parts.items():
                        checking[tender] = checking.get(tender, 0) + given
            left = {"card": past.refundable_minor, **decode_tenders(past.tenders)}
            self.set_split_left({t: a - checking.get(t, 0) for t, a in left.items()})
        self.retranslate()


class EarlierSaleDialog(Retranslates, QDialog):
    def __init__(self, sale_page, receipts=None, parent=None, *, refund_window_s: int | None = None):
        super().__init__(parent)
        self.setObjectName("earlierSaleDialog")
        self.sale = sale_page
        self.engine = sale_page.engine
        self.receipts = receipts                  # a ReceiptService, for reprints (optional)
        self.history = self.engine.history          # through the gateway
        self.refund_window_s = refund_window_s
        self.loaded: PastOperation | None = None
        self.recent: list[PastOperation] = []
        self.refund_dialog: EarlierRefundDialog | None = None
        # the reads in flight (workers.Task): a newer load or history read cancels the older one's
        self.load_task = None
        self.history_task = None

        self.number_label, self.account_label = QLabel(), QLabel()
        self.number_input = QLineEdit(objectName="receiptNumberInput")
        self.number_input.setMaxLength(64)
        self.load_button = QPushButton(objectName="loadReceiptButton", clicked=self.load_typed)
        self.account_input = QLineEdit(objectName="earlierAccountInput")
        self.account_input.setMaxLength(64)
        self.history_button = QPushButton(objectName="accountHistoryButton", clicked=self.show_history)
        self.table = HistoryView(HistoryModel(7), objectName="accountHistoryTable")
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)     # receipt numbers: both ends matter
        self.table.selectionModel().selectionChanged.connect(self._picked)
        self.summary = QLabel(objectName="earlierSaleSummary", wordWrap=True)
        self.message = QLabel(objectName="earlierMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.refund_button = QPushButton(objectName="refundEarlierButton", clicked=self.refund)
        self.refund_button.setProperty("role", "primary")
        self.reprint_button = QPushButton(objectName="reprintEarlierButton", clicked=self.reprint)
        self.close_button = QPushButton(objectName="closeEarlierButton", clicked=self.reject)

        # Enter (a scanner's last key) must only load: no button of this dialog is a default one
        for button in (self.load_button, self.history_button, self.refund_button, self.reprint_button,
                       self.close_button):
            button.setAutoDefault(False)
        number_row = QHBoxLayout()
        number_row.addWidget(self.number_input, 1)
        number_row.addWidget(self.load_button)
        account_row = QHBoxLayout()
        account_row.addWidget(self.account_input, 1)
        account_row.addWidget(self.history_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.reprint_button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        buttons.addWidget(self.refund_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.number_label)
        layout.addLayout(number_row)
        layout.addWidget(self.account_label)
        layout.addLayout(account_row)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.summary)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.setMinimumSize(1000, 600)
        self.number_input.returnPressed.connect(self.load_typed)
        self.account_input.returnPressed.connect(self.show_history)
        self.retranslate()
        self._update()
        self.number_input.setFocus()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.number_input.setFocus()          # a scanner types into the focused field

    # ---------------------------------------------------------------- texts

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Earlier sale: refund or reprint"))
        self.number_label.setText(self.tr("Receipt number (scan the code on the receipt, or type it)"))
        self.number_input.setPlaceholderText(self.tr("e.g. T1-d-…"))
        self.load_button.setText(self.tr("Load"))
        self.account_label.setText(self.tr("Or an account's recent history (all terminals)"))
        self.account_input.setPlaceholderText(self.tr("Card, phone or account number"))
        self.history_button.setText(self.tr("Show history"))
        self.refund_button.setText(self.tr("Refund…"))
        self.reprint_button.setText(self.tr("Reprint"))
        self.close_button.setText(self.tr("Close"))
        self.table.model().set_headers([
            self.tr("Time"), self.tr("Type"), self.tr("Amount"), self.tr("Refunded"), self.tr("Balance after"),
            self.tr("Terminal"), self.tr("Receipt number")])
        self._fill_table()
        self._show_loaded()

    # ---------------------------------------------------------------- lookups

    def load_typed(self) -> None:
        number = self.number_input.text().strip()
        try:
            check_id(number, "txn_id")
        except InvalidRequest as exc:
            self.message.setText(id_error_words(self.tr("Receipt number"), exc.reason))
            return
        self.load(number)

    def load(self, txn_id: str) -> None:
        """Load one operation by its receipt number (from a scan, the field or the table)."""
        self.message.setText(self.tr("Looking up receipt %1…").replace("%1", txn_id))
        self.loaded = None
        if self.load_task is not None:
            self.load_task.cancel()               # the sale loaded before is not wanted any more
        self.load_task = self.engine.reads.run(lambda: self.history.load(txn_id), self._loaded, self._failed)
        self._update()

    @property
    def _reading(self) -> int:
        """How many reads are in flight whose answers are still wanted."""
        return sum(1 for task in (self.load_task, self.history_task) if task is not None and task.pending)

    def _loaded(self, past: PastOperation) -> None:
        self.loaded = past
        self.message.clear()
        self._show_loaded()
        self._update()

    def _failed(self, exc: Exception) -> None:
        if isinstance(exc, OperationNotFound):
            days = f"{exc.retention_s / 86400:g}"
            self.message.setText(self.tr(
                "No sale with this receipt number in the last %1 days. Check the number. An older "
                "sale cannot be refunded at the till: the back office gives the money back as a top-up.")
                .replace("%1", days))
        elif isinstance(exc, InvalidRequest):
            self.message.setText(id_error_words(self.tr("Account") if exc.field == "account_id"
                                                else self.tr("Receipt number"), exc.reason))
        elif isinstance(exc, LedgerError):
            self.message.setText(self.tr("The central server did not answer. Try again in a moment."))
        else:
            self.message.setText(self.tr("The lookup failed: %1").replace("%1", type(exc).__name__))
        self._update()

    def show_history(self) -> None:
        """The recent history of the account typed: a card number, a member's phone or
        the account id (resolved on a worker thread)."""
        query = self.account_input.text().strip()
        try:
            check_id(query, "account_id")
        except InvalidRequest as exc:
            try:
                if not query:
                    raise
                check_phone(query)               # e.g. +86 138 0013 8000
            except InvalidRequest:
                self.message.setText(id_error_words(self.tr("Account"), exc.reason))
                return
        self.message.setText(self.tr("Reading the history of %1…").replace("%1", query))
        if self.history_task is not None:
            self.history_task.cancel()            # the account asked before is not wanted any more

        def read():
            account_id = self._account_of(query)
            return account_id, self.history.recent(account_id, count=RECENT_COUNT)
        self.history_task = self.engine.reads.run(read, lambda answer: self._history_read(*answer), self._failed)
        self._update()

    def _account_of(self, query: str) -> str:
        """The account that `query` names (worker thread): a card (active or blocked), an
        account id, or the one member whose phone it is; else `query` as it is."""
        ledger = self.engine.ledger
        try:
            card = ledger.resolve_card(query)
        except InvalidRequest:
            card = None
        if card is not None and card.account_id:
            return card.account_id
        phones = [m for m in ledger.find_members(query, limit=5) if m.matched_by == "phone"]
        return phones[0].account_id if len(phones) == 1 else query

    def _history_read(self, account_id: str, ops: list[PastOperation]) -> None:
        if account_id != self.account_input.text().strip():
            self.account_input.setText(account_id)    # the card or phone named this account
        self.recent = ops
        self.message.setText("" if ops else self.tr(
            "No recent operations of this account on the central server (it keeps about the last hour "
            "in detail). Scan or type the receipt number instead."))
        self._fill_table()
        self._update()

    def _fill_table(self) -> None:
        self.table.model().set_rows([past_row(op, self.kind_words(op.kind)) for op in self.recent])

    def kind_words(self, kind: str) -> str:
        """The terminal's words for its own kinds; the ledger's other kinds named here."""
        if kind in MONEY_KINDS:
            return kind_words(kind)
        return {"open": self.tr("Account opened"), "close": self.tr("Card closed"),
                "compensate": self.tr("Correction"), "restore": self.tr("Restored")}.get(kind, kind)

    def _picked(self) -> None:
        row = self.table.selected_row()
        if row is not None:
            self.load(self.recent[row].txn_id)     # fresh: what is refunded now

    # ---------------------------------------------------------------- the loaded operation

    def check(self) -> RefundCheck | None:
        if self.loaded is None:
            return None
        return self.loaded.refund_check(now_ms=now_ms(), window_s=self.refund_window_s)

    def _show_loaded(self) -> None:
        past = self.loaded
        if past is None:
            self.summary.clear()
            return
        loc = QLocale()
        fmt = lambda m: money.format_minor(m, loc)  # noqa: E731
        when = datetime.fromtimestamp(past.occurred_ms / 1000).strftime("%Y-%m-%d %H:%M") if past.occurred_ms else "?"
        kind = self.kind_words(past.kind)
        lines = [self.tr("%1 of %2 on account %3, %4, terminal %5").replace("%1", kind)
                 .replace("%2", fmt(past.amount_minor)).replace("%3", past.account_id).replace("%4", when)
                 .replace("%5", past.terminal_id or "?")]
        check = self.check()
        if check is RefundCheck.REFUNDABLE:
            lines.append(self.tr("Refunded so far %1; at most %2 can still be refunded.")
                         .replace("%1", fmt(past.refunded_minor)).replace("%2", fmt(past.refundable_minor)))
        elif check is RefundCheck.FULLY_REFUNDED:
            lines.append(self.tr("Already refunded in full (%1).").replace("%1", fmt(past.refunded_minor)))
        elif check is RefundCheck.NOT_APPLIED:
            lines.append(self.tr("This sale was declined: no money was taken, nothing to refund."))
        elif check is RefundCheck.NOT_A_SALE:
            lines.append(self.tr("Only charges and completed sales can be refunded."))
        elif check is RefundCheck.OUTSIDE_WINDOW:
            lines.append(self.tr("Older than the refund window of %1 days: the back office can give the "
                                 "money back as a top-up.").replace("%1", f"{(self.refund_window_s or 0) / 86400:g}"))
        self.summary.setText("\n".join(lines))

    def _update(self) -> None:
        idle = self._reading == 0
        self.refund_button.setEnabled(idle and self.check() is RefundCheck.REFUNDABLE
                                      and self.sale.cashier is not None)
        self.reprint_button.setEnabled(idle and self.receipts is not None and self.loaded is not None
                                       and self.loaded.applied and self.loaded.kind in RECEIPT_KINDS)

    def refund(self) -> None:
        if self.check() is not RefundCheck.REFUNDABLE:
            return
        self.refund_dialog = EarlierRefundDialog(self.sale, self.loaded, self)
        self.refund_dialog.accepted.connect(self.accept)     # the refund runs on the sale screen
        self.refund_dialog.open()

    def reprint(self) -> None:
        if self.receipts is None or self.loaded is None:
            return
        receipt = self.receipts.again(self.receipts.receipt_for_past(self.loaded, self.sale.cashier))
        self.receipts.last = receipt
        self.receipts.lastChanged.emit(receipt)
        self.receipts.print(receipt)
        self.message.setText(self.tr("Reprinting receipt %1…").replace("%1", self.loaded.txn_id))
