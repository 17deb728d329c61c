"""The supervisor's dialog for operations too old to re-send (issue 33 item 4).

A pending outbox row older than the ledger's idempotency retention minus an hour is
never re-sent on its own (desktop/engine.py): its record in Redis may have expired, and
a re-send would then be applied a second time. The main window's status bar shows how
many there are (*Old operations: 2 — supervisor*) and opens this dialog, which lists
them (kind, account, amount, when, age) and says why they wait. A supervisor picks one and:

* **Re-check** (no PIN): reads the ledger's record of its txn id, read-only; when Redis
  still holds it the row is resolved with the decision recorded there (the till shows it
  like any answer), else the dialog says it was not found, and the row stays here;
* **Mark abandoned** (the supervisor's id and PIN, checked like every approval): the
  customer was not charged, or it is handled by hand (the back office books it as a
  top-up or a charge); the outbox records it as ABANDONED with who decided, the shift
  report counts it, and it is never sent again.

Until one of these, the row stays unresolved: its account takes no new operation and
the shift cannot close, so nothing is dropped without a person deciding.
"""
from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QCoreApplication, QLocale, Qt, Signal
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout

from core.kinds import BOOK_ONLY_KINDS

from . import money
from .till_dialog import TillDialog
from .outbox import Op, now_ms
from .supervisor_fields import SupervisorFields
from .texts import kind_words, status_words


def age_words(age_ms: int) -> str:
    """An age in days and hours, e.g. '7 d 3 h' (the hours alone under a day), translated."""
    hours = max(0, age_ms) // 3_600_000
    days, hours = divmod(hours, 24)
    if days:
        return QCoreApplication.translate("StaleOpsDialog", "%1 d %2 h").replace("%1", str(days)) \
            .replace("%2", str(hours))
    return QCoreApplication.translate("StaleOpsDialog", "%1 h").replace("%1", str(hours))


class StaleOpsDialog(TillDialog):
    """Lists `engine.stale_ops()`; Mark abandoned (supervisor PIN) or Re-check the selected one.
    `decided(op)` after each row resolved here."""
    decided = Signal(object)

    def __init__(self, engine, parent=None):
        super().__init__(parent)
        self.setObjectName("staleOpsDialog")
        self.engine = engine
        self.explanation = QLabel(objectName="staleExplanation", wordWrap=True)
        self.rows = QListWidget(objectName="staleList")
        self.supervisor = SupervisorFields()
        self.supervisor_input, self.pin_input = self.supervisor.supervisor_input, self.supervisor.pin_input
        self.message = QLabel(objectName="staleMessage", wordWrap=True)
        self.message.setProperty("tone", "error")
        self.confirm_button = QPushButton(objectName="abandonButton", clicked=self.confirm)
        self.confirm_button.setProperty("role", "primary")
        self.recheck_button = QPushButton(objectName="recheckButton", clicked=self.recheck)
        self.cancel_button = QPushButton(objectName="staleCloseButton", clicked=self.reject)
        self.quiet_buttons(self.confirm_button, self.recheck_button, self.cancel_button)
        form = QFormLayout()
        self.supervisor.add_to(form)
        buttons = QHBoxLayout()
        buttons.addWidget(self.recheck_button)
        buttons.addStretch(1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.confirm_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.explanation)
        layout.addWidget(self.rows, 1)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addLayout(buttons)
        self.setMinimumWidth(620)
        engine.staleChanged.connect(lambda _ops: self.refresh())
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("Operations too old to re-send"))
        hours = max(0, self.engine.resend_limit_s) // 3600
        self.explanation.setText(self.tr(
            "These operations got no answer from the central server and are now older than %1 h "
            "(the ledger remembers an operation for %2 h). Sending one again could charge the customer "
            "twice, so the terminal no longer sends them by itself. Re-check asks the central server "
            "whether it was done; if it cannot tell, check the account with the back office and mark "
            "the operation abandoned (the customer was not charged, or it is handled by hand).")
            .replace("%1", str(hours)).replace("%2", str(max(0, self.engine.retention_s) // 3600)))
        self.supervisor.set_labels(self.tr("Supervisor id"), self.tr("Supervisor PIN"))
        self.confirm_button.setText(self.tr("Mark abandoned"))
        self.recheck_button.setText(self.tr("Re-check"))
        self.cancel_button.setText(self.tr("Close"))
        self.refresh()

    def row_text(self, op: Op, at_ms: int) -> str:
        loc = QLocale()
        what = (f"{op.shift_id}" if op.kind in BOOK_ONLY_KINDS
                else f"{op.account_id} {money.format_minor(op.amount_minor, loc)}")
        when = datetime.fromtimestamp(op.created_ms / 1000).strftime("%Y-%m-%d %H:%M")
        return self.tr("%1 %2, %3 (%4 ago)").replace("%1", kind_words(op.kind)).replace("%2", what) \
            .replace("%3", when).replace("%4", age_words(at_ms - op.created_ms))

    def refresh(self) -> None:
        selected = self.selected_txn()
        self.rows.clear()
        at_ms = now_ms()
        for op in self.engine.stale_ops():
            item = QListWidgetItem(self.row_text(op, at_ms))
            item.setData(Qt.ItemDataRole.UserRole, op.txn_id)
            self.rows.addItem(item)
            if op.txn_id == selected or (selected is None and self.rows.count() == 1):
                self.rows.setCurrentItem(item)
        empty = self.rows.count() == 0
        self.confirm_button.setEnabled(not empty and not self._busy)
        self.recheck_button.setEnabled(not empty)
        if empty and not self.message.text():
            self.message.setText(self.tr("No operation is waiting for a decision."))

    def selected_txn(self) -> str | None:
        item = self.rows.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def _selected_or_fail(self) -> str | None:
        txn_id = self.selected_txn()
        if txn_id is None:
            self.fail(self.tr("Select an operation in the list first."), self.rows)
        return txn_id

    def confirm(self) -> None:
        """Mark abandoned: the supervisor's id and PIN first (one approval, this one row)."""
        txn_id = self._selected_or_fail()
        if txn_id is None:
            return
        self.ask_supervisor(self.engine, self.supervisor, lambda supervisor_id: self._abandon(txn_id, supervisor_id))

    def _abandon(self, txn_id: str, supervisor_id: str) -> None:
        op = self.engine.abandon(txn_id, supervisor_id)
        if op is None:
            self.message.setText(self.tr("That operation was already decided."))
        else:
            self.message.setText(self.tr("Marked abandoned by %1: %2")
                                 .replace("%1", supervisor_id).replace("%2", self.row_text(op, now_ms())))
            self.decided.emit(op)
        self.refresh()

    def recheck(self) -> None:
        txn_id = self._selected_or_fail()
        if txn_id is None:
            return
        self.recheck_button.setEnabled(False)
        self.message.setText(self.tr("Asking the central server…"))
        self.engine.recheck(txn_id, self._rechecked, self._recheck_failed)

    def _rechecked(self, outcome: str, op: Op) -> None:
        if outcome == "resolved":
            self.message.setText(self.tr("The central server has its answer: %1")
                                 .replace("%1", status_words(op.status)))
            self.decided.emit(op)
        else:
            self.message.setText(self.tr(
                "The central server has no record of it: it was not done while it could be remembered, "
                "or its record has expired. Check the account with the back office, then mark it abandoned."))
        self.refresh()

    def _recheck_failed(self, _exc: Exception) -> None:
        self.message.setText(self.tr("The central server did not answer: try Re-check again later."))
        self.refresh()
