"""The drain's two ways of writing a batch give one book: PostgreSQL's fast path (the
chained rows COPYed straight into ledger_entries, account totals through a COPYed
staging table) and the generic path (SQLite's executemany, and PostgreSQL's careful
retry after a redelivery) store the same rows with the same chain, and a redelivered
batch changes nothing on either. BookEntry, the drain's named tuple, reads every field
of a journal entry exactly as core.JournalEntry does."""
from __future__ import annotations

from dataclasses import fields

import pytest
from sqlalchemy import select, text

from core import JournalEntry
from reconcile_service import bulk, chain, db as dbmod
from reconcile_service.models import Account, ChainHead, DailyTotal, Hold, LedgerEntry
from reconcile_service.store import BookEntry, apply_batch
from tests.reconcile.test_reports_schema import entry
from tests.support.postgres import fresh_database

SAMPLES = [
    entry("o1", "open", "A", 5000, 5000, name="Wang Fang", ph="13800000001", pd=5000, bd=0, m="cash"),
    entry("d1", "deduct", "A", -300, 4700, pd=-250, bd=-50),
    entry("h1", "hold", "A", 0, 4700, held=700, exp=1_700_000_900_000),
    entry("c1", "capture", "A", -600, 4100, orig="h1"),
    entry("k1", "card_issue", "A", 0, 0, card="CARD-9"),
    entry("s1", "setting", "@shop", 0, 0, set="balance_cap", val="100000"),
    entry("x1", "deduct", "B", -5, 95),
    entry("f1", "freeze", "B", 0, 95),
]


@pytest.mark.parametrize("fields_", SAMPLES, ids=[f["txn"] for f in SAMPLES])
def test_book_entry_reads_every_journal_field_as_core_does(fields_):
    core_entry = JournalEntry.from_fields("1700000000000-3", 2, fields_)
    book_entry = BookEntry.parse("1700000000000-3", 2, fields_)
    for f in fields(JournalEntry):
        assert getattr(book_entry, f.name) == getattr(core_entry, f.name), f.name
    assert book_entry.pos == "0017000000000000000000000000000003"


def _batches():
    raw = [(f"{10 + i}-0", f) for i, f in enumerate(SAMPLES)]
    raw += [(f"{100 + i}-{i % 3}", entry(f"w{i}", "credit" if i % 4 else "deduct", f"W{i % 9}",
                                         7 if i % 4 else -2, 0, ts=1_700_000_000_000 + i * 3_600_000))
            for i in range(300)]
    return [raw[:120], raw[120:]]


def _book(engine) -> dict:
    with engine.connect() as conn:
        rows = {r.txn_id: (r.journal_partition, r.chain_seq, r.row_hash, r.amount_minor, r.occurred_at.timestamp())
                for r in conn.execute(select(LedgerEntry))}
        accounts = {r.account_id: (r.balance_minor, r.principal_minor, r.bonus_minor, r.status, r.last_journal_pos,
                                   r.holder_name, r.phone) for r in conn.execute(select(Account))}
        days = {(r.journal_partition, r.day, r.kind, r.method, r.duplicate):
                (r.principal_minor, r.bonus_minor, r.entries) for r in conn.execute(select(DailyTotal))}
        holds = {r.hold_txn_id: (r.status, r.captured_minor) for r in conn.execute(select(Hold))}
        heads = {r.journal_partition: (r.last_seq, r.last_hash) for r in conn.execute(select(ChainHead))}
        assert chain.verify_chain(conn).ok
    return dict(rows=rows, accounts=accounts, days=days, holds=holds, heads=heads)


def test_copy_path_and_generic_path_write_the_same_book(tmp_path):
    lite = dbmod.make_engine(f"sqlite:///{tmp_path}/same.db")
    dbmod.migrate(lite)
    with fresh_database() as url:
        pg = dbmod.make_engine(url)
        dbmod.migrate(pg)
        try:
            for engine in (lite, pg):
                for batch in _batches():
                    result = apply_batch(engine, 1, batch)
                    assert result.applied == len(batch) and not result.duplicates
            on_pg, on_sqlite = _book(pg), _book(lite)
            assert on_pg == on_sqlite
            assert len(on_pg["rows"]) == 308 and on_pg["holds"] == {"h1": ("captured", 600)}
            # a redelivery (here: the whole history again) takes PostgreSQL's careful
            # path and changes nothing on either
            for engine in (lite, pg):
                for batch in _batches():
                    result = apply_batch(engine, 1, batch)
                    assert (result.applied, result.redelivered, result.duplicates) == (0, len(batch), [])
            assert _book(pg) == on_pg and _book(lite) == on_sqlite
        finally:
            pg.dispose()
    lite.dispose()


def test_a_partly_redelivered_batch_on_postgresql_applies_only_the_new_entries():
    with fresh_database() as url:
        pg = dbmod.make_engine(url)
        dbmod.migrate(pg)
        first, second = _batches()
        apply_batch(pg, 1, first)
        result = apply_batch(pg, 1, first[-20:] + second)     # 20 old entries, then new ones
        assert (result.applied, result.redelivered) == (len(second), 20)
        book = _book(pg)
        assert sorted(seq for _, seq, *_ in book["rows"].values()) == list(range(1, 309))
        pg.dispose()


def test_a_staging_table_filled_twice_in_one_transaction_holds_only_the_second_rows():
    with fresh_database() as url:
        pg = dbmod.make_engine(url)
        dbmod.migrate(pg)
        with pg.begin() as conn:
            for name in ("first", "second"):
                insert = bulk.staged_insert(conn, DailyTotal, [dict(journal_partition=0, day=None, kind=name)])
                stage = insert.select.get_final_froms()[0].name
                assert conn.execute(text(f"SELECT kind FROM {stage}")).scalars().all() == [name]
        pg.dispose()
