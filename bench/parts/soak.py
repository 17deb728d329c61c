"""Issue 33 item 7, the soak: open-loop deductions for `--duration-s` seconds against a
private Redis with a maxmemory (noeviction), the reconcile daemon (`python -m
reconcile_service run`, a subprocess with its default trim and pass settings) booking
into a fresh PostgreSQL database (`cashier_bench_soak`; SQLite in a temp dir when there is
no PostgreSQL), at the ledger's default retention. Every second: Redis used_memory,
journal lag (entries not yet acknowledged: XINFO GROUPS lag + pending), the RSS of
redis-server and of the daemon. Writes `soak.md` (summary and the samples) and
`benchmarks/soak_memory.png` into the output directory (docs/ by default) and adds its
rows to the report: memory per operation (used_memory growth / operations applied),
against `core.capacity`'s per-operation figure (record + keyspace share + journal entry,
as long as nothing is trimmed: the journal keep is 1 h), the peak lag and whether the
database holds every entry once the run ends.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from core import LedgerError, Status, capacity
from core.connection import connect
from redis.exceptions import RedisError

from .. import load
from ..drivers import AMOUNT_MINOR, LedgerDriver, reset_ledger, spread_accounts
from ..servers import PrivateRedis, free_port, wait_for
from .capacity import till_txn_id
from .reconcile import ROOT, _journals, _reset_database, _sqlalchemy_url, _unapplied

DATABASE = "cashier_bench_soak"
RATE_PER_S = 300                 # operations/s, all client processes together (2 shared cores)
PROCS = 3
MAXMEMORY = "512mb"
ACCOUNTS = 1000
SAMPLE_S = 1.0
DRAIN_TIMEOUT_S = 120.0


class _SoakDeducts(LedgerDriver):
    """Paced deductions on the ledger the soak opened (no reset: the daemon consumes it);
    a refusal (Redis full) or timeout is counted as a failure, not a crash."""

    def prepare(self, procs: int) -> None:
        import secrets
        self.nonce = "soak-" + secrets.token_hex(3)

    def verify(self, m) -> dict:
        return {}

    def worker(self, index: int, procs: int):
        from core import Ledger
        ledger = Ledger.from_url(self.url)
        reqs = self._requests(index)

        def step():
            account_id, _ = next(reqs)
            txn_id = till_txn_id()          # the till's form, so the record and entry have its size
            try:
                r = ledger.deduct(account_id, AMOUNT_MINOR, txn_id=txn_id, terminal_id="T-01", cashier_id="c-01")
            except (LedgerError, RedisError):
                return 1, 0, 1, 0
            return (1, 0, 0, AMOUNT_MINOR) if r.status is Status.APPLIED else (1, 0, 1, 0)
        return step


def _rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _database(ctx, tmp: Path) -> tuple[str, str]:
    """(SQLAlchemy URL, what it is) of a fresh database for the daemon."""
    try:
        dsn = ctx.pg_dsn_for(DATABASE)
        _reset_database(dsn)
        return _sqlalchemy_url(dsn), f"PostgreSQL `{DATABASE}` (fresh schema)"
    except Exception:
        return f"sqlite:///{tmp / 'soak.sqlite3'}", "SQLite (no PostgreSQL reachable)"


def _booked(db_url: str) -> int:
    from sqlalchemy import create_engine, func, select

    from reconcile_service.models import LedgerEntry
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(LedgerEntry)).scalar_one()
    finally:
        engine.dispose()


def run(ctx) -> None:
    duration_s = ctx.duration_s
    rate = 100 if ctx.smoke else RATE_PER_S
    accounts = spread_accounts(100 if ctx.smoke else ACCOUNTS)
    tmp = Path(tempfile.mkdtemp(prefix="cashier-bench-soak-"))
    server = PrivateRedis("--maxmemory", MAXMEMORY).start()
    url = server.url
    daemon = None
    try:
        reset_ledger(url, accounts)
        db_url, db_what = _database(ctx, tmp)
        metrics_port = free_port()
        daemon = subprocess.Popen(
            [sys.executable, "-m", "reconcile_service", "run", "--redis-url", url, "--database-url", db_url,
             "--consumer-name", "soak", "--metrics-port", str(metrics_port), "--log-level", "WARNING",
             "--log-format", "text"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=open(tmp / "daemon.log", "w"), env=dict(os.environ))
        client = connect(url)
        journals = _journals(url)
        wait_for(lambda: _unapplied(client, journals) == 0, 60, "the daemon to book the opening entries")
        samples: list[dict] = []
        stop = threading.Event()
        started = time.monotonic()

        def sample() -> None:
            c = connect(url)
            while not stop.is_set():
                try:
                    samples.append({"t_s": time.monotonic() - started,
                                    "used": int(c.info("memory")["used_memory"]),
                                    "lag": _unapplied(c, journals), "redis_rss": _rss_bytes(server.proc.pid),
                                    "daemon_rss": _rss_bytes(daemon.pid)})
                except RedisError:
                    pass
                stop.wait(SAMPLE_S)
            c.close()
        used0 = int(client.info("memory")["used_memory"])
        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        m = load.run(_SoakDeducts(url, accounts), PROCS, duration_s, rate_per_s=rate)
        used1 = int(client.info("memory")["used_memory"])
        after = time.monotonic()
        while _unapplied(client, journals) and time.monotonic() < after + DRAIN_TIMEOUT_S:
            time.sleep(0.1)
        catch_up_s = time.monotonic() - after
        stop.set()
        thread.join(5)
        entries = sum(int(client.xinfo_stream(j)["entries-added"]) for j in journals)
        booked = _booked(db_url)
        maxmemory = int(client.config_get("maxmemory")["maxmemory"])
        client.close()
    finally:
        if daemon is not None and daemon.poll() is None:
            daemon.terminate()
            try:
                daemon.wait(30)
            except subprocess.TimeoutExpired:
                daemon.kill()
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    applied = m.applied_minor // AMOUNT_MINOR
    per_op = (used1 - used0) / applied if applied else 0.0
    planned = capacity.RECORD_BYTES + capacity.KEYSPACE_BYTES_PER_KEY + capacity.JOURNAL_ENTRY_BYTES
    svc = sorted(m.service_latencies_ns) or [0]
    p99_ms = svc[min(len(svc) - 1, int(0.99 * len(svc)))] / 1e6
    peak_lag = max((s["lag"] for s in samples), default=0)
    summary = dict(duration_s=duration_s, rate=rate, applied=applied, failures=m.failures, per_op=per_op,
                   planned=planned, peak_lag=peak_lag, catch_up_s=catch_up_s, booked=booked, entries=entries,
                   db=db_what, maxmemory=maxmemory, used0=used0, used1=used1, p99_ms=p99_ms,
                   achieved=m.throughput_per_s)
    ctx.data["soak"] = dict(summary, samples=samples)
    # a smoke run's few operations are lost in the noise of client buffers: not judged
    ok = abs(planned - per_op) <= 0.10 * per_op if per_op and not ctx.smoke else None
    ctx.row("33 soak", f"memory per operation, {duration_s:g} s open loop at {rate:,} ops/s ({PROCS} processes, "
            f"{len(accounts):,} accounts), daemon on {db_what}", f"{per_op:,.0f} bytes",
            ratio=f"core.capacity {planned} bytes ({planned / per_op:.2f}×)" if per_op else "",
            target="within 10 %", met=ok, issue=33,
            note=f"used_memory {used0 / 2**20:,.1f} → {used1 / 2**20:,.1f} MiB over {applied:,} applied "
                 f"({m.failures:,} refused or failed); journal keep 1 h: nothing trimmed in the run")
    ctx.row("33 soak", "journal lag (entries not acknowledged), peak over 1-s samples", f"{peak_lag:,}",
            issue=33, note=f"caught up {catch_up_s:.1f} s after the load; database holds {booked:,} of {entries:,} "
                           f"journal entries; p99 service time {p99_ms:.1f} ms; achieved {m.throughput_per_s:,.0f}/s")
    write(ctx.out_dir, summary, samples)


def write(out_dir: Path, summary: dict, samples: list[dict]) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plot_dir = out_dir / "benchmarks"
    plot_dir.mkdir(parents=True, exist_ok=True)
    ts = [s["t_s"] for s in samples]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7.5, 6), sharex=True)
    ax1.plot(ts, [s["used"] / 2**20 for s in samples], label="Redis used_memory")
    ax1.plot(ts, [s["redis_rss"] / 2**20 for s in samples], label="redis-server RSS", ls="--")
    ax1.plot(ts, [s["daemon_rss"] / 2**20 for s in samples], label="reconcile daemon RSS", ls=":")
    ax1.set_ylabel("MiB")
    ax1.set_title(f"Soak: {summary['rate']:,} ops/s open loop, {summary['per_op']:,.0f} bytes/op "
                  f"(core.capacity {summary['planned']})")
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=8)
    ax2.plot(ts, [s["lag"] for s in samples], color="tab:red")
    ax2.set_ylabel("journal lag (entries)")
    ax2.set_xlabel("seconds")
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(plot_dir / "soak_memory.png", dpi=110)
    plt.close(fig)

    s = summary
    L = ["# Soak: Redis memory per operation and journal lag (issue 33)", "",
         f"Generated by `python -m bench --parts soak --duration-s {s['duration_s']:g}`. {s['rate']:,} deductions/s "
         f"open loop from {PROCS} client processes, a private Redis (maxmemory {s['maxmemory'] / 2**20:,.0f} MiB, "
         f"noeviction), the reconcile daemon with its default settings on {s['db']}; the ledger's default "
         "retention (7 days) and journal keep (1 h), so nothing is trimmed in a run shorter than an hour and "
         "memory grows by one record and one journal entry per operation.", "",
         "| | |", "|---|---|",
         f"| operations applied | {s['applied']:,} ({s['failures']:,} refused or failed; achieved "
         f"{s['achieved']:,.0f}/s) |",
         f"| used_memory | {s['used0'] / 2**20:,.1f} → {s['used1'] / 2**20:,.1f} MiB |",
         f"| **memory per operation** | **{s['per_op']:,.0f} bytes** (core.capacity plans {s['planned']}: record + "
         "keyspace share + journal entry) |",
         f"| journal lag, peak of 1-s samples | {s['peak_lag']:,} entries; caught up {s['catch_up_s']:.1f} s after "
         "the load |",
         f"| p99 service time | {s['p99_ms']:.1f} ms |",
         f"| booked | {s['booked']:,} of {s['entries']:,} journal entries in the database |", "",
         "![Soak](benchmarks/soak_memory.png)", "",
         "## Samples (every 10th second)", "",
         "| t (s) | used_memory (MiB) | lag (entries) | redis-server RSS (MiB) | daemon RSS (MiB) |",
         "|---|---|---|---|---|"]
    for sample in samples[::10]:
        L.append(f"| {sample['t_s']:.0f} | {sample['used'] / 2**20:,.1f} | {sample['lag']:,} | "
                 f"{sample['redis_rss'] / 2**20:,.1f} | {sample['daemon_rss'] / 2**20:,.1f} |")
    (out_dir / "soak.md").write_text("\n".join(L) + "\n", encoding="utf-8")
