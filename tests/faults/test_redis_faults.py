"""Fault injection on the Redis side with real processes: replies lost after the script
ran, and Redis killed with SIGKILL and restarted from its AOF. Every scenario ends with
the invariants: each txn applied at most once, every acknowledged change present, the
journal sums to the balance, no balance negative."""
from __future__ import annotations

import multiprocessing as mp
import signal
import time

import pytest
import redis

from core import Ledger, LedgerUnavailable, RetryPolicy, Status
from tests.faults.test_cluster_failover import record
from tests.support.proxy import FaultyProxy
from tests.support.servers import RedisServer, wait_for
from core.journal_codec import read_range

pytestmark = pytest.mark.slow
ACCOUNTS = [f"F-{i}" for i in range(4)]
INITIAL_MINOR = 100_000


def terminal(url: str, worker: int, ops: int, queue, pause_s: float = 0.0) -> None:
    """A terminal: deduct with a txn id made before sending; on an unknown outcome retry
    the same txn id until Redis answers (what the outbox does). Reports acknowledged txns."""
    ledger = Ledger.from_url(url, socket_timeout_s=0.5, retry=RetryPolicy(deadline_s=0.3))
    acked, unknown = [], 0
    for i in range(ops):
        txn = f"w{worker}-{i}"
        account = ACCOUNTS[(worker + i) % len(ACCOUNTS)]
        amount = 1 + (i % 50)
        while True:
            try:
                result = ledger.deduct(account, amount, txn_id=txn, terminal_id=f"T{worker}")
                break
            except LedgerUnavailable:
                unknown += 1
                time.sleep(0.05)
        if result.status is Status.APPLIED:
            acked.append((txn, account, amount))
        if pause_s:
            time.sleep(pause_s)
    queue.put((worker, acked, unknown))


def run_terminals(url: str, workers: int, ops: int, pause_s: float = 0.0, during=None):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=terminal, args=(url, w, ops, queue, pause_s)) for w in range(workers)]
    for p in procs:
        p.start()
    if during:
        during()
    acked, unknown = {}, 0
    for _ in procs:
        worker, items, unknown_outcomes = queue.get(timeout=240)
        acked[worker] = items
        unknown += unknown_outcomes
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    return [item for items in acked.values() for item in items], unknown


def check_invariants(client: redis.Redis, acked) -> dict:
    """The journal (never trimmed here: no reconcile service runs) is the evidence."""
    ledger = Ledger(client)
    entries = [e for part in ledger.partitions for e in
               (f for _, f in read_range(client, part.journal))]
    deducts = [e for e in entries if e["kind"] == "deduct"]
    txns = [e["txn"] for e in deducts]
    assert len(txns) == len(set(txns)), "a txn was applied twice"
    applied = set(txns)
    missing = [t for t, _, _ in acked if t not in applied]
    assert not missing, f"acknowledged but not in the journal: {missing[:5]}"
    for account in ACCOUNTS:
        balance = ledger.balance(account)
        journal_sum = sum(int(e["amt"]) for e in entries if e["acct"] == account)
        assert balance == journal_sum >= 0
    return {"applied": len(applied), "acknowledged": len(acked)}


def open_accounts(url):
    ledger = Ledger.from_url(url)
    for a in ACCOUNTS:
        ledger.open_account(a, txn_id=f"open-{a}", initial_minor=INITIAL_MINOR)


def test_replies_lost_after_the_script_ran(tmp_path):
    with RedisServer() as server:
        open_accounts(server.url)
        proxy = FaultyProxy(server.port, drop_reply_probability=0.15).start()
        try:
            acked, _ = run_terminals(proxy.url, workers=4, ops=150)
        finally:
            proxy.close()
        stats = check_invariants(server.client(), acked)
        record("replies lost after the script ran (TCP proxy drops 15%)",
               {"operations": 600, "faults": proxy.dropped_replies, "violations": 0,
                "applied_exactly_once": stats["applied"]})
        assert proxy.dropped_replies > 20                    # the fault really happened
        assert stats["applied"] == stats["acknowledged"] == 600   # every txn exactly once


def test_redis_sigkill_and_restart_with_aof_always(tmp_path):
    server = RedisServer("--appendonly", "yes", "--appendfsync", "always", directory=tmp_path)
    server.start()
    try:
        open_accounts(server.url)

        def charging_terminals(after: str) -> set[str]:
            """Terminals with deductions journaled after stream id `after` (spawned workers
            can take seconds to start on a loaded machine: kill only while all of them charge)."""
            client = server.client()
            try:
                ledger = Ledger(client)
                return {f.get("term") for part in ledger.partitions
                        for _, f in read_range(client, part.journal, f"({after}", "+") if f.get("kind") == "deduct"}
            finally:
                client.close()

        def kill_and_restart():
            since = "0-0"
            for _ in range(2):
                wait_for(lambda: charging_terminals(since) >= {"T0", "T1", "T2"}, 120,
                         "every terminal charging")
                server.kill(signal.SIGKILL)
                time.sleep(0.5)
                server.start()
                client = server.client()
                since = max((client.xrevrange(p.journal, count=1) or [("0-0", {})])[0][0]
                            for p in Ledger(client).partitions)
                client.close()

        acked, unknown = run_terminals(server.url, workers=3, ops=400, pause_s=0.01,
                                       during=kill_and_restart)
        stats = check_invariants(server.client(), acked)
        record("Redis SIGKILLed twice, restarted from AOF appendfsync always",
               {"operations": 1200, "faults": 2, "unknown_outcomes_retried": unknown,
                "acknowledged_lost": 0, "violations": 0})
        assert unknown >= 3                      # terminals really lived through the kills
        assert stats["acknowledged"] == 1200 and stats["applied"] == 1200
    finally:
        server.cleanup()
