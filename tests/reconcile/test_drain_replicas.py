"""The drain books only what a replica holds when the ledger asks for replicas
(`wait_replicas`), deterministically, on private redis-server processes (a primary and a
replica started by the test) and a fresh PostgreSQL database.

The edge seen intermittently in tests/faults/test_sentinel.py: the reconcile service
read a deduct from the primary and COMMITTED it before any replica held it; the primary
died, the till retried the same txn id on the promoted replica (which never saw the
first), and the book held the txn twice while Redis held it once. Here the replica stops
following (REPLICAOF NO ONE: it never receives the deduct) or is stopped (SIGSTOP: it
receives it late), so WAIT cannot confirm, and the consumer must leave the batch pending.
Without `wait_replicas` the book can still end up holding an entry Redis lost: the pass
then reports that duplicate with the proof instead of refunding it.
"""
from __future__ import annotations

import json
import os
import signal

import pytest
from sqlalchemy import func, select

from core import Ledger, LedgerUnavailable
from core.errors import NotReplicated
from core.keys import CONSUMER_GROUP
from reconcile_service.applied_proof import FIRST_ENTRY_LOST
from reconcile_service.db import make_engine, migrate
from reconcile_service.journal import Consumer
from reconcile_service.metrics import Metrics
from reconcile_service.models import Discrepancy, DuplicateEntry, LedgerEntry
from reconcile_service.reconcile import Reconciler
from reconcile_service.verify import verify
from tests.reconcile.conftest import spawn
from tests.support.postgres import fresh_database
from tests.support.servers import RedisServer, redis_server_available, wait_for

pytestmark = pytest.mark.skipif(not redis_server_available(), reason="needs redis-server")


def server() -> RedisServer:
    return RedisServer("--repl-diskless-sync-delay", "0")     # a replica syncs at once, not after 5 s


def follow(replica: RedisServer, primary: RedisServer) -> None:
    client = replica.client()
    client.replicaof("127.0.0.1", primary.port)
    wait_for(lambda: client.info("replication")["master_link_status"] == "up", 20, "the replica's link")
    client.close()
    # the primary counts a replica in WAIT from its first acknowledgement (up to 1 s later)
    with primary.client() as client:
        client.incr("test:follow")
        assert client.wait(1, 5_000) == 1


def waiting_ledger(node: RedisServer) -> Ledger:
    """The reconcile service's ledger on a deployment that asks for one replica (the URL's option)."""
    return Ledger.from_url(f"{node.url}?wait_replicas=1&wait_timeout_ms=150", auto_init=False)


def consumer(ledger: Ledger, engine, metrics: Metrics | None = None) -> Consumer:
    return Consumer(ledger, engine, "rs-1", batch_size=100, claim_idle_ms=30_000, metrics=metrics or Metrics())


def step_error(drain: Consumer, part) -> Exception | None:
    """One step; the error it raised (None if none), so that a test can first check the book."""
    try:
        drain.step(part)
    except LedgerUnavailable as exc:
        return exc
    return None


def booked(engine, txn_id: str) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(LedgerEntry)
                            .where(LedgerEntry.txn_id == txn_id)).scalar_one()


def unreplicated(metrics: Metrics) -> float:
    return sum(s.value for m in metrics.unreplicated.collect() for s in m.samples if s.name.endswith("_total"))


@pytest.fixture
def engine():
    with fresh_database() as url:
        eng = make_engine(url)
        migrate(eng)
        yield eng
        eng.dispose()


def test_a_deduct_no_replica_received_is_not_booked_and_the_retry_on_the_promoted_replica_is_booked_once(engine):
    with server() as primary, server() as replica, server() as spare:
        follow(replica, primary)
        admin = Ledger.from_url(primary.url)
        admin.init()
        assert admin.open_account("A-1", txn_id="open-A-1", initial_minor=1_000).applied
        metrics = Metrics()
        drain = consumer(waiting_ledger(primary), engine, metrics)
        assert drain.drain() == 1                      # the opening: the replica holds it
        assert admin.client.wait(1, 5_000) == 1        # and the group's ack of it too
        part = admin.partitions[0]

        # the replica stops following: what the primary writes now, no replica receives
        replica.client().replicaof("NO", "ONE")
        wait_for(lambda: admin.client.info("replication")["connected_slaves"] == 0, 10, "the link to drop")
        till = Ledger.from_url(primary.url, auto_init=False)        # answered before any WAIT
        assert till.deduct("A-1", 100, txn_id="d-1").balance_minor == 900

        raised = step_error(drain, part)
        assert booked(engine, "d-1") == 0, "booked a deduct that no replica holds"
        assert isinstance(raised, NotReplicated) and "0 of 1 replica" in str(raised), raised
        assert unreplicated(metrics) == 1
        pending = admin.client.xpending(part.journal, CONSUMER_GROUP)
        assert pending["pending"] == 1 and pending["consumers"][0]["name"] == "rs-1"   # left for later
        with pytest.raises(NotReplicated):          # and still not booked when asked again
            drain.step(part)

        # the primary dies; the replica is the primary; the till retries the same txn id there
        primary.kill()
        follow(spare, replica)                      # the new primary gets a replica of its own
        till = Ledger.from_url(replica.url, auto_init=False)
        again = till.deduct("A-1", 100, txn_id="d-1")
        assert again.applied and not again.replayed and again.balance_minor == 900   # it never saw d-1
        after = waiting_ledger(replica)
        assert consumer(after, engine).drain() == 1
        assert booked(engine, "d-1") == 1
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(DuplicateEntry)).scalar_one() == 0
        report = verify(after, engine)
        assert report.ok, [v.as_dict() for v in report.violations]
        for led in (admin, after, till):
            led.close()


def test_a_lagging_replica_holds_the_batch_back_until_it_has_it(engine):
    with server() as primary, server() as replica:
        follow(replica, primary)
        admin = Ledger.from_url(primary.url)
        admin.init()
        assert admin.open_account("A-1", txn_id="open-A-1", initial_minor=1_000).applied
        metrics = Metrics()
        ledger = waiting_ledger(primary)
        drain = consumer(ledger, engine, metrics)
        assert drain.drain() == 1
        part = admin.partitions[0]
        os.kill(replica.proc.pid, signal.SIGSTOP)          # the replica stalls
        try:
            for i in range(3):
                assert admin.deduct("A-1", 10, txn_id=f"d-{i}").applied
            raised = step_error(drain, part)
            assert booked(engine, "d-0") == 0, "booked deducts that no replica holds"
            assert isinstance(raised, NotReplicated) and unreplicated(metrics) == 1, raised
        finally:
            os.kill(replica.proc.pid, signal.SIGCONT)
        # the replica catches up: the same batch (this consumer's pending entries) is booked
        assert drain.step(part) == 3
        assert [booked(engine, f"d-{i}") for i in range(3)] == [1, 1, 1]
        assert admin.client.xpending(part.journal, CONSUMER_GROUP)["pending"] == 0
        # without wait_replicas nothing is asked of the replicas (the embedded default)
        os.kill(replica.proc.pid, signal.SIGSTOP)
        try:
            assert admin.deduct("A-1", 10, txn_id="d-3").applied
            assert consumer(admin, engine).step(part) == 1
        finally:
            os.kill(replica.proc.pid, signal.SIGCONT)
        report = verify(admin, engine)
        assert report.ok, [v.as_dict() for v in report.violations]
        ledger.close(), admin.close()


def test_the_daemon_waits_for_the_replica_without_calling_redis_down(engine, tmp_path):
    """The real daemon (`reconcile-service run`, the URL with ?wait_replicas=1): while the
    replica is stopped it books nothing, says why once per try (no traceback, Redis not
    reported down), and books the batch when the replica is back."""
    with server() as primary, server() as replica:
        follow(replica, primary)
        admin = Ledger.from_url(primary.url)
        admin.init()
        assert admin.open_account("A-1", txn_id="open-A-1", initial_minor=1_000).applied
        assert admin.client.wait(1, 5_000) == 1
        log_path, config = tmp_path / "daemon.log", tmp_path / "reconcile.toml"
        config.write_text("first_backoff_s = 0.1\nmax_backoff_s = 0.5\n")
        proc = spawn("run", "--config", str(config), "--metrics-port", "0", "--log-format", "text",
                     "--block-ms", "100", "--reconcile-interval-s", "3600",
                     redis_url=f"{primary.url}?wait_replicas=1&wait_timeout_ms=100",
                     database_url=str(engine.url.render_as_string(hide_password=False)), log_path=log_path)
        try:
            wait_for(lambda: booked(engine, "open-A-1") == 1, 30, "the opening booked")
            os.kill(replica.proc.pid, signal.SIGSTOP)
            try:
                assert admin.deduct("A-1", 100, txn_id="d-1").applied
                wait_for(lambda: booked(engine, "d-1") or log_path.read_text().count("not yet on a replica") >= 3,
                         30, "the warnings")
                assert booked(engine, "d-1") == 0, "booked a deduct that no replica holds"
            finally:
                os.kill(replica.proc.pid, signal.SIGCONT)
            wait_for(lambda: booked(engine, "d-1") == 1, 30, "the deduct booked once the replica has it")
            assert proc.poll() is None
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(30) == 0
        text = log_path.read_text()
        assert "Traceback" not in text and "unexpected error" not in text, text[-2000:]
        assert "redis unavailable" not in text, text[-2000:]
        admin.close()


def test_without_wait_replicas_a_duplicate_whose_first_entry_redis_lost_is_reported_not_refunded(engine):
    """The same failover on a deployment that asks for no replica (`wait_replicas` 0): the
    drain books the first deduct, Redis loses it, the retry applies it on the promoted
    replica. The book then holds the txn twice, Redis once: the pass must not "reverse the
    duplicate" with a compensating credit (that would refund a charge made once); it
    reports it, with the proof that Redis no longer holds the first entry."""
    with server() as primary, server() as replica:
        follow(replica, primary)
        admin = Ledger.from_url(primary.url)
        admin.init()
        assert admin.open_account("A-1", txn_id="open-A-1", initial_minor=1_000).applied
        assert consumer(admin, engine).drain() == 1
        assert admin.client.wait(1, 5_000) == 1
        replica.client().replicaof("NO", "ONE")
        wait_for(lambda: admin.client.info("replication")["connected_slaves"] == 0, 10, "the link to drop")
        first = admin.deduct("A-1", 100, txn_id="d-1")
        assert consumer(admin, engine).drain() == 1          # booked from the primary alone
        primary.kill()
        promoted = Ledger.from_url(replica.url, auto_init=False)
        assert promoted.deduct("A-1", 100, txn_id="d-1").journal_id != first.journal_id
        assert consumer(promoted, engine).drain() == 1
        with engine.connect() as conn:
            dup = conn.execute(select(DuplicateEntry)).one()
        assert dup.txn_id == "d-1" and dup.first_journal_id == first.journal_id

        metrics = Metrics()
        report = Reconciler(promoted, engine, metrics, "rs-1").run_pass()
        assert report.repairs == [] and promoted.balance("A-1") == 900     # nothing refunded
        with engine.connect() as conn:
            assert conn.execute(select(DuplicateEntry.status)).scalar_one() == "reported"
            row = conn.execute(select(Discrepancy).where(Discrepancy.kind == "duplicate_txn")).one()
        assert row.status == "open" and "Redis applied it once" in row.cause
        proof = json.loads(row.evidence_json)["applied_proof"]
        assert proof["how"] == FIRST_ENTRY_LOST
        assert proof["first_entry"]["first_journal_id"] == first.journal_id and not proof["first_entry"]["held"]
        promoted.close()
