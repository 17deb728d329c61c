"""Redis full under load (issue 33 items 3 and 5): with maxmemory reached (noeviction)
charges are refused and nothing is written, while the reconcile daemon keeps draining,
acknowledging and trimming (XREADGROUP, XACK and XTRIM need no memory and free it), keeps
running its passes, says once in a while (not twice a second) what it cannot do (journal
hold releases), and once memory is freed the refused charges, retried with their txn ids,
apply exactly once and are booked. The real daemon (a subprocess) on a real PostgreSQL."""
from __future__ import annotations

import time

import pytest
from sqlalchemy import create_engine, func, select

from core import Ledger, LedgerUnavailable, RetryPolicy, Status
from reconcile_service.models import Hold, LedgerEntry, ReconcilePass
from reconcile_service.verify import verify
from tests.reconcile.conftest import spawn
from tests.support.postgres import fresh_database
from tests.support.servers import RedisServer, wait_for

pytestmark = pytest.mark.slow


def booked(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(LedgerEntry)).scalar_one()


def passes(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(ReconcilePass)
                            .where(ReconcilePass.outcome != "running")).scalar_one()


def fill(client, chunk_bytes: int = 64 * 1024) -> None:
    """Write filler keys until Redis refuses (maxmemory), then put maxmemory 2 MB under
    what is used: the small frees of a busy server (XACK, client buffers) do not let a
    write through by chance, as on a server that load keeps full."""
    n = int(client.get("filler:count") or 0)
    while True:
        try:
            client.set(f"filler:{n}", b"x" * chunk_bytes)
        except Exception as exc:       # redis.exceptions.OutOfMemoryError
            assert "maxmemory" in str(exc), exc
            break
        n += 1
    client.config_set("maxmemory", client.info("memory")["used_memory"] - 2 * 1024 * 1024)


def test_daemon_keeps_booking_and_trimming_while_redis_is_full(tmp_path):
    with RedisServer("--maxmemory-policy", "noeviction") as server, fresh_database() as pg_url:
        ledger = Ledger.from_url(server.url, retry=RetryPolicy(deadline_s=1.0))
        raw = server.client()
        for i in range(20):
            assert ledger.open_account(f"A-{i}", txn_id=f"open-{i}", initial_minor=1_000_000).applied
        log_path = tmp_path / "daemon.log"
        config = tmp_path / "reconcile.toml"
        config.write_text("max_backoff_s = 4.0\nfirst_backoff_s = 0.5\n")
        proc = spawn("run", "--config", str(config), "--metrics-port", "0", "--log-format", "text",
                     "--batch-size", "50", "--reconcile-interval-s", "1", "--trim-interval-s", "0.5",
                     "--trim-keep-s", "1", "--hold-expiry-interval-s", "0.3", "--block-ms", "100",
                     redis_url=server.url, database_url=pg_url, log_path=log_path)
        engine = create_engine(pg_url)
        try:
            wait_for(lambda: booked(engine) >= 20, timeout_s=60, what="the opening entries booked")
            used = raw.info("memory")["used_memory"]
            raw.config_set("maxmemory", used + 4 * 1024 * 1024)
            # load until full: charges applied before the limit must all be booked
            applied: list[str] = []
            refused: list[tuple[str, str]] = []
            n = 0
            while not refused or n < 400:
                acct, txn = f"A-{n % 20}", f"d-{n}"
                try:
                    if ledger.deduct(acct, 1, txn_id=txn).applied:
                        applied.append(txn)
                except LedgerUnavailable as exc:
                    assert "out of memory" in str(exc)
                    refused.append((acct, txn))
                n += 1
                if n == 200:
                    # a hold that expires while Redis is full: its release is a write the
                    # sweep cannot do until memory is freed
                    assert ledger.hold("A-0", 500, txn_id="h-expiring", ttl_s=5).applied
                    fill(raw)                       # the rest of the memory goes at once
            assert refused, "Redis never filled"
            full_since = time.monotonic()
            log_mark = log_path.stat().st_size
            # while full: everything applied is booked, the journal is trimmed, passes go on
            wait_for(lambda: booked(engine) >= 20 + 1 + len(applied), timeout_s=60,
                     what="every applied charge booked while Redis is full")
            wait_for(lambda: sum(raw.xlen(p.journal) for p in ledger.partitions) == 0,
                     timeout_s=30, what="the journal trimmed while Redis is full")
            fill(raw)                 # what the trim freed is taken again: Redis stays full
            passes_before = passes(engine)
            with pytest.raises(LedgerUnavailable):
                ledger.deduct("A-1", 1, txn_id=refused[0][1])          # still full: still refused
            wait_for(lambda: passes(engine) >= passes_before + 3, timeout_s=30, what="passes while full")
            time.sleep(max(0.0, 10 - (time.monotonic() - full_since)))
            with engine.connect() as conn:     # expired, but its release could not be journaled
                assert conn.execute(select(Hold.status).where(Hold.hold_txn_id == "h-expiring")).scalar_one() == "active"
            assert proc.poll() is None, "the daemon exited"
            new_log = log_path.read_bytes()[log_mark:].decode(errors="replace")
            full_lines = [ln for ln in new_log.splitlines() if "Redis is full" in ln]
            assert full_lines, "the daemon never said what it cannot do"
            assert "hold" in full_lines[0]
            assert len(full_lines) <= 12, f"{len(full_lines)} 'full' lines in ~10 s: it does not back off"
            assert "redis unavailable" not in new_log
            # memory freed: the refused charges retried with their ids apply once, are booked
            for key in raw.scan_iter("filler:*", count=1000):
                raw.delete(key)
            raw.config_set("maxmemory", 0)
            for acct, txn in refused:
                assert ledger.deduct(acct, 1, txn_id=txn).status is Status.APPLIED
                again = ledger.deduct(acct, 1, txn_id=txn)
                assert again.replayed
            total = 20 + 1 + len(applied) + len(refused)
            wait_for(lambda: booked(engine) >= total + 1, timeout_s=60,
                     what="the refused charges and the hold release booked once memory was freed")
            assert booked(engine) == total + 1            # + the hold_expire, nothing doubled
        finally:
            proc.terminate()
            proc.wait(30)
            engine.dispose()
        report = verify(ledger, create_engine(pg_url))
        assert report.ok, report.violations
        spent = sum(1_000_000 - ledger.balance(f"A-{i}") for i in range(20))
        assert spent == len(applied) + len(refused)
        ledger.close()


def test_passes_and_hold_sweeps_keep_their_interval_under_load(tmp_path):
    """A backlog the daemon needs many batches for: passes and hold releases run at their
    interval while it drains (they used to wait until the journal went quiet)."""
    from core import DeductRequest
    with RedisServer("--maxmemory-policy", "noeviction") as server, fresh_database() as pg_url:
        ledger = Ledger.from_url(server.url)
        accounts = [f"B-{i}" for i in range(50)]
        for a in accounts:
            assert ledger.open_account(a, txn_id=f"open-{a}", initial_minor=10_000_000).applied
        assert ledger.hold("B-0", 500, txn_id="h-soon", ttl_s=2).applied
        backlog = 40_000
        for start in range(0, backlog, 1000):
            results = ledger.deduct_many([DeductRequest(accounts[n % 50], 1, f"bl-{n}")
                                          for n in range(start, start + 1000)])
            assert all(r.applied for r in results)
        log_path = tmp_path / "daemon.log"
        proc = spawn("run", "--metrics-port", "0", "--log-format", "text", "--batch-size", "20",
                     "--reconcile-interval-s", "1", "--hold-expiry-interval-s", "0.5", "--block-ms", "100",
                     redis_url=server.url, database_url=pg_url, log_path=log_path)
        engine = create_engine(pg_url)
        total = 50 + 1 + backlog
        try:
            wait_for(lambda: booked(engine) > 0, timeout_s=60, what="the drain started")
            time.sleep(4)       # the hold has expired; the backlog is far from drained
            still_draining = booked(engine) < total
            # the release is journaled behind the backlog: the daemon's log says it was made
            released = "expired holds released" in log_path.read_text(errors="replace")
            seen_passes = passes(engine)
            assert still_draining, "the backlog drained too fast to show anything: make it larger"
            assert seen_passes >= 2, f"{seen_passes} passes in 4 s of draining at a 1 s interval"
            assert released, "the expired hold was not released while draining"
            wait_for(lambda: booked(engine) >= total + 1, timeout_s=300, what="the backlog booked")
            with engine.connect() as conn:
                assert conn.execute(select(Hold.status).where(Hold.hold_txn_id == "h-soon")).scalar() == "expired"
        finally:
            proc.terminate()
            proc.wait(30)
            engine.dispose()
        assert verify(ledger, create_engine(pg_url)).ok
        ledger.close()
