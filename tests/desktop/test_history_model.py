"""The history table model shared by the sale screen and the earlier-sale dialog
(desktop/history_model.py): whatever operations arrive, in whatever order and however
often, the table shows each of the shift's operations once, newest first, in the row
the shift's history says, with the row's own texts; and the sale form's checks
(sale_session.check_entry) refuse exactly what money and core.validation refuse."""
from __future__ import annotations

from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import Qt

from core import InvalidRequest
from core.validation import check_id
from desktop import money
from desktop.history_model import AMOUNT_COLUMN, ROW_TONE_ROLE, HistoryModel, HistoryRow, HistoryTable, shift_row
from desktop.outbox import PENDING, RESOLVED, Op
from desktop.sale_session import ShiftHistory, check_entry

SHIFT = 7
# A terminal that is closing: the table shows a hold's status, so no outbox is read.
CLOSING = SimpleNamespace(closed=True, outbox=None)

kinds = st.sampled_from(["deduct", "refund", "credit", "capture", "void"])
states = st.sampled_from(["pending", "applied", "declined"])
events = st.lists(st.tuples(st.integers(0, 11), kinds, states, st.integers(1, 10**6),
                            st.sampled_from([SHIFT, SHIFT - 1])), max_size=40)


def op_of(n: int, kind: str, state: str, amount_minor: int, shift_id: int) -> Op:
    """`state`: "pending", "applied" or "declined"."""
    return Op(f"T1-x-{n:02d}", kind, f"A-{n % 3}", amount_minor, "T1", "c1", shift_id, 1_700_000_000_000 + n,
              state=PENDING if state == "pending" else RESOLVED,
              status={"pending": "", "applied": "APPLIED", "declined": "INSUFFICIENT_FUNDS"}[state],
              balance_after_minor=5000 if state == "applied" else None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=events)
def test_the_table_shows_each_operation_once_newest_first_in_its_history_row(qapp, events):
    table = HistoryTable(ShiftHistory(), CLOSING)
    kept: dict[str, Op] = {}        # what the table must show: txn id -> the op's last state
    order: list[str] = []           # newest first
    for n, kind, state, amount_minor, shift_id in events:
        op = op_of(n, kind, state, amount_minor, shift_id)
        # the kind and the shift an operation was made in never change: keep its first
        first = kept.get(op.txn_id)
        if first is not None:
            op = op_of(n, first.kind, state, first.amount_minor, first.shift_id)
            state = "pending" if op.pending else "applied" if op.applied else "declined"
        shown = table.put(op, SHIFT)
        wanted = op.txn_id in kept or op.shift_id == SHIFT or op.pending
        assert shown == wanted
        if not wanted:
            continue
        if op.txn_id not in kept:
            order.insert(0, op.txn_id)
        kept[op.txn_id] = op
        model = table.model()
        assert model.rowCount() == len(order) == len(table.history.rows)
        assert [table.txn_at(r) for r in range(model.rowCount())] == order
        for txn_id, row in table.history.rows.items():
            expected = shift_row(kept[txn_id], None)
            assert tuple(table.cell(row, c) for c in range(model.columnCount())) == expected.cells
            assert table.cell(row, 0, ROW_TONE_ROLE) == expected.tone
            assert table.op_at_row(row) is kept[txn_id]
    table.clear_rows()
    assert table.rowCount() == 0 and not table.history.rows


def test_a_declined_amount_is_struck_out_and_coloured_only_where_the_model_says(qapp):
    model = HistoryModel(3, right_columns=(1,), strike_column=1)
    model.set_rows([HistoryRow("t-1", ("a", "¥1.00", "x"), "declined"), HistoryRow("t-2", ("b", "¥2.00", "y"))])
    index = model.index(0, 1)
    assert index.data(Qt.ItemDataRole.FontRole).strikeOut()
    assert index.data(Qt.ItemDataRole.ForegroundRole) is not None
    assert model.index(0, 0).data(Qt.ItemDataRole.FontRole) is None
    assert model.index(1, 1).data(Qt.ItemDataRole.ForegroundRole) is None       # no tone: the view's colour
    assert model.index(1, 1).data(Qt.ItemDataRole.TextAlignmentRole) is not None
    assert model.index(1, 0).data(Qt.ItemDataRole.TextAlignmentRole) is None
    assert (model.txn_at(1), model.txn_at(2)) == ("t-2", None)
    model.set_headers(["Time", "Amount", "Who"])
    assert model.headerData(1, Qt.Orientation.Horizontal) == "Amount"
    assert AMOUNT_COLUMN == 3          # the sale screen's strike column is its amount


@settings(max_examples=200, deadline=None)
@given(account=st.text(max_size=70), amount=st.text(max_size=20), point=st.sampled_from([".", ","]))
def test_the_form_check_refuses_what_validation_and_money_refuse(account, amount, point):
    entry = check_entry(account, amount, point)
    try:
        check_id(account, "account_id")
        account_ok = True
    except InvalidRequest:
        account_ok = False
    try:
        amount_minor = money.parse_amount_minor(amount, decimal_point=point)
    except money.AmountError:
        amount_minor = None
    assert (entry.account_reason == "") == account_ok
    assert entry.amount_minor == amount_minor and (entry.amount_reason == "") == (amount_minor is not None)
    assert entry.ok == (account_ok and amount_minor is not None)

