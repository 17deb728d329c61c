"""Part 4, the hot account: all deductions on one account from several processes
against the same load spread over 1,000 accounts, single `Ledger.deduct` calls and
`Ledger.deduct_many` batches, on the private standalone Redis and on the private
3-master Redis Cluster (`redis+cluster://`); then (issue 6) the same one account
split into 4 and 8 shards (`Ledger.split_account`) under the same load, against the
unsplit account. A split deduction costs two round trips in the common case (read the
split view, then the shard script), and `deduct_many` decides split-account requests
one by one. Targets: hot no slower than 0.9x of spread; at least 28,000
deductions/s on one account with batching.
"""
from __future__ import annotations

import secrets

from core import Ledger

from .. import load
from ..drivers import INITIAL_BALANCE_MINOR, HOT_ACCOUNTS, LedgerDriver, reset_ledger, spread_accounts

SINGLE_PROCS = 4
BATCH_PROCS = 2
BATCH = 100
SHARD_COUNTS = (4, 8)


class SplitDriver(LedgerDriver):
    """LedgerDriver on one account split into `shards` sub-balances before the run."""

    def __init__(self, url: str, shards: int, batch: int = 1):
        super().__init__(url, HOT_ACCOUNTS, batch)
        self.shards = shards

    def prepare(self, procs: int) -> None:
        reset_ledger(self.url, self.accounts)
        self.nonce = secrets.token_hex(3)
        ledger = Ledger.from_url(self.url)
        try:
            r = ledger.split_account(self.accounts[0], shards=self.shards, txn_id=f"split-{self.nonce}")
            assert r.applied, r
        finally:
            ledger.close()

    def verify(self, m) -> dict:
        ledger = Ledger.from_url(self.url)
        try:
            total = ledger.balance(self.accounts[0])        # a split account answers its total
        finally:
            ledger.close()
        created = total - (INITIAL_BALANCE_MINOR - m.applied_minor)
        return {"money_created_minor": created, "oversold_minor": 0, "exact": created == 0}


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
            ctx.row("4 hot account", f"{topology}: {what}, {procs} processes, one account (unsplit)",
                    f"{hot.throughput_per_s:,.0f} deductions/s", ratio=f"{ratio:.2f}x of spread",
                    target="≥ 0.9x of spread", met=ratio >= 0.9, finding="hot_ratio",
                    note=f"exact: {hot.extra['exact']}")
            if batch > 1:
                ctx.row("4 hot account", f"{topology}: one account with batching", f"{hot.throughput_per_s:,.0f} deductions/s",
                        target="≥ 28,000/s", met=hot.throughput_per_s >= 28_000, finding="hot_28k")
        for batch, procs in ((1, SINGLE_PROCS), (BATCH, BATCH_PROCS)):
            what = "Ledger.deduct" if batch == 1 else f"Ledger.deduct_many({batch})"
            unsplit = ctx.data[f"hot_{topology}_{batch}"][0]
            for shards in SHARD_COUNTS:
                m = load.run(SplitDriver(url, shards, batch), procs, ctx.duration_s)
                ctx.data[f"split_{topology}_{batch}_{shards}"] = m
                ratio = m.throughput_per_s / unsplit.throughput_per_s
                ctx.row("4 hot account", f"{topology}: {what}, {procs} processes, one account split into {shards} shards",
                        f"{m.throughput_per_s:,.0f} deductions/s", ratio=f"{ratio:.2f}x of unsplit",
                        note=f"p50 {m.latency_ms_p50:.3f} ms, p99 {m.latency_ms_p99:.3f} ms per "
                             f"{'call' if batch == 1 else 'batch'}; exact (total = opening - applied): {m.extra['exact']}")
