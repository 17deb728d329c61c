"""The tamper-evident book on real PostgreSQL and SQLite: the chain of a real drained
workload verifies; an edited, deleted or forged row is found as the first broken row;
PostgreSQL itself refuses UPDATE, DELETE and TRUNCATE of ledger_entries; batches of one
partition committed by concurrent writers (and redelivered, duplicated, out of order)
still chain into one unbroken sequence (property-based, with faults)."""
from __future__ import annotations

import itertools
import threading

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError

from reconcile_service import chain, db as dbmod
from reconcile_service.models import ChainHead, LedgerEntry
from reconcile_service.store import apply_batch
from reconcile_service.verify import verify
from tests.reconcile.conftest import open_accounts, run_cli, workload
from tests.reconcile.test_reports_schema import engine, entry  # noqa: F401  (fixture)
from tests.support.postgres import fresh_database


def _drained(ledger, redis_url, url):
    accounts = open_accounts(ledger, 6)
    workload(ledger, accounts, 300, seed=5)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=url) == 0
    return accounts


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_edited_row_is_the_first_broken_row(backend, ledger, redis_url, tmp_path):
    with (fresh_database() if backend == "postgresql" else _nullctx(f"sqlite:///{tmp_path}/b.db")) as url:
        _drained(ledger, redis_url, url)
        eng = dbmod.make_engine(url)
        try:
            assert verify(ledger, eng).ok
            with eng.begin() as conn:
                victim = conn.execute(select(LedgerEntry).where(LedgerEntry.kind == "deduct")
                                      .order_by(LedgerEntry.chain_seq).offset(40).limit(1)).one()
                if backend == "postgresql":   # only the owner, switching the trigger off, can
                    conn.execute(text("ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only"))
                conn.execute(text("UPDATE ledger_entries SET amount_minor = amount_minor + 1, "
                                  "principal_delta_minor = principal_delta_minor + 1 WHERE id = :id"),
                             {"id": victim.id})
            with eng.connect() as conn:
                report = chain.verify_chain(conn)
            assert [(b.journal_partition, b.chain_seq, b.txn_id) for b in report.breaks] == [
                (victim.journal_partition, victim.chain_seq, victim.txn_id)]
            out = verify(ledger, eng, drain_first=False)
            assert any(v.kind == "chain_broken" and v.evidence["txn_id"] == victim.txn_id for v in out.violations)
        finally:
            eng.dispose()


class _nullctx:
    def __init__(self, value):
        self.value = value

    def __enter__(self):
        return self.value

    def __exit__(self, *exc):
        return False


def test_a_rehashed_edit_breaks_the_next_row_and_a_deleted_row_is_a_gap(tmp_path):
    eng = dbmod.make_engine(f"sqlite:///{tmp_path}/b.db")
    dbmod.migrate(eng)
    apply_batch(eng, 0, [(f"{i}-0", entry(f"c{i}", "credit", "A", 10, 10 * i)) for i in range(1, 6)])
    with eng.begin() as conn:
        row = dict(conn.execute(select(LedgerEntry).where(LedgerEntry.chain_seq == 2)).one()._mapping)
        prev = conn.execute(select(LedgerEntry.row_hash).where(LedgerEntry.chain_seq == 1)).scalar_one()
        row["amount_minor"] = 99
        conn.execute(text("UPDATE ledger_entries SET amount_minor = 99, row_hash = :h WHERE chain_seq = 2"),
                     {"h": chain.row_hash(prev, row)})     # the forger recomputed this row's hash
    with eng.connect() as conn:
        assert [b.chain_seq for b in chain.verify_chain(conn).breaks] == [3]
    with eng.begin() as conn:
        conn.execute(text("DELETE FROM ledger_entries WHERE chain_seq >= 2"))
    with eng.connect() as conn:
        (b,) = chain.verify_chain(conn).breaks
    assert b.chain_seq == 2 and "rows were removed" in b.reason
    eng.dispose()


def test_postgresql_refuses_update_delete_and_truncate_of_the_book(pg_url):
    eng = dbmod.make_engine(pg_url)
    dbmod.migrate(eng)
    apply_batch(eng, 0, [("1-0", entry("c1", "credit", "A", 10, 10))])
    for sql in ("UPDATE ledger_entries SET amount_minor = 11", "DELETE FROM ledger_entries",
                "TRUNCATE ledger_entries CASCADE"):
        with pytest.raises(DBAPIError, match="append-only"):
            with eng.begin() as conn:
                conn.execute(text(sql))
    with eng.connect() as conn:
        assert conn.execute(select(LedgerEntry.amount_minor)).scalar_one() == 10
    eng.dispose()


def test_two_writers_of_one_partition_chain_one_after_the_other(pg_url):
    eng = dbmod.make_engine(pg_url)
    dbmod.migrate(eng)
    batches = [[(f"{b * 100 + i + 1}-0", entry(f"t{b}-{i}", "credit", f"A{i % 7}", 5, 5))
                for i in range(100)] for b in range(12)]
    errors = []

    def writer(mine):
        try:
            for batch in mine:
                apply_batch(eng, 3, batch)
        except Exception as exc:     # surfaced by the assertion below
            errors.append(exc)
    threads = [threading.Thread(target=writer, args=(batches[k::3],)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with eng.connect() as conn:
        report = chain.verify_chain(conn)
        head = conn.execute(select(ChainHead)).one()
    assert report.ok and report.rows_checked == 1200 and head.last_seq == 1200
    eng.dispose()


_EXAMPLES = itertools.count()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_property_any_delivery_order_with_faults_keeps_one_unbroken_chain(engine, data):  # noqa: F811
    """Invariants: after any sequence of batches (split anywhere, redelivered, a txn id
    applied twice, malformed entries, a batch that fails before COMMIT) the chain of
    every partition verifies, holds each applied entry once, and the head is its end."""
    dbmod.migrate(engine)
    with engine.connect() as conn:
        start = conn.execute(select(func.count()).select_from(LedgerEntry)).scalar_one()
    base = next(_EXAMPLES) * 1000 + 10 ** 9      # fresh ids and positions per example
    n = data.draw(st.integers(1, 40))
    raw = []
    for i in range(n):
        kind = data.draw(st.sampled_from(["credit", "deduct", "dup", "bad"]))
        jid = f"{base + i}-0"
        if kind == "dup" and raw:
            raw.append((jid, dict(raw[data.draw(st.integers(0, len(raw) - 1))][1])))
        elif kind == "bad":
            raw.append((jid, {"txn": f"x{base}-{i}", "kind": "credit"}))
        else:
            amt = 7 if kind == "credit" else -3
            raw.append((jid, entry(f"p{base}-{i}", kind if kind != "dup" else "credit", f"B{i % 3}", amt, 0)))
    part = data.draw(st.integers(0, 2))
    pos = 0
    while pos < len(raw):
        size = data.draw(st.integers(1, 10))
        batch = raw[pos:pos + size]
        if data.draw(st.booleans()):
            batch = batch + raw[max(0, pos - 3):pos]          # a redelivery of earlier entries
        if data.draw(st.integers(0, 9)) == 0:                 # a crash before COMMIT
            with pytest.raises(RuntimeError):
                with engine.begin() as conn:
                    conn.execute(select(1))
                    raise RuntimeError("killed before commit")
        apply_batch(engine, part, batch)
        pos += size
    with engine.connect() as conn:
        report = chain.verify_chain(conn)
        total = conn.execute(select(func.count()).select_from(LedgerEntry)).scalar_one()
        heads = {h.journal_partition: h.last_seq for h in conn.execute(select(ChainHead))}
        per_part = dict(conn.execute(select(LedgerEntry.journal_partition, func.count())
                                     .group_by(LedgerEntry.journal_partition)).all())
    assert report.ok, report.breaks
    unique = {f["txn"] for _, f in raw if "acct" in f}
    assert total - start == len(unique)
    assert heads == per_part
