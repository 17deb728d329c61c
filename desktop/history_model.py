"""The shift's history as the sale screen lists it: what one row of an operation says
(`shift_row`: time, type, account, signed amount, result, balance after, cashier, and
its tone) and the table that shows the rows (`HistoryTable`, objectName historyTable).

The table stays a QTableWidget (tests and the receipts' Reprint read its items: the
txn id in Qt.UserRole, the tone in ROW_TONE_ROLE); the row's contents are decided here,
once, as a value, and the table only puts them in cells.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QCoreApplication, QLocale, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from core.kinds import kinds_where

from . import money
from .outbox import Op
from .texts import hold_state_words, kind_words, short_status

ROW_TONE_ROLE = Qt.ItemDataRole.UserRole + 1     # "applied", "declined" or "pending" (tests, colour)
ROW_COLOURS = {"declined": "#a3241b", "pending": "#855a00"}
SPEND_KINDS = kinds_where(book_section="spend")   # money taken from the account: shown with a minus
AMOUNT_COLUMN, BALANCE_COLUMN = 3, 5
COLUMNS = 7


def clock_time(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000).strftime("%H:%M")


@dataclass(frozen=True)
class HistoryRow:
    txn_id: str
    cells: tuple[str, ...]
    tone: str                 # "applied", "declined" or "pending"


def shift_row(op: Op, hold_state: str | None) -> HistoryRow:
    """The row of `op`; `hold_state`: an applied hold's state now (None when the
    terminal is closing: its status is shown instead)."""
    loc = QLocale()
    # only money that moved gets a sign: a declined charge took nothing
    sign = -1 if op.kind in SPEND_KINDS and op.applied else 1
    if op.kind == "hold" and op.applied and hold_state is not None:
        result = hold_state_words(hold_state, clock_time(op.expires_ms))
    else:
        result = short_status(op.status, op.pending)
    shows_balance = op.balance_after_minor is not None and op.applied and op.kind != "hold"
    cells = (datetime.fromtimestamp(op.created_ms / 1000).strftime("%H:%M:%S"), kind_words(op.kind),
             op.account_id, money.format_minor(sign * op.amount_minor, loc), result,
             money.format_minor(op.balance_after_minor, loc) if shows_balance else "",
             op.cashier_id)
    tone = "pending" if op.pending else "applied" if op.applied else "declined"
    return HistoryRow(op.txn_id, cells, tone)


class HistoryTable(QTableWidget):
    """The shift's history: one row per operation, newest first, one row selected at a
    time; `history` (sale_session.ShiftHistory) says which operations and in which row,
    `engine` the state of a hold now."""

    def __init__(self, history, engine, parent=None):
        super().__init__(0, COLUMNS, parent, objectName="historyTable")
        self.history, self.engine = history, engine
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().hide()
        self.setMinimumHeight(110)
        self.setTabKeyNavigation(False)     # Tab leaves the table, never trapped in it
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        # card numbers are long: that column takes the room it needs
        self.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)

    def retranslate(self) -> None:
        tr = lambda text: QCoreApplication.translate("SalePage", text)  # noqa: E731
        self.setHorizontalHeaderLabels([tr("Time"), tr("Type"), tr("Account"), tr("Amount"), tr("Result"),
                                        tr("Balance after"), tr("Cashier")])

    def put(self, op: Op, shift_id: int | None, *, any_shift: bool = False) -> bool:
        """Show `op` (a new row at the top, or its row again); False when it is not this
        shift's list's (another shift's finished operation)."""
        change = self.history.add(op, shift_id, any_shift=any_shift)
        if change is None:
            return False
        if change.new_row:
            self.insertRow(0)
            self.scrollToTop()           # the newest (e.g. the refund just made) is always in view
        self.fill(op)
        if change.also is not None:
            self.fill(change.also)       # the hold's state changed
        return True

    def fill(self, op: Op) -> None:
        hold_state = (self.engine.outbox.hold_state(op) if op.kind == "hold" and op.applied
                      and not self.engine.closed else None)
        self.show_row(self.history.rows[op.txn_id], shift_row(op, hold_state))

    def refill_holds(self) -> None:
        """Holds change state with time (expiry): show them again."""
        for hold in self.history.holds():
            self.fill(hold)

    def clear_rows(self) -> None:
        self.setRowCount(0)
        self.history.clear()

    def op_at_row(self, row: int) -> Op | None:
        txn_id = self.txn_at(row)
        return self.history.op(txn_id) if txn_id else None

    def selected_op(self) -> Op | None:
        txn_id = self.selected_txn()
        return self.history.op(txn_id) if txn_id else None

    def show_row(self, row: int, shown: HistoryRow) -> None:
        for col, text in enumerate(shown.cells):
            item = QTableWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, shown.txn_id)
            item.setData(ROW_TONE_ROLE, shown.tone)
            if col in (AMOUNT_COLUMN, BALANCE_COLUMN):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if shown.tone != "applied":
                item.setForeground(QBrush(QColor(ROW_COLOURS[shown.tone])))
                if shown.tone == "declined" and col == AMOUNT_COLUMN:
                    font = item.font()
                    font.setStrikeOut(True)    # the amount that was not taken
                    item.setFont(font)
            self.setItem(row, col, item)

    def txn_at(self, row: int) -> str | None:
        item = self.item(row, 0)
        return item.data(Qt.ItemDataRole.UserRole) if item else None

    def selected_txn(self) -> str | None:
        rows = self.selectionModel().selectedRows() if self.selectionModel() else []
        return self.txn_at(rows[0].row()) if rows else None
