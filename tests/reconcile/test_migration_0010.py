"""Migration 0010 (issue 28 item 10) on PostgreSQL and SQLite: `sub_balances` and the
entries' root/transfer/peer columns of the removed split accounts are dropped, every row
already in the book keeps its values, chain number and hash (none of the dropped columns
is in the canonical form) and the chain verifies; a book with split history keeps what
the dropped columns said as one open `split_history` discrepancy per account, a book
without gets none; a failed upgrade changes nothing; downgrade and upgrade again work;
the models match the migrated schema."""
from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from hypothesis import HealthCheck, given, settings, strategies as st
from sqlalchemy import inspect, select, text

from reconcile_service import chain, db as dbmod
from reconcile_service.models import Base, Discrepancy
from reconcile_service.store import apply_batch
from tests.reconcile.test_reports_schema import engine, entry  # noqa: F401  (the fixture)
from tests.support.postgres import fresh_database

LEGACY_COLUMNS = ("root_account_id", "transfer_id", "peer_account_id")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def _pos(i: int) -> str:
    return f"{1_700_000_000_000 + i:015d}{0:019d}"


def _entry_row(i: int, txn: str, acct: str, amount: int, root=None, transfer=None, peer=None, kind="credit") -> dict:
    return dict(txn_id=txn, account_id=acct, kind=kind, amount_minor=amount, balance_after_minor=0,
                terminal_id="T1", cashier_id=None, original_txn_id=None,
                occurred_at=T0 + timedelta(seconds=i), journal_partition=0, journal_id=f"{1_700_000_000_000 + i}-0",
                journal_pos=_pos(i), applied_at=T0, root_account_id=root, transfer_id=transfer,
                peer_account_id=peer, principal_delta_minor=amount, bonus_delta_minor=0, method=None)


def _book_at_0009(conn, entries: list[dict], duplicates: list[dict], subs: dict[str, tuple]) -> None:
    """Write a book as the code of revision 0009 left it: entries chained, accounts and
    sub_balances rows (subs: account -> (balance, root, shards, closed, in accounts))."""
    seq, head = chain.link(entries, 0, chain.GENESIS_HASH)
    if entries:
        cols = list(entries[0])
        conn.execute(text(f"INSERT INTO ledger_entries ({', '.join(cols)}) VALUES "
                          f"({', '.join(':' + c for c in cols)})"), entries)
        conn.execute(text("INSERT INTO chain_heads VALUES (0, :s, :h, CURRENT_TIMESTAMP)"), dict(s=seq, h=head))
    for d in duplicates:
        row = {k: v for k, v in d.items() if k not in ("applied_at", "chain_seq", "row_hash")}
        row.update(first_journal_partition=0, first_journal_id="1-0", status="open", detected_at=T0)
        conn.execute(text(f"INSERT INTO duplicate_entries ({', '.join(row)}) VALUES "
                          f"({', '.join(':' + c for c in row)})"), row)
    for acct, (balance, root, shards, closed, in_accounts) in subs.items():
        common = dict(a=acct, b=balance, t=T0, p=_pos(0))
        if in_accounts:
            conn.execute(text(
                "INSERT INTO accounts (account_id, balance_minor, status, created_at, updated_at, journal_partition, "
                "last_journal_id, last_journal_pos, status_journal_pos, principal_minor, bonus_minor) VALUES "
                "(:a, :b, 'active', :t, :t, 0, '1-0', :p, '', :b, 0)"), common)
        conn.execute(text(
            "INSERT INTO sub_balances (account_id, root_account_id, balance_minor, status, created_at, updated_at, "
            "journal_partition, last_journal_id, last_journal_pos, status_journal_pos, closed, closed_journal_pos, "
            "shards, split_journal_pos) VALUES (:a, :r, :b, 'active', :t, :t, 0, '1-0', :p, '', :c, '', :s, '')"),
            dict(common, r=root, s=shards, c=closed))


def _snapshot(conn) -> dict:
    canon = ", ".join(c for c in chain.CANONICAL_COLUMNS)
    rows = {r.txn_id: (tuple(chain.canonical_values(r)), r.row_hash) for r in conn.execute(text(
        f"SELECT {canon}, row_hash FROM ledger_entries ORDER BY chain_seq"))}
    accounts = sorted(tuple(r) for r in conn.execute(text(
        "SELECT account_id, balance_minor, principal_minor, bonus_minor, status, last_journal_pos FROM accounts")))
    dups = sorted(tuple(r) for r in conn.execute(text(
        "SELECT txn_id, account_id, amount_minor, journal_id, status FROM duplicate_entries")))
    return dict(rows=rows, accounts=accounts, dups=dups)


def _columns(conn, table: str) -> set[str]:
    return {c["name"] for c in inspect(conn).get_columns(table)}


def _split_history(conn) -> dict[str, dict]:
    return {d.account_id: json.loads(d.evidence_json) for d in conn.execute(
        select(Discrepancy).where(Discrepancy.kind == "split_history", Discrepancy.status == "open"))}


def _legacy_book() -> tuple[list[dict], list[dict], dict]:
    entries = [_entry_row(1, "o-A", "A", 700, root="A"), _entry_row(2, "c-A", "A", 300, root="A"),
               _entry_row(3, "o-S", "S", 1000, root="S"),
               _entry_row(4, "x-out", "S", -400, root="S", transfer="t9", peer="S#1", kind="xfer_out"),
               _entry_row(5, "x-in", "S#1", 400, root="S", transfer="t9", peer="S", kind="xfer_in"),
               _entry_row(6, "d-S1", "S#1", -50, root="S", kind="deduct"),
               _entry_row(7, "c-B", "B", 5)]                  # root NULL: an entry older than 0003's backfill
    dups = [_entry_row(8, "c-A", "A", 300, root="A")]
    subs = {"A": (1300, "A", 0, False, True), "B": (5, "B", 0, False, True),
            "S": (950, "S", 0, False, True),                  # the root's total in accounts ...
            "S#1": (350, "S", 0, True, False)}                # ... a shard closed by a merge, not in accounts
    return entries, dups, subs


def test_upgrade_drops_the_leftovers_keeps_every_row_and_hash_and_the_split_history(engine):
    with engine.begin() as conn:
        command.upgrade(dbmod._alembic_config(conn), "0009")
        _book_at_0009(conn, *_legacy_book())
        conn.execute(text("UPDATE sub_balances SET balance_minor = 600 WHERE account_id = 'S'"))  # its own part
    with engine.connect() as conn:
        before = _snapshot(conn)
        assert chain.verify_chain(conn).ok
    assert dbmod.migrate(engine)[0] == "0009" and dbmod.current_revision(engine) >= "0010"
    with engine.connect() as conn:
        assert "sub_balances" not in inspect(conn).get_table_names()
        for table in ("ledger_entries", "duplicate_entries"):
            assert not _columns(conn, table) & set(LEGACY_COLUMNS), table
        assert _snapshot(conn) == before
        report = chain.verify_chain(conn)
        assert report.ok and report.rows_checked == 7
        history = _split_history(conn)
    assert set(history) == {"S", "S#1"}                       # A and B (root = account, or none) have none
    assert [(e["txn_id"], e["root_account_id"], e["transfer_id"], e["peer_account_id"])
            for e in history["S#1"]["ledger_entries"]] == [("x-in", "S", "t9", "S"), ("d-S1", "S", None, None)]
    assert history["S#1"]["sub_balance"] == dict(account_id="S#1", root_account_id="S", balance_minor=350,
                                                 status="active", last_journal_id="1-0", closed=True, shards=0,
                                                 in_accounts=False)
    assert [e["txn_id"] for e in history["S"]["ledger_entries"]] == ["x-out"]
    assert history["S"]["sub_balance"]["balance_minor"] == 600
    # the drain writes on, chained after the migrated rows
    apply_batch(engine, 0, [(f"{1_700_000_000_100}-0", entry("c2-A", "credit", "A", 50, 1350))])
    with engine.connect() as conn:
        report = chain.verify_chain(conn)
        assert report.ok and report.rows_checked == 8
        assert conn.execute(text("SELECT balance_minor FROM accounts WHERE account_id = 'A'")).scalar_one() == 1350

    # downgrade puts the columns (root = account) and sub_balances (= accounts) back;
    # upgrading again finds no split history there and keeps the two findings
    with engine.begin() as conn:
        command.downgrade(dbmod._alembic_config(conn), "0009")
    with engine.connect() as conn:
        assert set(LEGACY_COLUMNS) <= _columns(conn, "ledger_entries")
        assert conn.execute(text("SELECT COUNT(*) FROM ledger_entries WHERE root_account_id = account_id "
                                 "AND transfer_id IS NULL")).scalar_one() == 8
        subs = dict(conn.execute(text("SELECT account_id, balance_minor FROM sub_balances")).all())
        assert subs == {"A": 1350, "B": 5, "S": 950}
        assert chain.verify_chain(conn).ok
    assert dbmod.migrate(engine)[0] == "0009" and dbmod.current_revision(engine) >= "0010"
    with engine.connect() as conn:
        assert set(_split_history(conn)) == {"S", "S#1"}
        assert chain.verify_chain(conn).ok


def test_a_book_written_since_the_removal_gets_no_finding(engine):
    with engine.begin() as conn:
        command.upgrade(dbmod._alembic_config(conn), "0009")
        _book_at_0009(conn, [_entry_row(i, f"c{i}", "A", 10, root="A") for i in range(1, 4)], [],
                      {"A": (30, "A", 0, False, True)})
        before = _snapshot(conn)
    dbmod.migrate(engine)
    with engine.connect() as conn:
        assert _snapshot(conn) == before and chain.verify_chain(conn).ok
        assert conn.execute(select(Discrepancy)).first() is None


def test_a_failed_upgrade_on_postgresql_changes_nothing():
    with fresh_database() as url:
        eng = dbmod.make_engine(url)
        try:
            with eng.begin() as conn:
                command.upgrade(dbmod._alembic_config(conn), "0009")
                _book_at_0009(conn, *_legacy_book())
                # something of the operator's that depends on the table: DROP TABLE is refused
                conn.execute(text("CREATE VIEW shard_report AS SELECT account_id FROM sub_balances"))
                before = _snapshot(conn)
            with pytest.raises(Exception, match="depend"):
                dbmod.migrate(eng)
            with eng.connect() as conn:
                assert dbmod.stored_revision(eng) == "0009"
                assert set(LEGACY_COLUMNS) <= _columns(conn, "ledger_entries")
                assert "sub_balances" in inspect(conn).get_table_names()
                assert conn.execute(select(Discrepancy)).first() is None
                assert _snapshot(conn) == before and chain.verify_chain(conn).ok
        finally:
            eng.dispose()


def test_the_models_match_the_migrated_schema(engine):
    dbmod.migrate(engine)
    with engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []


# ---------------------------------------------------------------- property: any book at 0009

_ACCOUNTS = ("A", "B", "S", "S#1", "S#2")


@st.composite
def books(draw):
    """A book at 0009: entries of a few accounts, each plain (root = account), with no
    root (older than 0003), or legacy (another root, a transfer, a peer); a few of them
    also recorded as duplicates; sub_balances equal to accounts or not."""
    n = draw(st.integers(1, 12))
    entries, dups = [], []
    for i in range(1, n + 1):
        acct = draw(st.sampled_from(_ACCOUNTS))
        mark = draw(st.sampled_from(["plain", "plain", "none", "root", "transfer", "peer"]))
        root = {"plain": acct, "none": None, "root": acct.split("#")[0] + "X"}.get(mark, acct)
        row = _entry_row(i, f"t{i}", acct, draw(st.integers(-500, 500)) or 1, root=root,
                         transfer="x%d" % i if mark == "transfer" else None,
                         peer="P" if mark == "peer" else None)
        entries.append(row)
        if draw(st.booleans()) and len(dups) < 3:
            dups.append(dict(row, journal_id=f"{2_000_000_000_000 + i}-0", journal_pos=_pos(10 ** 12 + i)))
    subs = {}
    for acct in sorted({e["account_id"] for e in entries}):
        total = sum(e["amount_minor"] for e in entries if e["account_id"] == acct)
        odd = draw(st.sampled_from(["same", "same", "balance", "shards", "closed", "not_in_accounts"]))
        subs[acct] = (total + (1 if odd == "balance" else 0), acct, 2 if odd == "shards" else 0, odd == "closed",
                      odd != "not_in_accounts")
    return entries, dups, subs


def _expected_history(entries, dups, subs) -> dict[str, set]:
    out: dict[str, set] = {}
    for table, rows in (("ledger_entries", entries), ("duplicate_entries", dups)):
        for e in rows:
            if e["transfer_id"] or e["peer_account_id"] or (e["root_account_id"] not in (None, e["account_id"])):
                out.setdefault(e["account_id"], set()).add((table, e["txn_id"], e["journal_id"]))
    for acct, (balance, root, shards, closed, in_accounts) in subs.items():
        total = sum(e["amount_minor"] for e in entries if e["account_id"] == acct)
        if not in_accounts or shards or closed or balance != total:
            out.setdefault(acct, set()).add(("sub_balances", acct, None))
    return out


@pytest.fixture(scope="module")
def empty_0009(tmp_path_factory):
    """An SQLite database migrated to 0009 once; each example works on a copy."""
    path = tmp_path_factory.mktemp("m10") / "empty-0009.db"
    eng = dbmod.make_engine(f"sqlite:///{path}")
    with eng.begin() as conn:
        command.upgrade(dbmod._alembic_config(conn), "0009")
    eng.dispose()
    return path


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(book=books())
def test_property_any_book_keeps_its_rows_hashes_and_exactly_its_split_history(empty_0009, book):
    entries, dups, subs = book
    path = empty_0009.with_name("book.db")
    shutil.copyfile(empty_0009, path)
    eng = dbmod.make_engine(f"sqlite:///{path}")
    try:
        with eng.begin() as conn:
            _book_at_0009(conn, entries, dups, subs)
            for acct in subs:                                   # accounts hold the real totals
                conn.execute(text("UPDATE accounts SET balance_minor = :b WHERE account_id = :a"),
                             dict(a=acct, b=sum(e["amount_minor"] for e in entries if e["account_id"] == acct)))
            before = _snapshot(conn)
        dbmod.migrate(eng)
        with eng.connect() as conn:
            assert _snapshot(conn) == before                       # every row, hash and balance as it was
            report = chain.verify_chain(conn)
            assert report.ok and report.rows_checked == len(entries)
            history = _split_history(conn)
        got = {acct: {(t, e["txn_id"], e["journal_id"]) for t in ("ledger_entries", "duplicate_entries")
                      for e in ev.get(t, [])} | ({("sub_balances", acct, None)} if "sub_balance" in ev else set())
               for acct, ev in history.items()}
        assert got == _expected_history(entries, dups, subs)
    finally:
        eng.dispose()
