"""Redis Sentinel failover with real processes: a primary, two replicas and three
sentinels on loopback, tills (ledger clients in their own processes) charging, the
reconcile service running as a real daemon against the same sentinel URL, and the
primary killed with SIGKILL mid-load. The sentinels promote a replica; the tills and
the reconcile service follow it without a restart.

Checked afterwards with the invariant checker (reconcile_service.verify) and the database
of record: with wait_replicas=1 (the tills', and in the reconcile service's URL, so that
it books only what a replica holds) every acknowledged deduction is present exactly
once, no unknown outcome is left unresolved, Redis and the database agree, and the
reconcile service itself (not only verify's drain) applied everything. With
wait_replicas=0 the same run is reported, not asserted: what asynchronous replication lost.

Why two replicas: with wait_replicas=1, a promoted replica that has no replica of its own
can acknowledge nothing, so a shop that must keep charging through the loss of one machine
needs a primary and two replicas (docs/deployment.md).
"""
from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from sqlalchemy import create_engine, func, select

from core import Ledger, LedgerUnavailable, Result, Status
from core.keys import CONSUMER_GROUP
from reconcile_service.models import LedgerEntry
from reconcile_service.verify import verify
from tests.faults.test_cluster_failover import record
from tests.support.postgres import fresh_database
from tests.support.servers import RedisSentinelServers, wait_for
from core.journal_codec import read_range

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
ACCOUNTS = [f"S-{i}" for i in range(6)]
INITIAL_MINOR = 10_000_000
TILLS = 3
UNRESOLVED_AFTER_S = 60.0       # a till that cannot settle a charge this long reports it unresolved


def till(url: str, worker: int, duration_s: float, wait_replicas: int, acks, queue) -> None:
    """A till: each charge has its txn id before it is sent; an unknown outcome
    (LedgerUnavailable) is retried with the same txn id until Redis decides, as the
    terminal's outbox does. Any other exception is a raw error surfacing: reported."""
    try:
        ledger = Ledger.from_url(url, auto_init=False, socket_timeout_s=1.0,
                                 wait_replicas=wait_replicas, wait_timeout_ms=200)
        acked, unresolved, unknown, i = [], [], 0, 0
        stop = time.monotonic() + duration_s
        while time.monotonic() < stop:
            txn, account, amount = f"s{worker}-{i}", ACCOUNTS[(worker * 5 + i) % len(ACCOUNTS)], 1 + i % 9
            started, give_up, result = time.time(), time.monotonic() + UNRESOLVED_AFTER_S, None
            while result is None:
                try:
                    result = ledger.deduct(account, amount, txn_id=txn, terminal_id=f"T{worker}")
                except LedgerUnavailable:
                    unknown += 1
                    if time.monotonic() > give_up:
                        unresolved.append(txn)
                        break
                    time.sleep(0.05)
            if result is not None and result.status is Status.APPLIED:
                acked.append((txn, account, amount, started, time.time()))
                with acks.get_lock():
                    acks.value += 1
            i += 1
        queue.put({"worker": worker, "acked": acked, "unresolved": unresolved, "unknown": unknown,
                   "error": None})
    except BaseException as exc:       # noqa: BLE001 - the test reports it
        queue.put({"worker": worker, "error": f"{type(exc).__name__}: {exc}"})


def spawn_reconcile(url: str, database_url: str, log_path: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    log = open(log_path, "wb")
    return subprocess.Popen(
        [sys.executable, "-m", "reconcile_service", "run", "--redis-url", url, "--database-url",
         database_url, "--metrics-port", "0", "--log-format", "text", "--block-ms", "200",
         "--trim-interval-s", "1", "--trim-keep-s", "3600", "--reconcile-interval-s", "3600",
         "--consumer-name", "rs-1"], env=env, stdout=log, stderr=subprocess.STDOUT)


def group_drained(ledger: Ledger) -> bool:
    for part in ledger.partitions:
        group = next(g for g in ledger.client.xinfo_groups(part.journal) if g["name"] == CONSUMER_GROUP)
        if (group.get("lag") or 0) != 0 or group["pending"] != 0:
            return False
    return True


def failover_run(wait_replicas: int, tmp_path: Path, *, load_s: float = 7.0) -> dict:
    with fresh_database() as database_url, RedisSentinelServers(replicas=2) as deploy:
        url = deploy.url()
        ledger = Ledger.from_url(url)
        ledger.init()
        for a in ACCOUNTS:
            ledger.open_account(a, txn_id=f"open-{a}", initial_minor=INITIAL_MINOR)
        # the reconcile service is given the deployment's URL (deploy/sentinel/cashier.env.example):
        # with ?wait_replicas=1 it books only what a replica holds, so a deduct read from the
        # primary that dies before replicating it is not in the book when the till's retry
        # applies it on the promoted replica
        service_url = deploy.url(query=f"wait_replicas={wait_replicas}") if wait_replicas else url
        service = spawn_reconcile(service_url, database_url, tmp_path / "reconcile.log")
        engine = create_engine(database_url)
        try:
            ctx = mp.get_context("spawn")
            queue, acks = ctx.Queue(), ctx.Value("i", 0)
            procs = [ctx.Process(target=till, args=(url, w, load_s, wait_replicas, acks, queue))
                     for w in range(TILLS)]
            for p in procs:
                p.start()
            wait_for(lambda: acks.value >= 150, 60, "charges before the kill")
            old = deploy.primary()
            old.kill(signal.SIGKILL)
            killed_at = time.time()          # after the process is gone: later answers are the new primary's
            new = deploy.wait_for_failover(old.port)
            promoted_s = time.time() - killed_at
            results = [queue.get(timeout=180) for _ in procs]
            for p in procs:
                p.join(30)
            errors = [r["error"] for r in results if r["error"]]
            assert not errors, f"a raw error reached a till: {errors}"
            acked = [a for r in results for a in r["acked"]]
            after = [a for a in acked if a[4] > killed_at]
            in_flight = [a for a in acked if a[3] <= killed_at < a[4]]
            figures = {
                "wait_replicas": wait_replicas, "tills": TILLS, "acknowledged": len(acked),
                "unknown_outcomes_retried": sum(r["unknown"] for r in results),
                "unresolved": sum(len(r["unresolved"]) for r in results),
                "sentinels_promoted_s": round(promoted_s, 2),
                "kill_to_first_charge_s": round(min(a[4] for a in after) - killed_at, 2) if after else None,
                "longest_wait_of_a_charge_in_flight_s":
                    round(max(a[4] - a[3] for a in in_flight), 2) if in_flight else None,
            }
            # the reconcile service (still the same process) followed the primary and drained
            # the journal of the new primary through the same consumer group
            ledger = Ledger.from_url(url, auto_init=False)
            wait_for(lambda: service.poll() is None and group_drained(ledger), 60,
                     "the reconcile service to drain the new primary")
            assert service.poll() is None, "the reconcile service died in the failover"
            journal = [(f["txn"], f["kind"]) for part in ledger.partitions
                       for _, f in read_range(ledger.client, part.journal)]
            redis_deducts = [t for t, k in journal if k == "deduct"]
            with engine.connect() as conn:
                db_counts = dict(conn.execute(select(LedgerEntry.txn_id, func.count())
                                              .where(LedgerEntry.kind == "deduct")
                                              .group_by(LedgerEntry.txn_id)).all())
            in_redis = set(redis_deducts)
            lost = [a[0] for a in acked if a[0] not in in_redis]
            figures.update({
                "lost_acknowledged": len(lost),
                "lost_acknowledged_minor": sum(a[2] for a in acked if a[0] not in in_redis),
                "applied_twice_in_redis": len(redis_deducts) - len(in_redis),
                "applied_twice_in_db": sum(1 for n in db_counts.values() if n > 1),
                "db_entries_not_in_redis": len(set(db_counts) - in_redis),
                "redis_entries_not_in_db_before_verify": len(in_redis - set(db_counts)),
                "promoted_port_is_a_former_replica": new.port != old.port,
            })
            service.send_signal(signal.SIGTERM)
            assert service.wait(30) == 0
            report = verify(ledger, engine)
            figures["verify_ok"] = report.ok
            figures["verify_violations"] = sorted({v.kind for v in report.violations})
            figures["_report"], figures["_acked"], figures["_db_counts"] = report, acked, db_counts
            return figures
        finally:
            if service.poll() is None:
                service.kill()
                service.wait(10)
            engine.dispose()


def _public(figures: dict) -> dict:
    return {k: v for k, v in figures.items() if not k.startswith("_")}


def test_failover_with_wait_replicas_loses_nothing_and_doubles_nothing(tmp_path):
    figures = failover_run(1, tmp_path)
    record("sentinel failover, wait_replicas=1 (primary + 2 replicas + 3 sentinels)", _public(figures))
    print(_public(figures))
    assert figures["acknowledged"] > 150 and figures["kill_to_first_charge_s"] is not None
    assert figures["unresolved"] == 0, "an unknown outcome was left unresolved"
    assert figures["lost_acknowledged"] == 0
    assert figures["applied_twice_in_redis"] == 0 and figures["applied_twice_in_db"] == 0
    # every acknowledged deduction is in the database of record exactly once
    assert all(figures["_db_counts"].get(txn) == 1 for txn, *_ in figures["_acked"])
    assert figures["db_entries_not_in_redis"] == 0 and figures["redis_entries_not_in_db_before_verify"] == 0
    assert figures["_report"].ok, [v.as_dict() for v in figures["_report"].violations][:5]


def test_failover_without_wait_replicas_is_reported(tmp_path):
    """Asynchronous acknowledgement: what the promoted replica never received is lost.
    Reported (CASHIER_RELIABILITY_FIGURES), not asserted, except that nothing doubles."""
    figures = failover_run(0, tmp_path)
    record("sentinel failover, wait_replicas=0 (primary + 2 replicas + 3 sentinels)", _public(figures))
    print(_public(figures))
    assert figures["applied_twice_in_redis"] == 0 and figures["applied_twice_in_db"] == 0
    assert figures["unresolved"] == 0


def test_acl_users_and_sentinel_password_ride_a_failover_without_loading_scripts(caplog):
    """Redis nodes with ACL users and a default password, sentinels with their own
    password: the gateway's user (which may not load scripts, and charges with
    wait_replicas=1) keeps charging after a failover, because the scripts were loaded on
    the replicas beforehand. No password appears in any log record."""
    from core.acl import apply_users, ledger_users
    admin_pw, terminal_pw, sentinel_pw = "adm-Secret-1", "term-Secret-2", "sent-Secret-3"
    with RedisSentinelServers(replicas=2, password=admin_pw, sentinel_password=sentinel_pw) as deploy:
        users = ledger_users(terminal_pw, "rec-Secret-4", "adm-user-Secret-5")
        query = f"sentinel_password={sentinel_pw}"
        admin = Ledger.from_url(deploy.url(user_info=f"default:{admin_pw}@", query=query))
        # ACL users are not replicated: `cashierctl acl --apply` sets them on the replicas too
        assert len(apply_users(admin.client, users)) == 3
        admin.init()
        admin.open_account("A-1", txn_id="open-A-1", initial_minor=1_000)
        terminal = Ledger.from_url(deploy.url(user_info=f"gateway:{terminal_pw}@",
                                              query=f"{query}&wait_replicas=1"), auto_init=False)
        assert terminal.wait_replicas == 1
        assert terminal.deduct("A-1", 10, txn_id="d-1").balance_minor == 990
        # the function library reaches the replicas by replication (asynchronous: wait for it)
        wait_for(lambda: all(admin.scripts.loaded_on(deploy.node_client(n)) for n in deploy.replicas()), 30,
                 "the function library on every replica")
        old = deploy.primary_port()
        deploy.sentinels[0].client().execute_command("SENTINEL", "FAILOVER", deploy.service)
        deploy.wait_for_failover(old)
        assert terminal.deduct("A-1", 10, txn_id="d-2").balance_minor == 980
        assert terminal.deduct("A-1", 10, txn_id="d-1").replayed       # the first one, not again
        wrong = Ledger.from_url(deploy.url(user_info=f"gateway:{terminal_pw}@",
                                           query="sentinel_password=wrong"), auto_init=False,
                                retry=type(terminal.retry)(deadline_s=0.3))
        with pytest.raises(LedgerUnavailable) as info:
            wrong.balance("A-1")
        assert "sentinel_password" in str(info.value)
        terminal.close(), admin.close(), wrong.close()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert not any(pw in logged for pw in (admin_pw, terminal_pw, sentinel_pw))


@pytest.fixture(scope="module")
def deployment():
    deploy = RedisSentinelServers(replicas=2).start()
    yield deploy
    deploy.cleanup()


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.sampled_from(["deduct", "credit", "retry"]), st.integers(0, 3),
                              st.integers(1, 5_000)), min_size=4, max_size=25),
       kill_at=st.integers(0, 30), wait_replicas=st.sampled_from([0, 1]))
def test_primary_killed_at_a_random_point_applies_each_txn_once(deployment, ops, kill_at, wait_replicas):
    """Property: whatever the order of charges, top-ups and retries of earlier txn ids (a
    lost reply), and wherever in it the primary is killed (SIGKILL; the sentinels
    promote a replica while the calls go on), each txn id is applied at most once, a
    retry answers what the first call answered, every APPLIED answer is in the new
    primary's journal (wait_replicas=1), and each balance is its journal's sum."""
    deploy = deployment
    deploy.wait_until_settled()
    ledger = Ledger.from_url(deploy.url(), wait_replicas=wait_replicas)
    ledger.init()
    run = uuid.uuid4().hex[:8]              # examples share the deployment: ids of their own
    accounts = [f"P-{run}-{i}" for i in range(4)]
    for a in accounts:
        ledger.open_account(a, txn_id=f"open-{a}", initial_minor=20_000)
    answers: dict[str, Result] = {}
    sent: list[tuple[str, str, str, int]] = []
    killed = None
    for n, (op, which, amount) in enumerate(ops):
        if n == kill_at:
            killed = deploy.primary()
            killed.kill(signal.SIGKILL)     # not waited for: the next calls meet the failover
        if op == "retry" and sent:
            kind, txn, account, amount = sent[which % len(sent)]
        else:
            kind, txn, account = ("deduct" if op == "retry" else op), f"p-{run}-{n}", accounts[which]
            sent.append((kind, txn, account, amount))
        while True:
            try:
                result = getattr(ledger, kind)(account, amount, txn_id=txn)
                break
            except LedgerUnavailable:        # unknown outcome: the same txn id again
                continue
        if txn in answers:                   # a retry answers what the first call answered
            assert result.replayed and result.status is answers[txn].status
        answers.setdefault(txn, result)
    if killed is not None:                   # the machine comes back, as a replica of the new primary
        deploy.wait_for_failover(killed.port)
        killed.extra_args = [*deploy.redis_args, "--replicaof", "127.0.0.1", str(deploy.primary_port())]
        killed.start()
    deploy.wait_until_settled()
    journal = [f for part in ledger.partitions for _, f in read_range(ledger.client, part.journal)
               if f["acct"] in accounts]
    txns = [f["txn"] for f in journal if not f["txn"].startswith("open-")]
    assert len(txns) == len(set(txns)), "a txn was applied twice"
    applied = {t for t, r in answers.items() if r.status is Status.APPLIED}
    if wait_replicas:
        assert applied == set(txns)
    else:                                    # asynchronous: the promoted replica may lack some
        assert set(txns) <= applied
    for a in accounts:
        assert ledger.balance(a) == sum(int(f["amt"]) for f in journal if f["acct"] == a) >= 0
    ledger.close()


def test_planned_switch_with_sentinel_failover_is_reported():
    """SENTINEL FAILOVER while tills charge: the old primary stays a primary for a while
    and keeps its connections, the replica it still has acknowledges WAIT, and that
    replica then resyncs from the promoted one. What this loses is reported, not asserted
    (docs/deployment.md: for a planned switch stop the primary instead); nothing doubles."""
    with RedisSentinelServers(replicas=2) as deploy:
        ledger = Ledger.from_url(deploy.url(), wait_replicas=1)
        ledger.init()
        ledger.open_account("Q-1", txn_id="open-Q-1", initial_minor=10**9)
        acked, i, fired_at = [], 0, None
        started = time.monotonic()
        while time.monotonic() - started < 5.0:
            if fired_at is None and len(acked) >= 200:
                old = deploy.primary_port()
                deploy.sentinels[0].client().execute_command("SENTINEL", "FAILOVER", deploy.service)
                fired_at = time.monotonic()
            while True:
                try:
                    ledger.deduct("Q-1", 1, txn_id=f"q-{i}")
                    break
                except LedgerUnavailable:
                    continue
            acked.append(f"q-{i}")
            i += 1
        deploy.wait_for_failover(old)
        deploy.wait_until_settled()
        journal = [f["txn"] for p in ledger.partitions for _, f in read_range(ledger.client, p.journal)
                   if f["kind"] == "deduct"]
        figures = {"wait_replicas": 1, "acknowledged": len(acked),
                   "lost_acknowledged": len(set(acked) - set(journal)),
                   "applied_twice": len(journal) - len(set(journal))}
        record("SENTINEL FAILOVER (planned switch) while charging, wait_replicas=1", figures)
        print(figures)
        assert figures["applied_twice"] == 0
        ledger.close()


def test_reconcile_service_treats_noreplicas_as_redis_away(tmp_path, capsys):
    """A primary with min-replicas-to-write that lost its replicas (cut off, or being
    replaced by Sentinel) refuses the consumer's XREADGROUP with NOREPLICAS: the reconcile
    service retries it as "Redis away" and, past its deadline, says so (exit 3), instead of
    logging it as an unexpected error with a traceback."""
    from reconcile_service.cli import main as reconcile_main
    from tests.support.servers import RedisServer
    with RedisServer() as server:
        ledger = Ledger.from_url(server.url)
        ledger.init()
        ledger.open_account("N-1", txn_id="open-N-1", initial_minor=10)
        server.client().config_set("min-replicas-to-write", "1")
        code = reconcile_main(["run", "--once", "--redis-url", server.url, "--database-url",
                               f"sqlite:///{tmp_path / 'books.sqlite3'}", "--retry-deadline-s", "1",
                               "--metrics-port", "0", "--log-format", "text"])
        err = capsys.readouterr().err
        assert code == 3 and "NOREPLICAS" in err and "Traceback" not in err, err
        ledger.close()


def test_ledger_retries_noreplicas_with_the_same_txn_id():
    """NOREPLICAS (a primary with min-replicas-to-write and no replica: cut off, or being
    replaced) refuses a script before it writes; the ledger retries it under its deadline:
    LedgerUnavailable when it lasts, applied once when the primary accepts writes again."""
    import threading
    from core import RetryPolicy
    from tests.support.servers import RedisServer
    with RedisServer() as server:
        ledger = Ledger.from_url(server.url, retry=RetryPolicy(deadline_s=0.5))
        ledger.init()
        ledger.open_account("N-1", txn_id="open-N-1", initial_minor=100)
        server.client().config_set("min-replicas-to-write", "1")
        with pytest.raises(LedgerUnavailable) as info:
            ledger.deduct("N-1", 5, txn_id="n-1")
        assert "NOREPLICAS" in str(info.value) and "n-1" in str(info.value)
        ledger.retry = RetryPolicy(deadline_s=10.0)
        threading.Timer(0.3, lambda: server.client().config_set("min-replicas-to-write", "0")).start()
        assert ledger.deduct("N-1", 5, txn_id="n-1").balance_minor == 95
        assert ledger.balance("N-1") == 95
        ledger.close()
