"""Issue 9, the comparison of deduction methods rerun side by side: PostgreSQL with
SELECT ... FOR UPDATE, PostgreSQL read-then-write without a lock, Redis
WATCH/MULTI/EXEC with retries, a Redis SET NX PX lock, the product's `Ledger.deduct`
and `Ledger.deduct_many` (batches of 16), each on one hot account and spread over
1,000 accounts, at 1, 8 and 32 concurrent clients. A client is a process with its
own connection (a terminal is a separate PC; threads would put all clients behind one
GIL and measure Python rather than the method); on 2 cores, clients beyond 2 share
the CPU with the servers, so 8 and 32 show contention behaviour, not more CPU.
"""
from __future__ import annotations

from .. import load
from ..contenders.pg import PgForUpdate, PgNoLock
from ..contenders.redis_methods import RedisLock, RedisWatch
from ..drivers import HOT_ACCOUNTS, LedgerDriver, spread_accounts

CLIENTS = (1, 8, 32)
SMOKE_CLIENTS = (1, 4)
BATCH = 16

PUBLISHED = {  # the seed's published figures (one node)
    "PostgreSQL SELECT FOR UPDATE": (1200, 15.0, 0.32),
    "Redis WATCH/MULTI/EXEC": (8500, 5.0, 0.12),
    "Ledger.deduct": (28000, 2.0, 0.0001),
}


def methods(ctx):
    url, dsn = ctx.redis.url, ctx.pg_dsn
    return [
        ("PostgreSQL SELECT FOR UPDATE", lambda acc: PgForUpdate(dsn, acc)),
        ("PostgreSQL read-then-write, no lock", lambda acc: PgNoLock(dsn, acc)),
        ("Redis WATCH/MULTI/EXEC", lambda acc: RedisWatch(url, acc)),
        ("Redis lock SET NX PX", lambda acc: RedisLock(url, acc)),
        ("Ledger.deduct", lambda acc: LedgerDriver(url, acc)),
        (f"Ledger.deduct_many({BATCH})", lambda acc: LedgerDriver(url, acc, BATCH)),
    ]


def run(ctx) -> None:
    clients_set = SMOKE_CLIENTS if ctx.smoke else CLIENTS
    layouts = (("one hot account", HOT_ACCOUNTS), ("1,000 accounts", spread_accounts()))
    for method, make in methods(ctx):
        for layout, accounts in layouts:
            for clients in clients_set:
                m = load.run(make(accounts), clients, ctx.duration_s, name=method)
                m.extra["layout"] = layout
                ctx.comparison.append(m)
                ctx.add_point(f"compare:{layout}", method, clients, m.throughput_per_s)
