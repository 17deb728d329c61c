"""The invariant checker (`reconcile_service.verify`, `cashierctl verify`) against real
PostgreSQL and Redis: green after a mixed workload with holds and a hot account, and
each injected violation found with its evidence: a balance hash changed in Redis, a
database row deleted, a duplicate left unreversed, a hold resolved twice."""
from __future__ import annotations

import json

from sqlalchemy import delete, insert, select
from sqlalchemy import text as sql_text

from admin.cashierctl import main as cashierctl
from core import Ledger
from reconcile_service.models import LedgerEntry
from reconcile_service.verify import verify
from tests.reconcile.conftest import open_accounts, run_cli, workload


def _ctl(capsys, redis_url, pg_url, *extra) -> tuple[int, dict]:
    capsys.readouterr()
    code = cashierctl(["--redis-url", redis_url, "--json", "verify", "--database-url", pg_url, *extra])
    return code, json.loads(capsys.readouterr().out)


def _busy_ledger(ledger: Ledger) -> list[str]:
    accounts = open_accounts(ledger, 8)
    workload(ledger, accounts, 400, seed=21)
    ledger.hold(accounts[0], 100, txn_id="h-1", ttl_s=600)
    ledger.capture("h-1", 60, txn_id="h-1-c")
    ledger.hold(accounts[1], 100, txn_id="h-2", ttl_s=600)
    ledger.void("h-2", txn_id="h-2-v")
    ledger.open_account("HOT", txn_id="open-HOT", initial_minor=30_000)
    for i in range(30):
        ledger.deduct("HOT", 900, txn_id=f"hot-{i}")
    return accounts


def test_verify_is_green_after_a_clean_run_and_drains_first(redis_url, pg_url, db, ledger, capsys):
    accounts = _busy_ledger(ledger)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    ledger.credit(accounts[2], 500, txn_id="late-credit")          # not yet in the database
    code, out = _ctl(capsys, redis_url, pg_url)
    assert code == 0, out["violations"]
    assert out["checked"]["entries_drained"] == 1 and out["checked"]["accounts"] == 9
    assert out["checked"]["redis_accounts"] == 9 and out["checked"]["holds"] == 2
    capsys.readouterr()
    assert cashierctl(["--redis-url", redis_url, "verify", "--database-url", pg_url]) == 0
    assert "0 violation(s)" in capsys.readouterr().out


def test_verify_finds_each_injected_violation(redis_url, pg_url, db, ledger, capsys):
    accounts = _busy_ledger(ledger)
    ledger.deduct(accounts[3], 10, txn_id="dup-me")
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert verify(ledger, db).ok

    part = ledger.partitions[0]
    ledger.client.hincrby(part.account(accounts[4]), "bal", 123)               # outside the scripts
    with db.begin() as conn:
        # the book is append-only (migration 0005): only its owner, switching that off, can lose a row
        conn.execute(sql_text("ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only"))
        conn.execute(delete(LedgerEntry).where(LedgerEntry.txn_id == "h-2-v"))  # a row lost in the database
        row = conn.execute(select(LedgerEntry).where(LedgerEntry.txn_id == "h-1-c")).one()._asdict()
        row.update(id=None, txn_id="h-1-v2", kind="void", amount_minor=0,      # the hold voided as well
                   journal_id="1-1", journal_pos="0" * 33 + "1", chain_seq=row["chain_seq"] + 10 ** 9)
        row.pop("id")
        conn.execute(insert(LedgerEntry).values(**row))
    ledger.client.delete(ledger.schema.partition_of(accounts[3]).txn("dup-me"))
    ledger.deduct(accounts[3], 10, txn_id="dup-me")                           # applied twice, not yet reversed

    code, out = _ctl(capsys, redis_url, pg_url)
    assert code == 1
    kinds = {(v["kind"], v["account_id"]) for v in out["violations"]}
    assert ("balance_mismatch", accounts[4]) in kinds                         # Redis hash changed
    assert ("duplicate_not_reversed", accounts[3]) in kinds
    assert any(k == "hold_resolved_twice" for k, _ in kinds)
    assert any(k == "entry_missing_in_db" for k, _ in kinds)                  # the deleted row
    mismatch = next(v for v in out["violations"] if v["kind"] == "balance_mismatch")
    assert mismatch["evidence"]["redis_balance_minor"] - mismatch["evidence"]["db_balance_minor"] == 123
    capsys.readouterr()
    assert cashierctl(["--redis-url", redis_url, "verify", "--database-url", pg_url]) == 1
    text = capsys.readouterr().out
    assert "VIOLATION balance_mismatch" in text and "Traceback" not in text


def test_verify_without_a_migrated_database_says_so(redis_url, pg_url, ledger, capsys):
    ledger.open_account("A-1", txn_id="open-A-1")
    capsys.readouterr()
    assert cashierctl(["--redis-url", redis_url, "verify", "--database-url", pg_url]) == 4
    assert "reconcile-service migrate" in capsys.readouterr().err
