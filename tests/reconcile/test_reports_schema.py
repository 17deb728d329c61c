"""Migrations 0005 and 0007 (daily totals) and the journal's bucket fields on PostgreSQL and SQLite: `pd`, `bd`, `m`
mapped into ledger_entries (absent: pd = amt, bd = 0, no method), accounts' buckets kept,
bad bucket fields quarantined, and an upgrade from 0004 backfilling old rows and chaining
them before the append-only trigger exists."""
from __future__ import annotations

from collections import defaultdict

import pytest
from alembic import command
from sqlalchemy import select, text

from reconcile_service import chain, db as dbmod
from reconcile_service.models import Account, LedgerEntry, QuarantinedEntry
from reconcile_service.reports import book
from reconcile_service.store import apply_batch
from tests.support.postgres import fresh_database


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path):
    if request.param == "sqlite":
        eng = dbmod.make_engine(f"sqlite:///{tmp_path}/book.db")
        yield eng
        eng.dispose()
    else:
        with fresh_database() as url:
            eng = dbmod.make_engine(url)
            yield eng
            eng.dispose()


def entry(txn, kind, acct, amt, bal, ts=1_700_000_000_000, **extra):
    f = {"txn": txn, "kind": kind, "acct": acct, "amt": str(amt), "bal": str(bal), "ts": str(ts),
         "term": "T1", "cash": "c1"}
    f.update({k: str(v) for k, v in extra.items()})
    return f


def test_bucket_fields_are_mapped_and_accounts_keep_both_buckets(engine):
    dbmod.migrate(engine)
    apply_batch(engine, 0, [
        ("1-0", entry("o", "open", "A", 0, 0)),
        ("2-0", entry("c1", "credit", "A", 1200, 1200, pd=1000, bd=200, m="wechat")),
        ("3-0", entry("c2", "credit", "A", 500, 1700)),                       # no pd/bd/m: all principal
        ("4-0", entry("d1", "deduct", "A", -300, 1400, pd=-250, bd=-50)),
    ])
    with engine.connect() as conn:
        rows = {r.txn_id: r for r in conn.execute(select(LedgerEntry))}
        acct = conn.execute(select(Account).where(Account.account_id == "A")).one()
        report = chain.verify_chain(conn)
    assert (rows["c1"].principal_delta_minor, rows["c1"].bonus_delta_minor, rows["c1"].method) == (1000, 200, "wechat")
    assert (rows["c2"].principal_delta_minor, rows["c2"].bonus_delta_minor, rows["c2"].method) == (500, 0, None)
    assert (rows["d1"].principal_delta_minor, rows["d1"].bonus_delta_minor) == (-250, -50)
    assert (acct.balance_minor, acct.principal_minor, acct.bonus_minor) == (1400, 1250, 150)
    assert report.ok and report.rows_checked == 4
    assert [rows[t].chain_seq for t in ("o", "c1", "c2", "d1")] == [1, 2, 3, 4]


@pytest.mark.parametrize("bad", [dict(pd=100, bd=1), dict(pd="1e3", bd=0), dict(pd=" 5"), dict(m="x" * 17)])
def test_bad_bucket_fields_are_quarantined_and_change_nothing(engine, bad):
    dbmod.migrate(engine)
    result = apply_batch(engine, 0, [("1-0", entry("c", "credit", "A", 100, 100, **bad))])
    assert result.quarantined == 1 and result.applied == 0
    with engine.connect() as conn:
        assert conn.execute(select(Account)).first() is None
        assert "QuarantinedEntry" and conn.execute(select(QuarantinedEntry.error)).scalar_one()


def test_upgrade_from_0004_backfills_buckets_and_chains_old_rows(engine):
    with engine.begin() as conn:
        command.upgrade(dbmod._alembic_config(conn), "0004")
        for i, (txn, amt) in enumerate([("o-A", 700), ("c-A", 300), ("d-A", -100)]):
            conn.execute(text(
                "INSERT INTO ledger_entries (txn_id, account_id, kind, amount_minor, balance_after_minor, "
                "occurred_at, journal_partition, journal_id, journal_pos, applied_at, root_account_id) VALUES "
                "(:t, 'A', 'credit', :a, 0, CURRENT_TIMESTAMP, 0, :j, :p, CURRENT_TIMESTAMP, 'A')"),
                dict(t=txn, a=amt, j=f"{i + 1}-0", p=f"{i + 1:015d}{0:019d}"))
        conn.execute(text(
            "INSERT INTO accounts (account_id, balance_minor, status, created_at, updated_at, journal_partition, "
            "last_journal_id, last_journal_pos, status_journal_pos) VALUES ('A', 900, 'active', "
            "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 0, '3-0', :p, '')"), dict(p=f"{3:015d}{0:019d}"))
    dbmod.migrate(engine)
    with engine.connect() as conn:
        rows = conn.execute(select(LedgerEntry).order_by(LedgerEntry.chain_seq)).all()
        acct = conn.execute(select(Account)).one()
        assert chain.verify_chain(conn).ok
    assert [(r.principal_delta_minor, r.bonus_delta_minor, r.method) for r in rows] == [
        (700, 0, None), (300, 0, None), (-100, 0, None)]
    assert (acct.principal_minor, acct.bonus_minor) == (900, 0)
    with engine.connect() as conn:      # 0007 summed the old rows into daily_totals
        raw = defaultdict(lambda: [0, 0, 0])
        book._raw_groups(conn, raw, None, None)
        assert dict(book.grouped_sums(conn, None, None)) == dict(raw) and raw[("credit", "", False)][0] == 900
    # new batches chain on after the migrated rows
    apply_batch(engine, 0, [("4-0", entry("c2-A", "credit", "A", 50, 950))])
    with engine.connect() as conn:
        report = chain.verify_chain(conn)
        assert report.ok and report.rows_checked == 4


def test_the_schema_check_reads_the_same_head_as_alembic(tmp_path):
    """`require_current_schema` (every report) reads the newest revision from the
    migration files and the stored one with plain SQL instead of importing alembic."""
    assert dbmod.head_revision() == dbmod.alembic_head_revision()
    eng = dbmod.make_engine(f"sqlite:///{tmp_path}/head.db")
    assert dbmod.stored_revision(eng) is None
    dbmod.migrate(eng)
    assert dbmod.stored_revision(eng) == dbmod.current_revision(eng) == dbmod.head_revision()
    dbmod.require_current_schema(eng)
    eng.dispose()
