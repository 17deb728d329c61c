"""Parts 2 and 3: a bare redis-py loop calling the deduct function by FCALL (1, 2 and 4
processes, one connection each) against the product's `Ledger.deduct` at the same
concurrency, and a bare redis-py pipeline of single deduct FCALLs against
`Ledger.deduct_many` (its deduct_batch calls) with the same batch size, 1, 2 and 4
processes. Spread over 1,000 accounts on the private standalone Redis. Targets: `deduct`
within 15% of the bare loop; `deduct_many` at least 0.8x of the bare pipeline and at
least 50,000 deductions/s.
"""
from __future__ import annotations

from .. import load
from ..drivers import BareScriptDriver, LedgerDriver, spread_accounts

PROCS = (1, 2, 4)
BATCH_PROCS = (1, 2, 4)
BATCH = 100


def run(ctx) -> None:
    url = ctx.redis.url
    accounts = spread_accounts()
    procs_set = PROCS if not ctx.smoke else (1, 2)
    batch_procs = BATCH_PROCS if not ctx.smoke else (1, 2)
    single: dict[str, dict[int, object]] = {"bare": {}, "ledger": {}}
    for procs in procs_set:
        # side by side: bare then product at the same concurrency, back to back
        single["bare"][procs] = load.run(BareScriptDriver(url, accounts), procs, ctx.duration_s)
        single["ledger"][procs] = load.run(LedgerDriver(url, accounts), procs, ctx.duration_s)
    batch: dict[str, dict[int, object]] = {"bare": {}, "ledger": {}}
    for procs in batch_procs:
        batch["bare"][procs] = load.run(BareScriptDriver(url, accounts, BATCH), procs, ctx.duration_s)
        batch["ledger"][procs] = load.run(LedgerDriver(url, accounts, BATCH), procs, ctx.duration_s)
    ctx.data["client_single"] = single
    ctx.data["client_batch"] = batch

    ceiling = ctx.ceiling_single_per_s
    ceiling_p = ctx.ceiling_pipelined_per_s
    for procs in procs_set:
        b, l = single["bare"][procs], single["ledger"][procs]
        ctx.add_point("throughput", "bare redis-py FCALL", procs, b.throughput_per_s)
        ctx.add_point("throughput", "Ledger.deduct", procs, l.throughput_per_s)
        ctx.row("2 baseline", f"bare redis-py FCALL loop, {procs} process(es)",
                f"{b.throughput_per_s:,.0f} deductions/s",
                ratio=f"{b.throughput_per_s / ceiling:.2f}x of ceiling" if ceiling else "",
                note=f"p50 {b.latency_ms_p50:.3f} ms, p99 {b.latency_ms_p99:.3f} ms; exact: {b.extra['exact']}")
        ratio = l.throughput_per_s / b.throughput_per_s
        ctx.row("3 product", f"Ledger.deduct, {procs} process(es)", f"{l.throughput_per_s:,.0f} deductions/s",
                ratio=f"{ratio:.2f}x of bare loop" + (f"; {l.throughput_per_s / ceiling:.2f}x of ceiling" if ceiling else ""),
                target="≥ 0.85x of bare loop", met=ratio >= 0.85, finding="deduct_overhead",
                note=f"p50 {l.latency_ms_p50:.3f} ms, p99 {l.latency_ms_p99:.3f} ms; exact: {l.extra['exact']}")
    best_many = 0.0
    for procs in batch_procs:
        b, l = batch["bare"][procs], batch["ledger"][procs]
        ctx.add_point("throughput", f"bare redis-py pipeline({BATCH})", procs, b.throughput_per_s)
        ctx.add_point("throughput", f"Ledger.deduct_many({BATCH})", procs, l.throughput_per_s)
        best_many = max(best_many, l.throughput_per_s)
        ctx.row("2 baseline", f"bare redis-py pipeline of {BATCH} FCALL, {procs} process(es)",
                f"{b.throughput_per_s:,.0f} deductions/s",
                ratio=f"{b.throughput_per_s / ceiling_p:.2f}x of pipelined ceiling" if ceiling_p else "",
                note=f"exact: {b.extra['exact']}")
        ratio = l.throughput_per_s / b.throughput_per_s
        ctx.row("3 product", f"Ledger.deduct_many, batches of {BATCH}, {procs} process(es)",
                f"{l.throughput_per_s:,.0f} deductions/s",
                ratio=f"{ratio:.2f}x of bare pipeline" + (f"; {l.throughput_per_s / ceiling_p:.2f}x of pipelined ceiling" if ceiling_p else ""),
                target="≥ 0.8x of bare pipeline", met=ratio >= 0.8, finding="deduct_many_overhead", issue=17,
                note=f"batch p99 {l.latency_ms_p99:.2f} ms; exact: {l.extra['exact']}")
    ctx.row("3 product", "Ledger.deduct_many, best total", f"{best_many:,.0f} deductions/s",
            target="≥ 50,000/s", met=best_many >= 50_000, finding="deduct_many_50k", issue=17)
    ctx.data["peak_deduct_per_s"] = max(l.throughput_per_s for l in single["ledger"].values())
    ctx.data["peak_deduct_procs"] = max(single["ledger"], key=lambda p: single["ledger"][p].throughput_per_s)
