"""Part 5, latency: `Ledger.deduct` paced open-loop at half of the peak throughput
part 3 measured (or a quick probe of it when part 3 did not run), spread over 1,000
accounts from as many processes as reached the peak. Latency is counted from each
request's scheduled send time, so queueing behind a slow answer is included; the
send-to-answer service time is reported next to it. Target: p99 at most 2 ms.
"""
from __future__ import annotations

from .. import load
from ..drivers import LedgerDriver, spread_accounts

TARGET_P99_MS = 2.0


def run(ctx) -> None:
    url = ctx.redis.url
    accounts = spread_accounts()
    peak = ctx.data.get("peak_deduct_per_s")
    procs = ctx.data.get("peak_deduct_procs", 2)
    if not peak:
        probe = load.run(LedgerDriver(url, accounts), procs, max(0.5, ctx.duration_s / 2))
        peak = probe.throughput_per_s
    rate_per_s = peak / 2
    client = ctx.redis.client()
    client.config_resetstat()
    m = load.run(LedgerDriver(url, accounts), procs, ctx.duration_s * 2, rate_per_s=rate_per_s)
    fcall_us = client.info("commandstats").get("cmdstat_fcall", {}).get("usec_per_call", 0.0)
    client.close()
    ctx.data["latency"] = m
    svc = m.service_latencies_ns
    from ..stats import percentile_ns
    ctx.row("5 latency", f"Ledger.deduct paced at half of peak ({rate_per_s:,.0f}/s target, {procs} processes)",
            f"p50 {m.latency_ms_p50:.3f} ms, p99 {m.latency_ms_p99:.3f} ms, p99.9 {m.latency_ms_p999:.3f} ms",
            ratio=f"achieved {m.throughput_per_s:,.0f}/s",
            target=f"p99 ≤ {TARGET_P99_MS:g} ms", met=m.latency_ms_p99 <= TARGET_P99_MS, finding="latency_p99",
            note=f"from schedule; Redis CPU per FCALL {fcall_us:.1f} µs; service time p50 {percentile_ns(svc, 50) / 1e6:.3f} ms, "
                 f"p99 {percentile_ns(svc, 99) / 1e6:.3f} ms, p99.9 {percentile_ns(svc, 99.9) / 1e6:.3f} ms")
