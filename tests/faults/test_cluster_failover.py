"""A Redis Cluster primary killed with SIGKILL while terminals charge; its replica is
promoted. Measures what asynchronous replication loses: acknowledged deductions that
the promoted replica never received. No txn may ever apply twice."""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import time

import pytest

from core import Ledger, LedgerUnavailable, RetryPolicy, Status
from tests.support.servers import RedisClusterServers, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.cluster]
ACCOUNTS = [f"K-{i}" for i in range(24)]


def terminal(url, worker, duration_s, queue, ledger_options):
    ledger = Ledger.from_url(url, socket_timeout_s=0.5, retry=RetryPolicy(deadline_s=1.0), **ledger_options)
    acked, i, deadline = [], 0, time.monotonic() + duration_s
    while time.monotonic() < deadline:
        txn, account = f"w{worker}-{i}", ACCOUNTS[(worker * 7 + i) % len(ACCOUNTS)]
        while True:
            try:
                r = ledger.deduct(account, 1, txn_id=txn)
                break
            except LedgerUnavailable:
                time.sleep(0.1)
        if r.status is Status.APPLIED and not r.replayed:
            acked.append(txn)
        i += 1
    queue.put(acked)


def failover_run(ledger_options: dict) -> dict:
    cluster = RedisClusterServers(masters=3, replicas=1).start()
    try:
        ledger = Ledger.from_url(cluster.url)
        for a in ACCOUNTS:
            ledger.open_account(a, txn_id=f"open-{a}", initial_minor=10_000_000)
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        procs = [ctx.Process(target=terminal, args=(cluster.url, w, 8.0, queue, ledger_options))
                 for w in range(3)]
        for p in procs:
            p.start()
        time.sleep(3.0)
        victim = cluster.primaries()[0]
        killed_at = time.monotonic()
        victim.kill(signal.SIGKILL)
        acked = [t for _ in procs for t in queue.get(timeout=120)]
        for p in procs:
            p.join(30)
        survivors = [n for n in cluster.nodes if n is not victim]
        wait_for(lambda: all("cluster_state:ok" in str(n.client().cluster("info")) or
                             n.client().cluster("info").get("cluster_state") == "ok" for n in survivors), 30)
        recovered_s = time.monotonic() - killed_at
        ledger = Ledger.from_url(f"redis+cluster://127.0.0.1:{survivors[0].port}")
        journal_txns = []
        for part in ledger.partitions:
            journal_txns += [f["txn"] for _, f in ledger.client.xrange(part.journal) if f["kind"] == "deduct"]
        applied = set(journal_txns)
        lost = [t for t in acked if t not in applied]
        return {"acknowledged": len(acked), "lost_acknowledged": len(lost),
                "doubled": len(journal_txns) - len(applied), "recovered_s": round(recovered_s, 1)}
    finally:
        cluster.cleanup()


def record(name: str, figures: dict) -> None:
    path = os.environ.get("CASHIER_RELIABILITY_FIGURES")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"scenario": name, **figures}) + "\n")


def test_primary_killed_replica_promoted():
    figures = failover_run({})
    record("cluster failover, asynchronous replication", figures)
    print(figures)
    assert figures["doubled"] == 0
    assert figures["acknowledged"] > 100
