"""The history tables of the terminal: one table model (`HistoryModel`, a
QAbstractTableModel) and one view class (`HistoryView`) that both the sale screen's
shift history (`HistoryTable`, objectName historyTable) and the earlier-sale dialog's
account history (desktop/receipts/earlier.py, accountHistoryTable) show their rows in.

A row is a value (`HistoryRow`: its txn id, the texts of its cells and its tone),
decided once by the screen that lists it (`shift_row` here for the shift's operations,
`past_row` for the ledger's); the model answers them to the view: the text, the txn id
in Qt.UserRole, the tone in ROW_TONE_ROLE, and the tone's colour, the declined amount
struck out and the money columns right-aligned as the screen asks.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from PySide6.QtCore import QAbstractTableModel, QCoreApplication, QLocale, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from core.kinds import REFUNDABLE_KINDS, kinds_where

from . import money
from .outbox import Op
from .texts import hold_state_words, kind_words, short_status

ROW_TONE_ROLE = Qt.ItemDataRole.UserRole + 1     # "applied", "declined" or "pending" (tests, colour)
ROW_COLOURS = {"declined": "#a3241b", "pending": "#855a00"}
SPEND_KINDS = kinds_where(book_section="spend")   # money taken from the account: shown with a minus
AMOUNT_COLUMN, BALANCE_COLUMN = 3, 5
COLUMNS = 7
_Index = QModelIndex | QPersistentModelIndex


def clock_time(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000).strftime("%H:%M")


@dataclass(frozen=True)
class HistoryRow:
    txn_id: str
    cells: tuple[str, ...]
    tone: str = ""            # "applied", "declined" or "pending"; "" for none


def shift_row(op: Op, hold_state: str | None) -> HistoryRow:
    """The sale screen's row of `op`; `hold_state`: an applied hold's state now (None
    when the terminal is closing: its status is shown instead)."""
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


def past_row(past, kind_text: str) -> HistoryRow:
    """The earlier-sale dialog's row of `past` (a core.history.PastOperation): time, type
    (`kind_text`), signed amount, refunded so far, balance after, terminal, receipt number."""
    loc = QLocale()
    charge = past.kind in REFUNDABLE_KINDS        # money taken, and what is refunded of it
    cells = (datetime.fromtimestamp(past.occurred_ms / 1000).strftime("%m-%d %H:%M"), kind_text,
             money.format_minor((-1 if charge else 1) * past.amount_minor, loc),
             money.format_minor(past.refunded_minor, loc) if charge else "",
             money.format_minor(past.balance_after_minor, loc), past.terminal_id, past.txn_id)
    return HistoryRow(past.txn_id, cells)


class HistoryModel(QAbstractTableModel):
    """Rows (HistoryRow values) under header labels, row 0 at the top. `right_columns`
    are right-aligned; `strike_column` is struck out in a declined row."""

    def __init__(self, columns: int, *, right_columns: Sequence[int] = (), strike_column: int | None = None,
                 parent=None):
        super().__init__(parent)
        self.columns, self.right_columns, self.strike_column = columns, tuple(right_columns), strike_column
        self.rows: list[HistoryRow] = []
        self.headers: list[str] = [""] * columns

    def rowCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else self.columns

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or index.row() >= len(self.rows):
            return None
        row, col = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return row.cells[col]
        if role == Qt.ItemDataRole.UserRole:
            return row.txn_id
        if role == ROW_TONE_ROLE:
            return row.tone or None
        if role == Qt.ItemDataRole.ForegroundRole and row.tone in ROW_COLOURS:
            return QBrush(QColor(ROW_COLOURS[row.tone]))
        if role == Qt.ItemDataRole.FontRole and row.tone == "declined" and col == self.strike_column:
            font = QFont()
            font.setStrikeOut(True)          # the amount that was not taken
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and col in self.right_columns:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < self.columns:
            return self.headers[section]
        return super().headerData(section, orientation, role)

    def set_headers(self, labels: Sequence[str]) -> None:
        self.headers = list(labels)
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, self.columns - 1)

    def insert_top(self, row: HistoryRow) -> None:
        self.beginInsertRows(QModelIndex(), 0, 0)
        self.rows.insert(0, row)
        self.endInsertRows()

    def replace(self, index: int, row: HistoryRow) -> None:
        self.rows[index] = row
        self.dataChanged.emit(self.index(index, 0), self.index(index, self.columns - 1))

    def set_rows(self, rows: Sequence[HistoryRow]) -> None:
        """All the rows at once: the same number shown again in place (the selection
        stays), else the list replaced (rows removed first, so a selection is let go)."""
        if len(rows) == len(self.rows):
            for index, row in enumerate(rows):
                self.replace(index, row)
            return
        if self.rows:
            self.beginRemoveRows(QModelIndex(), 0, len(self.rows) - 1)
            self.rows = []
            self.endRemoveRows()
        if rows:
            self.beginInsertRows(QModelIndex(), 0, len(rows) - 1)
            self.rows = list(rows)
            self.endInsertRows()

    def txn_at(self, index: int) -> str | None:
        return self.rows[index].txn_id if 0 <= index < len(self.rows) else None


class HistoryView(QTableView):
    """A table of a HistoryModel: whole rows, one selected at a time, not editable,
    without row numbers."""

    def __init__(self, model: HistoryModel, parent=None, *, objectName: str):
        super().__init__(parent, objectName=objectName)
        self.setModel(model)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().hide()

    def model(self) -> HistoryModel:
        return super().model()

    def rowCount(self) -> int:
        return self.model().rowCount()

    def cell(self, row: int, col: int, role: int = Qt.ItemDataRole.DisplayRole):
        """What the model answers for one cell (its text unless `role` says otherwise)."""
        return self.model().index(row, col).data(role)

    def txn_at(self, row: int) -> str | None:
        return self.model().txn_at(row)

    def selected_row(self) -> int | None:
        rows = self.selectionModel().selectedRows() if self.selectionModel() else []
        return rows[0].row() if rows else None

    def selected_txn(self) -> str | None:
        row = self.selected_row()
        return self.txn_at(row) if row is not None else None

    def clear_rows(self) -> None:
        self.model().set_rows([])


class HistoryTable(HistoryView):
    """The shift's history on the sale screen: one row per operation, newest first;
    `history` (sale_session.ShiftHistory) says which operations and in which row,
    `engine` the state of a hold now."""

    def __init__(self, history, engine, parent=None):
        super().__init__(HistoryModel(COLUMNS, right_columns=(AMOUNT_COLUMN, BALANCE_COLUMN),
                                      strike_column=AMOUNT_COLUMN), parent, objectName="historyTable")
        self.history, self.engine = history, engine
        self.setMinimumHeight(110)
        self.setTabKeyNavigation(False)     # Tab leaves the table, never trapped in it
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        # card numbers are long: that column takes the room it needs
        self.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)

    def retranslate(self) -> None:
        # literal contexts, so lupdate finds them (see sale_texts.py)
        translate = QCoreApplication.translate
        self.model().set_headers([translate("SalePage", "Time"), translate("SalePage", "Type"),
                                  translate("SalePage", "Account"), translate("SalePage", "Amount"),
                                  translate("SalePage", "Result"), translate("SalePage", "Balance after"),
                                  translate("SalePage", "Cashier")])
        for op in self.history.ops.values():
            self.fill(op)

    def put(self, op: Op, shift_id: int | None, *, any_shift: bool = False) -> bool:
        """Show `op` (a new row at the top, or its row again); False when it is not this
        shift's list's (another shift's finished operation)."""
        change = self.history.add(op, shift_id, any_shift=any_shift)
        if change is None:
            return False
        if change.new_row:
            self.model().insert_top(self._row(op))
            self.scrollToTop()           # the newest (e.g. the refund just made) is always in view
        else:
            self.fill(op)
        if change.also is not None:
            self.fill(change.also)       # the hold's state changed
        return True

    def show_shift(self, shift_id: int, ops) -> None:
        """The list of a shift starting: its operations `ops`, those an earlier run left
        unresolved, and the holds of earlier shifts still open."""
        self.clear_rows()
        for op in ops:
            self.put(op, shift_id)
        for op in self.engine.unresolved():
            self.put(op, shift_id)
        for hold in self.engine.outbox.open_holds():
            self.put(hold, shift_id, any_shift=True)

    def _row(self, op: Op) -> HistoryRow:
        hold_state = (self.engine.outbox.hold_state(op) if op.kind == "hold" and op.applied
                      and not self.engine.closed else None)
        return shift_row(op, hold_state)

    def fill(self, op: Op) -> None:
        self.model().replace(self.history.rows[op.txn_id], self._row(op))

    def refill_holds(self) -> None:
        """Holds change state with time (expiry): show them again."""
        for hold in self.history.holds():
            self.fill(hold)

    def clear_rows(self) -> None:
        super().clear_rows()
        self.history.clear()

    def op_at_row(self, row: int) -> Op | None:
        txn_id = self.txn_at(row)
        return self.history.op(txn_id) if txn_id else None

    def selected_op(self) -> Op | None:
        txn_id = self.selected_txn()
        return self.history.op(txn_id) if txn_id else None
