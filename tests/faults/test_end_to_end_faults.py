"""End-to-end fault scenarios judged by the invariant checker: several terminal
processes (deductions retried with the same txn id, refunds, top-ups, holds captured,
voided or left to expire) run against a private redis-server and a fresh PostgreSQL
database while the reconcile daemon runs as a subprocess, and a fault is injected:
(a) the daemon SIGKILLed mid-batch several times and restarted; (c) Redis restarted
EMPTY without persistence: terminals (auto_init=False) are refused until the daemon has
restored the balances; (d) idempotency records expiring before a late retry. After
each: settle, `run --once`, `reconcile_service.verify`: zero violations. Figures go to
the JSON-lines file named by CASHIER_RELIABILITY_FIGURES (see docs/reliability.md).
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import random
import signal
import time

import pytest
from sqlalchemy import create_engine, func, select

from core import Ledger, LedgerNotInitialized, LedgerUnavailable, RetryPolicy, Status
from reconcile_service.models import DuplicateEntry, LedgerEntry
from reconcile_service.verify import verify
from tests.reconcile.conftest import run_cli, spawn
from tests.support.postgres import fresh_database
from tests.support.servers import RedisServer, wait_for

pytestmark = pytest.mark.slow
ACCOUNTS = [f"E-{i:02d}" for i in range(12)]
INITIAL_MINOR = 500_000
TERMINALS = 4


def record(name: str, figures: dict) -> None:
    path = os.environ.get("CASHIER_RELIABILITY_FIGURES")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"scenario": name, **figures}) + "\n")


def terminal(url: str, worker: int, seconds: float, queue) -> None:
    """One till: every operation's txn id is made before sending and reused until Redis
    answers (the outbox); LedgerNotInitialized (Redis lost its data) is a refusal: wait."""
    ledger = Ledger.from_url(url, auto_init=False, socket_timeout_s=0.5, retry=RetryPolicy(deadline_s=0.5))
    rng = random.Random(worker)
    stats = {"ops": 0, "applied": 0, "retries": 0, "refused_not_initialized": 0, "declined": 0}
    deducted: list[tuple[str, str, int]] = []
    end = time.monotonic() + seconds
    i = 0

    def send(op):
        while time.monotonic() < end + 20:
            try:
                return op()
            except LedgerNotInitialized:
                stats["refused_not_initialized"] += 1
                time.sleep(0.05)
            except LedgerUnavailable:
                stats["retries"] += 1
                time.sleep(0.05)
        raise RuntimeError("Redis did not come back")

    while time.monotonic() < end:
        i += 1
        account = rng.choice(ACCOUNTS)
        txn = f"w{worker}-{i}"
        roll = rng.random()
        if roll < 0.55:
            amount = rng.randint(1, 3000)
            result = send(lambda: ledger.deduct(account, amount, txn_id=txn, terminal_id=f"T{worker}"))
            if result.applied:
                deducted.append((account, txn, amount))
        elif roll < 0.7 and deducted:
            acct, orig, amount = rng.choice(deducted)
            result = send(lambda: ledger.refund(acct, max(1, amount // 4), txn_id=txn, original_txn_id=orig))
        elif roll < 0.85:
            result = send(lambda: ledger.credit(account, rng.randint(1, 2000), txn_id=txn))
        else:
            result = send(lambda: ledger.hold(account, rng.randint(1, 800), txn_id=txn, ttl_s=rng.choice((1, 600))))
            if result.applied:
                choice = rng.random()
                if choice < 0.45:
                    send(lambda: ledger.capture(txn, rng.randint(1, 100), txn_id=f"{txn}-c", account_id=account))
                elif choice < 0.8:
                    send(lambda: ledger.void(txn, txn_id=f"{txn}-v", account_id=account))
        stats["ops"] += 1
        stats["applied" if result.applied else "declined"] += 1
    queue.put((worker, stats, deducted))


class Rig:
    def __init__(self, tmp_path, pg_url):
        self.tmp_path, self.pg_url = tmp_path, pg_url
        self.redis = RedisServer().start()
        self.url = self.redis.url
        self.engine = create_engine(pg_url)
        self.ledger = Ledger.from_url(self.url)
        self.ledger.init()
        for a in ACCOUNTS:
            self.ledger.open_account(a, txn_id=f"open-{a}", initial_minor=INITIAL_MINOR)
        self.daemon = None
        self.daemons_started = 0

    def start_daemon(self):
        self.daemons_started += 1
        self.daemon = spawn("run", "--batch-size", "40", "--metrics-port", "0", "--block-ms", "100",
                            "--claim-idle-ms", "500", "--reconcile-interval-s", "2",
                            "--hold-expiry-interval-s", "1", "--retry-deadline-s", "0",
                            "--consumer-name", f"daemon-{self.daemons_started}",
                            redis_url=self.url, database_url=self.pg_url,
                            log_path=self.tmp_path / "daemon.log")

    def entries(self) -> int:
        try:
            with self.engine.connect() as conn:
                return conn.execute(select(func.count()).select_from(LedgerEntry)).scalar_one()
        except Exception:
            return 0

    def run_terminals(self, seconds: float, during=None) -> dict:
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        procs = [ctx.Process(target=terminal, args=(self.url, w, seconds, queue)) for w in range(TERMINALS)]
        for p in procs:
            p.start()
        extra = during() if during else {}
        totals: dict = {"deducted": []}
        for _ in procs:
            _, stats, deducted = queue.get(timeout=seconds + 60)
            for k, v in stats.items():
                totals[k] = totals.get(k, 0) + v
            totals["deducted"] += deducted
        for p in procs:
            p.join(10)
        totals.update(extra or {})
        return totals

    def settle_and_check(self) -> dict:
        """Stop the daemon (SIGTERM), let held entries be claimed, `run --once`, verify."""
        if self.daemon and self.daemon.poll() is None:
            self.daemon.send_signal(signal.SIGTERM)
            self.daemon.wait(30)
        time.sleep(1.2)                                   # holds with ttl 1 s lapse
        assert run_cli("run", "--once", "--claim-idle-ms", "0", redis_url=self.url,
                       database_url=self.pg_url) == 0
        report = verify(self.ledger, self.engine)
        assert report.ok, [v.as_dict() for v in report.violations]
        log = (self.tmp_path / "daemon.log").read_text() if (self.tmp_path / "daemon.log").exists() else ""
        assert "Traceback" not in log
        return {"violations": len(report.violations), "accounts_checked": report.checked["accounts"],
                "entries_in_db": report.checked["entries"]}

    def close(self):
        if self.daemon and self.daemon.poll() is None:
            self.daemon.kill()
        self.ledger.close()
        self.engine.dispose()
        self.redis.cleanup()


@pytest.fixture
def rig(tmp_path):
    with fresh_database() as pg_url:
        r = Rig(tmp_path, pg_url)
        try:
            yield r
        finally:
            r.close()


def test_daemon_sigkilled_mid_batch_several_times(rig):
    rig.start_daemon()
    kills = []

    def killer():
        for _ in range(4):
            before = rig.entries()
            wait_for(lambda: rig.entries() > before + 40, 90, "daemon progress")
            rig.daemon.kill()                           # SIGKILL: a batch in any state
            rig.daemon.wait(10)
            kills.append(time.monotonic())
            rig.start_daemon()
        return {}
    started = time.monotonic()
    totals = rig.run_terminals(12, killer)
    target = sum(rig.ledger.client.xinfo_stream(p.journal)["length"] for p in rig.ledger.partitions)
    recover_started = time.monotonic()
    wait_for(lambda: all(g["pending"] == 0 and (g.get("lag") or 0) == 0
                         for p in rig.ledger.partitions for g in rig.ledger.client.xinfo_groups(p.journal)),
             180, "the restarted daemon catches up")
    recover_s = time.monotonic() - recover_started
    figures = rig.settle_and_check()
    with rig.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(DuplicateEntry)).scalar_one() == 0
    assert len(kills) == 4 and totals["ops"] > 200 and target > 0
    record("reconcile daemon SIGKILLed mid-batch (x4) and restarted", {
        "operations": totals["ops"], "applied": totals["applied"], "faults_injected": len(kills),
        "violations": figures["violations"], "time_to_recover_s": round(recover_s, 2),
        "entries_in_db": figures["entries_in_db"], "duration_s": round(time.monotonic() - started, 1)})


def test_redis_restarted_empty_terminals_refused_until_restored(rig):
    rig.start_daemon()
    timing = {}

    def wipe():
        time.sleep(4)
        wait_for(lambda: rig.entries() > 100, 90, "entries in the database")
        rig.redis.kill()                                # no persistence: everything is gone
        rig.redis.start()
        timing["restarted"] = time.monotonic()
        probe = Ledger.from_url(rig.url, auto_init=False)
        refused = 0
        while True:                                     # a new terminal: refused until restored
            try:
                probe.balance(ACCOUNTS[0])
                break
            except LedgerNotInitialized:
                refused += 1
                time.sleep(0.05)
        timing["restored"] = time.monotonic()
        probe.close()
        return {"probe_refusals": refused}
    totals = rig.run_terminals(12, wipe)
    figures = rig.settle_and_check()
    assert totals["refused_not_initialized"] > 0 and totals["probe_refusals"] > 0
    recover_s = timing["restored"] - timing["restarted"]
    record("Redis restarted empty, restored from PostgreSQL by the daemon", {
        "operations": totals["ops"], "applied": totals["applied"], "faults_injected": 1,
        "terminal_refusals_not_initialized": totals["refused_not_initialized"],
        "violations": figures["violations"], "time_to_recover_s": round(recover_s, 2),
        "entries_in_db": figures["entries_in_db"]})


def test_idempotency_records_expired_before_late_retries(rig):
    rig.start_daemon()
    totals = rig.run_terminals(8)
    late = [d for d in totals["deducted"]][:10]
    # the terminals may have drained the accounts: top them up so every late retry applies
    # again (a declined retry is no duplicate, and the count below must not depend on luck)
    for account in sorted({account for account, _, _ in late}):
        rig.ledger.credit(account, 1_000_000, txn_id=f"late-topup-{account}")
    applied_again = 0
    started = time.monotonic()
    for account, txn, amount in late:                   # the record expired, then the retry came
        rig.ledger.client.delete(rig.ledger.schema.partition_of(account).txn(txn))
        applied_again += rig.ledger.deduct(account, amount, txn_id=txn).applied
    wait_for(lambda: _compensated(rig) == applied_again, 180, "the daemon reverses every duplicate")
    recover_s = time.monotonic() - started
    figures = rig.settle_and_check()
    assert applied_again == len(late) == 10 and _compensated(rig) == applied_again
    record("idempotency records expired before late retries", {
        "operations": totals["ops"] + len(late), "applied": totals["applied"] + applied_again,
        "faults_injected": applied_again, "duplicates_reversed": _compensated(rig),
        "violations": figures["violations"], "time_to_recover_s": round(recover_s, 2),
        "entries_in_db": figures["entries_in_db"]})


def _compensated(rig) -> int:
    with rig.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(DuplicateEntry).where(
            DuplicateEntry.status == "compensated")).scalar_one()
