"""The reconcile service at the ledger's edges (issue 12), against real PostgreSQL and
Redis: balances of 10^14 and more, up to MAX_BALANCE_MINOR, are booked exactly by
`run --once`; a repair that really fails (Redis out of memory) is recorded as an open
discrepancy with its evidence, counted in the metrics, and neither the pass nor the
daemon stops: the comparisons after it still run, and the repair is made once it can be."""
from __future__ import annotations

import json
import urllib.request

import pytest
from sqlalchemy import func, select

from core import MAX_AMOUNT_MINOR, MAX_BALANCE_MINOR, Ledger, Status
from reconcile_service.journal import Consumer
from reconcile_service.metrics import Metrics
from reconcile_service.models import (Account, Discrepancy, DuplicateEntry, LedgerEntry, QuarantinedEntry,
                                      ReconcilePass)
from reconcile_service.reconcile import Reconciler, compensation_txn_id
from reconcile_service.verify import verify
from tests.reconcile.conftest import assert_books_agree, run_cli, spawn
from tests.support.servers import RedisServer, free_port, wait_for


def _top_up(ledger: Ledger, account_id: str, amount_minor: int, tag: str) -> int:
    """Credits of at most MAX_AMOUNT_MINOR each; answers how many."""
    n = 0
    while amount_minor:
        step = min(amount_minor, MAX_AMOUNT_MINOR)
        assert ledger.credit(account_id, step, txn_id=f"{tag}-{n}").applied
        amount_minor -= step
        n += 1
    return n


def test_balances_up_to_the_limit_are_booked_exactly(redis_url, pg_url, db, ledger):
    big = 987_654_321_098_765          # 15 significant digits: tostring wrote 9.8765432109877e+14
    opening = big % MAX_AMOUNT_MINOR
    ledger.open_account("BIG", txn_id="open-BIG", initial_minor=opening)
    entries = 1 + _top_up(ledger, "BIG", big - opening, "up")
    assert ledger.balance("BIG") == big
    assert ledger.deduct("BIG", MAX_AMOUNT_MINOR, txn_id="d-max").applied
    assert ledger.hold("BIG", MAX_AMOUNT_MINOR - 1, txn_id="h-max", ttl_s=600).applied
    assert ledger.capture("h-max", 12_345_678_901, txn_id="c-max", account_id="BIG").applied
    assert ledger.refund("BIG", MAX_AMOUNT_MINOR - 7, txn_id="r-max", original_txn_id="d-max").applied
    entries += 4
    entries += _top_up(ledger, "BIG", MAX_BALANCE_MINOR - ledger.balance("BIG"), "fill")
    assert ledger.balance("BIG") == MAX_BALANCE_MINOR
    assert ledger.credit("BIG", 1, txn_id="over").status is Status.BALANCE_LIMIT_EXCEEDED
    ledger.open_account("SMALL", txn_id="open-SMALL", initial_minor=MAX_AMOUNT_MINOR)
    assert ledger.deduct("SMALL", MAX_AMOUNT_MINOR, txn_id="d-all").balance_minor == 0
    entries += 2

    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert_books_agree(ledger, db, expected_entries=entries)
    with db.connect() as conn:
        assert conn.execute(select(func.count()).select_from(QuarantinedEntry)).scalar_one() == 0
        assert conn.execute(select(Account.balance_minor).where(Account.account_id == "BIG")).scalar_one() \
            == MAX_BALANCE_MINOR
        row = conn.execute(select(LedgerEntry).where(LedgerEntry.txn_id == "c-max")).one()
        assert row.amount_minor == -12_345_678_901
        assert row.balance_after_minor == big - MAX_AMOUNT_MINOR - 12_345_678_901
        last = conn.execute(select(LedgerEntry.balance_after_minor).where(
            LedgerEntry.account_id == "BIG").order_by(LedgerEntry.journal_pos.desc()).limit(1)).scalar_one()
        assert last == MAX_BALANCE_MINOR
    report = verify(ledger, db)
    assert report.ok, report.violations


# ----------------------------------------------------------------- defect 5: a repair that fails

@pytest.fixture
def own_redis():
    server = RedisServer("--maxmemory-policy", "noeviction").start()
    yield server
    server.cleanup()


def _duplicate_and_drift(ledger: Ledger, url: str, pg_url: str) -> None:
    """A duplicate deduction (its record expired, the late retry applied again) on A-1,
    drained into the database, and a balance changed outside the scripts on B-1."""
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=5000)
    ledger.open_account("B-1", txn_id="open-B-1", initial_minor=5000)
    ledger.deduct("A-1", 1200, txn_id="t-1")
    assert run_cli("run", "--once", redis_url=url, database_url=pg_url) == 0
    ledger.client.delete(ledger.partitions[0].txn("t-1"))
    assert ledger.deduct("A-1", 1200, txn_id="t-1").applied and ledger.balance("A-1") == 2600
    ledger.client.hincrby(ledger.partitions[0].account("B-1"), "bal", 77)      # drift a pass must find


def _open(db, kind: str) -> list:
    with db.connect() as conn:
        return conn.execute(select(Discrepancy).where(Discrepancy.kind == kind,
                                                      Discrepancy.status == "open")).all()


def test_a_failed_repair_is_recorded_counted_and_the_pass_carries_on(own_redis, pg_url, db):
    ledger = Ledger.from_url(own_redis.url)
    _duplicate_and_drift(ledger, own_redis.url, pg_url)
    metrics = Metrics()
    Consumer(ledger, db, "test", batch_size=100, claim_idle_ms=30_000, metrics=metrics).drain()
    with db.connect() as conn:
        [dup] = conn.execute(select(DuplicateEntry)).all()
    admin = own_redis.client()
    admin.config_set("maxmemory", 1)              # Redis full: the compensating credit is refused

    report = Reconciler(ledger, db, metrics, "test").run_pass()
    assert report.repairs == [] and report.repairs_failed == ["t-1"]
    # the comparisons after the failed repair ran: B-1's drift is found in the same pass
    assert [(f.kind, f.account_id) for f in report.findings] == [("balance_mismatch", "B-1")]
    [failed] = _open(db, "repair_failed")
    assert failed.account_id == "A-1" and failed.txn_id == "t-1" and failed.journal_id == dup.journal_id
    assert "out of memory" in failed.cause and failed.repair_txn_id == compensation_txn_id(0, dup.journal_id)
    evidence = json.loads(failed.evidence_json)
    assert evidence["duplicate"]["amount_minor"] == -1200 and evidence["compensation_amount_minor"] == 1200
    assert evidence["retried_by_next_pass"] and "LedgerUnavailable" in evidence["error"]
    assert metrics.discrepancies_found.labels("repair_failed")._value.get() == 1
    assert metrics.discrepancies_open._value.get() == report.open_discrepancies >= 3   # dup, repair, drift
    assert metrics.last_pass_outcome_ok._value.get() == 0
    with db.connect() as conn:
        assert conn.execute(select(ReconcilePass.outcome).where(ReconcilePass.id == report.pass_id)
                            ).scalar_one() == "discrepancies"
        assert conn.execute(select(DuplicateEntry.status)).scalar_one() == "open"     # tried again later

    # still failing: the same row is updated, not a new one per pass
    again = Reconciler(ledger, db, metrics, "test").run_pass()
    assert again.repairs_failed == ["t-1"] and len(_open(db, "repair_failed")) == 1
    assert metrics.discrepancies_found.labels("repair_failed")._value.get() == 1

    admin.config_set("maxmemory", 0)              # memory freed: the next pass repairs it
    fixed = Reconciler(ledger, db, metrics, "test").run_pass()
    assert fixed.repairs == [compensation_txn_id(0, dup.journal_id)] and fixed.repairs_failed == []
    assert ledger.balance("A-1") == 3800 and _open(db, "repair_failed") == []
    with db.connect() as conn:
        row = conn.execute(select(Discrepancy).where(Discrepancy.kind == "repair_failed")).one()
        assert row.status == "repaired" and row.repair_txn_id == fixed.repairs[0]
    ledger.close()


def test_the_daemon_keeps_passing_while_a_repair_fails_and_repairs_it_later(own_redis, pg_url, db, tmp_path):
    ledger = Ledger.from_url(own_redis.url)
    _duplicate_and_drift(ledger, own_redis.url, pg_url)
    admin = own_redis.client()
    admin.config_set("maxmemory", 1)
    port = free_port()
    proc = spawn("run", "--metrics-port", str(port), "--block-ms", "100", "--reconcile-interval-s", "0.2",
                 redis_url=own_redis.url, database_url=pg_url, log_path=tmp_path / "svc.log")

    def passes(outcome: str) -> int:
        with db.connect() as conn:
            return conn.execute(select(func.count()).select_from(ReconcilePass).where(
                ReconcilePass.outcome == outcome)).scalar_one()
    try:
        wait_for(lambda: len(_open(db, "repair_failed")) == 1, 60, "the failed repair to be recorded")
        seen = passes("discrepancies")
        wait_for(lambda: passes("discrepancies") >= seen + 3, 60, "more passes while the repair fails")
        assert passes("failed") == 0 and proc.poll() is None
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
        assert 'reconcile_discrepancies_found_total{kind="repair_failed"} 1.0' in text
        assert 'reconcile_discrepancies_found_total{kind="balance_mismatch"} 1.0' in text
        assert "reconcile_last_pass_clean 0.0" in text
        admin.config_set("maxmemory", 0)
        wait_for(lambda: _open(db, "repair_failed") == [], 60, "the repair once memory is free")
        wait_for(lambda: ledger.balance("A-1") == 3800, 30, "the compensating credit")
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(30)
    with db.connect() as conn:
        assert conn.execute(select(DuplicateEntry.status)).scalar_one() == "compensated"
    ledger.close()


def test_a_declined_repair_is_recorded_for_a_person(redis_url, pg_url, db, ledger):
    """The compensation would pass the balance limit (the customer topped up to it after the
    duplicate): declined, stored, so never retried; recorded and counted like any failure."""
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=MAX_AMOUNT_MINOR)
    _top_up(ledger, "A-1", MAX_BALANCE_MINOR - MAX_AMOUNT_MINOR - 100, "up")
    ledger.deduct("A-1", 100, txn_id="t-1")
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    ledger.client.delete(ledger.partitions[0].txn("t-1"))
    assert ledger.deduct("A-1", 100, txn_id="t-1").applied
    assert ledger.credit("A-1", 300, txn_id="last-top-up").balance_minor == MAX_BALANCE_MINOR
    metrics = Metrics()
    Consumer(ledger, db, "test", batch_size=1000, claim_idle_ms=30_000, metrics=metrics).drain()
    report = Reconciler(ledger, db, metrics, "test").run_pass()
    assert report.repairs_failed == ["t-1"] and report.findings == []
    [failed] = _open(db, "repair_failed")
    assert "BALANCE_LIMIT_EXCEEDED" in failed.cause and "by hand" in failed.cause
    assert not json.loads(failed.evidence_json)["retried_by_next_pass"]
    assert metrics.discrepancies_found.labels("repair_failed")._value.get() == 1
    with db.connect() as conn:
        assert conn.execute(select(DuplicateEntry.status)).scalar_one() == "reported"
    assert Reconciler(ledger, db, metrics, "test").run_pass().repairs_failed == []   # not retried
    assert ledger.balance("A-1") == MAX_BALANCE_MINOR
