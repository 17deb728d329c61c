"""Faults with real processes and servers: kill -9 mid-batch, two instances at once,
SIGTERM, a crash exactly between COMMIT and XACK (the journal's fault point), PostgreSQL
stopped and restarted under the daemon, and the metrics endpoint."""
from __future__ import annotations

import json
import signal
import threading
import time
import urllib.request

import pytest
from sqlalchemy import create_engine, func, select

from core import Ledger
from reconcile_service.models import DuplicateEntry, LedgerEntry
from tests.reconcile.conftest import assert_books_agree, open_accounts, run_cli, spawn, workload
from tests.support.fault_daemon import FAULT_ENV, FAULT_EXIT_CODE
from tests.support.postgres import PostgresServer
from tests.support.servers import free_port, wait_for

pytestmark = pytest.mark.slow


def _count(engine) -> int:
    try:
        with engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(LedgerEntry)).scalar_one()
    except Exception:
        return 0   # tables not created yet


def _pending_of(ledger: Ledger, consumer: str) -> int:
    """Entries delivered to `consumer` and not acknowledged, over every partition."""
    return sum(c["pending"] for p in ledger.partitions
               for c in ledger.client.xinfo_consumers(p.journal, "reconcile") if c["name"] == consumer)


def test_kill_9_mid_batch_then_restart_is_exact(redis_url, pg_url, db, tmp_path):
    ledger = Ledger.from_url(redis_url, partitions=2)
    ledger.init(partitions=2)
    accounts = open_accounts(ledger, 30)
    applied = workload(ledger, accounts, 12_000, seed=3) + len(accounts)
    kills = []
    for round_ in range(3):
        victim = f"victim-{round_}"
        proc = spawn("run", "--batch-size", "50", "--metrics-port", "0", "--consumer-name", victim,
                     redis_url=redis_url, database_url=pg_url, log_path=tmp_path / "svc.log")
        before = _count(db)
        # kill while it is working: after it applied something, before it finished
        wait_for(lambda: _count(db) > before + 300 or proc.poll() is not None, 60, "progress")
        alive = proc.poll() is None
        proc.kill()            # SIGKILL: no handler, no cleanup, batches in any state
        proc.wait(10)
        kills.append({"alive": alive, "before": before, "at_kill": _count(db), "pending": _pending_of(ledger, victim)})
    # every kill landed while the service was mid-way: alive, after progress, before the end
    for k in kills:
        assert k["alive"] and k["before"] < k["at_kill"] < applied, (kills, applied)
    # ... and at least one cut a batch between its delivery and its acknowledgement
    assert any(k["pending"] > 0 for k in kills), kills
    # restart: entries held by the dead consumers are claimed once they are idle
    started = time.monotonic()
    assert run_cli("run", "--once", "--claim-idle-ms", "300", redis_url=redis_url, database_url=pg_url) == 0
    print(f"{applied} entries, kills {kills}, catch-up in {time.monotonic() - started:.2f} s")
    assert all(_pending_of(ledger, f"victim-{r}") == 0 for r in range(3))
    assert_books_agree(ledger, db, expected_entries=applied)
    with db.connect() as conn:
        assert conn.execute(select(func.count()).select_from(DuplicateEntry)).scalar_one() == 0


def _metric(port: int, name: str) -> float:
    """Sum of a metric's samples on the daemon's /metrics (0 when absent)."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name + "{") or line.startswith(name + " "))


@pytest.mark.parametrize("restart_name", ["victim", "successor"])
def test_crash_after_commit_before_xack_is_redelivered(redis_url, pg_url, db, tmp_path, restart_name):
    """The fault point of reconcile_service.journal stops the daemon exactly between the
    COMMIT of its 3rd batch and that batch's XACK. Restarted without it (under the same
    consumer name: it reads its own pending entries; under another: it claims them), the
    daemon gets exactly that batch again, counts it as redelivered and changes nothing."""
    ledger = Ledger.from_url(redis_url)
    accounts = open_accounts(ledger, 10)
    applied = len(accounts) + workload(ledger, accounts, 400, seed=21)
    assert applied > 200
    victim = spawn("run", "--batch-size", "50", "--metrics-port", "0", "--consumer-name", "victim",
                   env={FAULT_ENV: "3"}, redis_url=redis_url, database_url=pg_url, log_path=tmp_path / "victim.log")
    assert victim.wait(60) == FAULT_EXIT_CODE, (tmp_path / "victim.log").read_text()[-2000:]
    # three batches committed, the third never acknowledged
    assert _count(db) == 150
    assert _pending_of(ledger, "victim") == 50
    group = ledger.client.xinfo_groups(ledger.partitions[0].journal)[0]
    assert group["pending"] == 50
    port = free_port()
    proc = spawn("run", "--batch-size", "50", "--metrics-port", str(port), "--block-ms", "100",
                 "--claim-idle-ms", "200", "--consumer-name", restart_name,
                 redis_url=redis_url, database_url=pg_url, log_path=tmp_path / "restart.log")
    try:
        wait_for(lambda: _count(db) == applied and _pending_of(ledger, "victim") == 0
                 and _pending_of(ledger, restart_name) == 0, 60, "catch-up after the crash")
        wait_for(lambda: _metric(port, "reconcile_entries_redelivered_total") == 50, 30, "redelivery counted")
        assert _metric(port, "reconcile_entries_applied_total") == applied - 150
        assert _metric(port, "reconcile_duplicate_txns_total") == 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert_books_agree(ledger, db, expected_entries=applied)
    with db.connect() as conn:
        assert conn.execute(select(func.count()).select_from(DuplicateEntry)).scalar_one() == 0


def test_two_instances_apply_every_entry_exactly_once(redis_url, pg_url, db, tmp_path):
    ledger = Ledger.from_url(redis_url, partitions=4)
    ledger.init(partitions=4)
    accounts = open_accounts(ledger, 25)
    total = {"n": len(accounts)}
    procs = [spawn("run", "--batch-size", "40", "--metrics-port", "0", "--block-ms", "100",
                   "--claim-idle-ms", "1000", "--consumer-name", f"inst-{i}",
                   redis_url=redis_url, database_url=pg_url, log_path=tmp_path / f"inst{i}.log")
             for i in range(2)]
    try:
        lock = threading.Lock()

        def produce(seed):
            n = workload(Ledger.from_url(redis_url), accounts, 3000, seed=seed, tag=f"p{seed}")
            with lock:
                total["n"] += n
        producers = [threading.Thread(target=produce, args=(s,)) for s in (10, 11)]
        for t in producers:
            t.start()
        for t in producers:
            t.join()
        try:
            wait_for(lambda: _count(db) == total["n"], 60, "both instances catch up")
        except TimeoutError:
            raise AssertionError(f"db has {_count(db)} entries, expected {total['n']}, "
                                 f"stream {[ledger.client.xinfo_groups(p.journal) for p in ledger.partitions]}")
        # both did work (the group shares the partitions' entries between them)
        consumers = {c["name"] for p in ledger.partitions
                     for c in ledger.client.xinfo_consumers(p.journal, "reconcile")}
        assert {"inst-0", "inst-1"} <= consumers
        for p in procs:
            p.send_signal(signal.SIGTERM)
        assert [p.wait(30) for p in procs] == [0, 0]     # finish the batch, ack, exit 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert_books_agree(ledger, db, expected_entries=total["n"])
    log = (tmp_path / "inst0.log").read_text()
    assert "reconcile service stopped" in log and "Traceback" not in log


def test_database_stopped_and_restarted_daemon_catches_up(redis_url, tmp_path):
    if not PostgresServer.available():
        pytest.skip("no initdb/pg_ctl (PostgreSQL 15 server binaries) on this machine")
    pg = PostgresServer().init().start()
    try:
        url = pg.url(pg.create_database())
        engine = create_engine(url)
        ledger = Ledger.from_url(redis_url)
        accounts = open_accounts(ledger, 10)
        applied = len(accounts) + workload(ledger, accounts, 500, seed=4)
        port = free_port()
        proc = spawn("run", "--batch-size", "100", "--metrics-port", str(port), "--block-ms", "100",
                     "--retry-deadline-s", "0",
                     redis_url=redis_url, database_url=url, log_path=tmp_path / "svc.log")
        try:
            wait_for(lambda: _count(engine) == applied, 60, "first drain")
            engine.dispose()
            pg.stop()                                   # the database goes away
            applied += workload(ledger, accounts, 500, seed=5, tag="down")
            health = f"http://127.0.0.1:{port}/healthz"

            def unhealthy():
                try:
                    urllib.request.urlopen(health, timeout=2)
                    return False
                except urllib.error.HTTPError as exc:
                    return exc.code == 503 and json.loads(exc.read())["database_up"] is False
            wait_for(unhealthy, 30, "health reports the database down")
            assert proc.poll() is None                  # still alive, retrying
            pg.start()                                  # and comes back
            wait_for(lambda: _count(engine) == applied, 90, "catch-up after the restart")
            wait_for(lambda: urllib.request.urlopen(health, timeout=2).status == 200, 30, "healthy again")
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
        assert_books_agree(ledger, engine, expected_entries=applied)
        log = (tmp_path / "svc.log").read_text()
        assert "database unavailable, retrying" in log
        engine.dispose()
    finally:
        pg.cleanup()


def test_metrics_endpoint_and_sigint(redis_url, pg_url, db, ledger, tmp_path):
    open_accounts(ledger, 3)
    port = free_port()
    proc = spawn("run", "--metrics-port", str(port), "--block-ms", "100", "--reconcile-interval-s", "0.2",
                 redis_url=redis_url, database_url=pg_url, log_path=tmp_path / "svc.log")
    try:
        wait_for(lambda: _count(db) == 3, 30, "drain")
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: b"reconcile_last_pass_timestamp_seconds " in urllib.request.urlopen(
            base + "/metrics", timeout=2).read() and b"reconcile_last_pass_timestamp_seconds 0.0"
            not in urllib.request.urlopen(base + "/metrics", timeout=2).read(), 30, "a pass")
        text = urllib.request.urlopen(base + "/metrics", timeout=2).read().decode()
        assert 'reconcile_entries_applied_total{partition="0"} 3.0' in text
        assert 'reconcile_lag_entries{partition="0"}' in text
        assert "reconcile_batch_seconds_count" in text and "reconcile_discrepancies_open 0.0" in text
        health = json.loads(urllib.request.urlopen(base + "/healthz", timeout=2).read())
        assert health["ok"] and health["redis_up"] and health["database_up"]
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = [json.loads(line) for line in (tmp_path / "svc.log").read_text().splitlines() if line.startswith("{")]
    assert any(r["msg"] == "reconcile service stopped" for r in lines)
    assert all("password" not in json.dumps(r) for r in lines)
