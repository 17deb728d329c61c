"""Part 4, the hot account: all deductions on one account from several processes
against the same load spread over 1,000 accounts, single `Ledger.deduct` calls and
`Ledger.deduct_many` batches, on the private standalone Redis and on the private
3-master Redis Cluster (`redis+cluster://`). A hot account is served by batching
(`deduct_many`), not by splitting it (split accounts were removed: see docs/ledger.md).
Targets: hot no slower than 0.9x of spread; at least 28,000 deductions/s on one account
with batching.
"""
from __future__ import annotations

from .. import load
from ..drivers import HOT_ACCOUNTS, LedgerDriver, spread_accounts

SINGLE_PROCS = 4
BATCH_PROCS = 2
BATCH = 100

def run(ctx) -> None:
    topologies = [("standalone", lambda: ctx.redis.url), ("3-master Cluster", lambda: ctx.cluster.url)]
    for topology, url_of in topologies:
        url = url_of()
        for batch, procs in ((1, SINGLE_PROCS), (BATCH, BATCH_PROCS)):
            hot = load.run(LedgerDriver(url, HOT_ACCOUNTS, batch), procs, ctx.duration_s)
            spread = load.run(LedgerDriver(url, spread_accounts(), batch), procs, ctx.duration_s)
            ctx.data[f"hot_{topology}_{batch}"] = (hot, spread)
            what = "Ledger.deduct" if batch == 1 else f"Ledger.deduct_many({batch})"
            ratio = hot.throughput_per_s / spread.throughput_per_s
            ctx.row("4 hot account", f"{topology}: {what}, {procs} processes, spread over 1,000 accounts",
                    f"{spread.throughput_per_s:,.0f} deductions/s", note=f"exact: {spread.extra['exact']}")
            ctx.row("4 hot account", f"{topology}: {what}, {procs} processes, one account",
                    f"{hot.throughput_per_s:,.0f} deductions/s", ratio=f"{ratio:.2f}x of spread",
                    target="≥ 0.9x of spread", met=ratio >= 0.9, finding="hot_ratio", issue=17,
                    note=f"exact: {hot.extra['exact']}")
            if batch > 1:
                ctx.row("4 hot account", f"{topology}: one account with batching", f"{hot.throughput_per_s:,.0f} deductions/s",
                        target="≥ 28,000/s", met=hot.throughput_per_s >= 28_000, finding="hot_28k")
