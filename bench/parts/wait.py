"""Optional row: the cost of `Ledger(wait_replicas=1)` (WAIT after every write, so a
change is acknowledged only once a replica holds it). Only meaningful with a replica:
the part starts a private primary and one private replica (`--replicaof`), persistence
off, and runs `Ledger.deduct` from 2 processes over 1,000 accounts with
wait_replicas=0 and then 1, back to back on the same servers. No target.
"""
from __future__ import annotations

from .. import load
from ..drivers import LedgerDriver, spread_accounts
from ..servers import PrivateRedis, wait_for

PROCS = 2


def run(ctx) -> None:
    primary = PrivateRedis("--repl-diskless-sync-delay", "0").start()
    replica = None
    try:
        replica = PrivateRedis("--replicaof", "127.0.0.1", str(primary.port)).start()
        wait_for(lambda: replica.client().info("replication")["master_link_status"] == "up", 30, "replica link")
        results = {}
        for n in (0, 1):
            driver = LedgerDriver(primary.url, spread_accounts())
            driver.ledger_kwargs = {"wait_replicas": n}
            results[n] = load.run(driver, PROCS, ctx.duration_s, name=f"Ledger.deduct wait_replicas={n}")
        base = results[0].throughput_per_s
        for n, m in results.items():
            ctx.row("3 product", f"Ledger.deduct, wait_replicas={n}, {PROCS} processes, primary + 1 replica (optional row)",
                    f"{m.throughput_per_s:,.0f} deductions/s",
                    ratio="" if n == 0 else f"{m.throughput_per_s / base:.2f}x of wait_replicas=0",
                    note=f"p50 {m.latency_ms_p50:.3f} ms, p99 {m.latency_ms_p99:.3f} ms; exact: {m.extra['exact']}")
    finally:
        if replica:
            replica.stop()
        primary.stop()
