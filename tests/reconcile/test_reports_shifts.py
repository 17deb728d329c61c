"""Shift closes end to end on the real Redis and PostgreSQL: core.shifts.close_shift
journals the Z record (idempotent by txn id, bad input refused naming the field), `run
--once` puts it in shift_closes and the chained book without touching any account, and
`report shifts --date` lists it; a property test closes shifts with retries and lost
replies and checks that each shift is recorded exactly once."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from sqlalchemy import create_engine, select

from core import InvalidRequest, TxnConflict
from core.shifts import ShiftTotals, close_shift, shift_txn_id
from reconcile_service.db import migrate
from reconcile_service.models import Account, LedgerEntry, ShiftClose
from reconcile_service.verify import verify
from tests.reconcile.conftest import open_accounts, run_cli

TOTALS = ShiftTotals(sales_count=3, sales_minor=4500, refunds_count=1, refunds_minor=500,
                     topups_count=2, topups_minor=20000)


def test_a_closed_shift_is_journaled_once_and_kept_apart_from_accounts(ledger, redis_url, pg_url, db, capsys,
                                                                         tmp_path):
    open_accounts(ledger, 2)
    first = close_shift(ledger, terminal_id="T1", shift_no=7, closed_by="sup1", cashier_id="c1",
                        opened_ms=1_764_547_200_000, totals=TOTALS, extra_totals={"topups_wechat_minor": 20000})
    again = close_shift(ledger, terminal_id="T1", shift_no=7, closed_by="sup1", cashier_id="c1",
                        opened_ms=1_764_547_200_000, totals=TOTALS, extra_totals={"topups_wechat_minor": 20000})
    assert first.applied and again.replayed and again.journal_id == first.journal_id
    assert first.txn_id == shift_txn_id("T1", 7)
    with pytest.raises(TxnConflict):      # the same shift closed again with other totals
        close_shift(ledger, terminal_id="T1", shift_no=7, closed_by="sup1", totals=ShiftTotals(sales_count=4))
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    with db.connect() as conn:
        (z,) = conn.execute(select(ShiftClose)).all()
        book = conn.execute(select(LedgerEntry).where(LedgerEntry.kind == "shift_close")).one()
        accounts = [r.account_id for r in conn.execute(select(Account.account_id))]
    assert (z.terminal_id, z.shift_no, z.cashier_id, z.closed_by, z.sales_minor, z.refunds_minor,
            z.topups_count) == ("T1", 7, "c1", "sup1", 4500, 500, 2)
    assert json.loads(z.record_json)["topups_wechat_minor"] == 20000
    assert book.amount_minor == 0 and book.chain_seq >= 1 and "~" not in accounts
    assert verify(ledger, db).ok
    capsys.readouterr()
    day = z.closed_at.astimezone().date().isoformat()
    assert run_cli("report", "shifts", "--date", day, "--tz", "UTC", redis_url=redis_url, database_url=pg_url) == 0
    out = capsys.readouterr().out
    assert "T1" in out and "sup1" in out and "45.00" in out
    assert "WeChat Pay 200.00" in out            # the terminal's per-method total from the Z record
    for lang in ("zh_CN", "en"):                 # 16 columns, Chinese headings: the PDF still fits
        pdf = tmp_path / f"shifts-{lang}.pdf"
        assert run_cli("report", "shifts", "--date", day, "--tz", "UTC", "--format", "pdf", "--lang", lang,
                       "-o", str(pdf), redis_url=redis_url, database_url=pg_url) == 0
        assert pdf.read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize("kwargs, field", [
    (dict(shift_no=0), "shift_no"), (dict(shift_no=True), "shift_no"), (dict(terminal_id="T 1"), "terminal_id"),
    (dict(closed_by=""), "closed_by"), (dict(totals={"sales_minor": 1.5}), "totals"),
    (dict(totals={"sales_minor": "1"}), "totals"), (dict(opened_ms=-5), "opened_ms"),
    (dict(totals={"n" * 5000: 1}), "totals"),
])
def test_bad_shift_closes_are_refused_naming_the_field(ledger, kwargs, field):
    args = dict(terminal_id="T1", shift_no=1, closed_by="sup1", totals=TOTALS)
    args.update(kwargs)
    with pytest.raises(InvalidRequest) as err:
        close_shift(ledger, **args)
    assert err.value.field == field
    part = ledger.schema.partition_of("T1")
    assert ledger.client.xlen(part.journal) == 0


def test_the_script_validates_what_python_would_have_refused(ledger):
    """A client that skips core's checks still cannot journal a malformed Z record."""
    part = ledger.schema.partition_of("T1")
    keys = [part.txn("z1"), part.journal]
    for args, field in ([["z1", "T1", "0", 3600, "", "sup", "", "{}"], "shift_no"],
                        [["z1", "T1", "1", 3600, "", "sup", "", "[1]"], "totals"],
                        [["z1", "T1", "1", 3600, "", "sup", "", '{"a":1.5}'], "totals"],
                        [["z2", "T1", "1", 3600, "", "sup", "", "{}"], "KEYS[1]"]):
        with pytest.raises(InvalidRequest) as err:
            ledger._run("shift_close", "shift_close", keys, args, "~", 0, args[0])
        assert err.value.field == field
    assert ledger.client.xlen(part.journal) == 0


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=st.lists(st.tuples(st.sampled_from(["T1", "T2", "T3"]), st.integers(1, 4), st.integers(0, 3)),
                     min_size=1, max_size=12))
def test_property_retried_closes_record_each_shift_once(ledger, redis_url, pg_url, plan):
    """Faults: a reply lost (the till retries, 0-3 times), the daemon run between closes.
    Invariants: one shift_closes row and one book entry per (terminal, shift); chain ok."""
    eng = create_engine(pg_url)
    migrate(eng)
    with eng.connect() as conn:
        before = {(r.terminal_id, r.shift_no) for r in conn.execute(select(ShiftClose))}
    for terminal, shift_no, retries in plan:
        for _ in range(retries + 1):
            res = close_shift(ledger, terminal_id=terminal, shift_no=shift_no, closed_by="sup",
                              totals=ShiftTotals(sales_count=shift_no))
            assert res.applied
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    with eng.connect() as conn:
        rows = [(r.terminal_id, r.shift_no) for r in conn.execute(select(ShiftClose))]
        book = conn.execute(select(LedgerEntry.txn_id).where(LedgerEntry.kind == "shift_close")).scalars().all()
    eng.dispose()
    assert len(rows) == len(set(rows)) == len(book)
    assert set(rows) == before | {(t, s) for t, s, _ in plan}
