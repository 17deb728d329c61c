"""Part 6, the reconcile drain: how fast `reconcile-service run` moves journal entries
from Redis into PostgreSQL, against raw `COPY` of the same rows into a table of the
same shape (`LIKE ledger_entries INCLUDING ALL`, indexes included) in the same run,
and how far the journal falls behind while the core keeps deducting. Steps: fill the
private standalone Redis's journal (1,000 opened accounts, then `Ledger.deduct_many`
deductions), reset the consumer group to 0 and the dedicated database
`cashier_bench_reconcile` (schema dropped, `reconcile-service migrate`), start 1 and
then 2 daemons as subprocesses (`python -m reconcile_service run`) on that backlog and
poll XINFO GROUPS (lag + pending = entries not yet acknowledged) every 20 ms until it
is 0: entries/s = backlog / time from the first entry moved to the last one
acknowledged; the rows in `ledger_entries` and the account totals are then checked
against Redis. Journal lag in seconds (now minus the stream-id time of the oldest
entry not yet acknowledged) is sampled every 100 ms while worker processes pace
deductions open-loop at `LAG_RATE_PER_S`. Targets: at least 30,000 entries/s and 0.35x
raw COPY; lag under 1 s.
"""
from __future__ import annotations

import hashlib
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from core import Ledger
from core.connection import connect
from core.keys import CONSUMER_GROUP
from core.ledger import DeductRequest

from .. import load
from ..drivers import AMOUNT_MINOR, LedgerDriver, reset_ledger, spread_accounts

DATABASE = "cashier_bench_reconcile"
TARGET_ENTRIES_PER_S = 30_000
TARGET_LAG_S = 1.0
TARGET_COPY_RATIO = 0.35
LAG_RATE_PER_S = 10_000          # deductions/s the core is paced at during the lag run
LAG_BATCH = 10                   # deductions per paced request (deduct_many), see report
LAG_PROCS = 2
FILL_CHUNK = 1000
POLL_S = 0.02
DRAIN_TIMEOUT_S = 300.0
ROOT = Path(__file__).resolve().parents[2]


def _sqlalchemy_url(dsn: str) -> str:
    kv = dict(p.split("=", 1) for p in dsn.split())
    auth = kv.get("user", "postgres") + (f":{kv['password']}" if kv.get("password") else "")
    return f"postgresql+psycopg://{auth}@{kv.get('host', '127.0.0.1')}:{kv.get('port', '5432')}/{kv['dbname']}"


def _reset_database(dsn: str) -> None:
    import psycopg
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS public CASCADE")
        conn.execute("CREATE SCHEMA public")
    _service(["migrate"], dsn, None).wait(60)


def _service(args: list[str], dsn: str, redis_url: str | None, name: str = "bench",
             module: str = "reconcile_service") -> subprocess.Popen:
    """The daemon (`module`: the service's own, or bench.unchained_service) as a process."""
    cmd = [sys.executable, "-m", module, *args, "--database-url", _sqlalchemy_url(dsn),
           "--redis-url", redis_url or "redis://127.0.0.1:1/0", "--log-level", "WARNING",
           "--log-format", "text"]
    if args[0] == "run":
        cmd += ["--consumer-name", name, "--metrics-port", "0", "--reconcile-interval-s", "86400",
                "--trim-interval-s", "86400", "--hold-expiry-interval-s", "0", "--no-restore-on-start"]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _stop(procs: list[subprocess.Popen]) -> str:
    errors = []
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            _, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        if err and err.strip():
            errors.append(err.strip().splitlines()[-1][:200])
    return "; ".join(errors)


def fill_journal(url: str, accounts: tuple[str, ...], deductions: int) -> None:
    """Fresh ledger with `accounts` opened, then `deductions` of 1 minor unit via deduct_many."""
    reset_ledger(url, accounts)
    ledger = Ledger.from_url(url)
    try:
        n = len(accounts)
        for start in range(0, deductions, FILL_CHUNK):
            reqs = [DeductRequest(accounts[i % n], AMOUNT_MINOR, f"fill-{i}", "T1", "c1")
                    for i in range(start, min(deductions, start + FILL_CHUNK))]
            ledger.deduct_many(reqs)
    finally:
        ledger.close()


def _unapplied(client, journals: list[str]) -> int:
    total = 0
    for j in journals:
        g = next(g for g in client.xinfo_groups(j) if g["name"] == CONSUMER_GROUP)
        lag = g.get("lag")
        total += int(g["pending"]) + (int(lag) if lag is not None else 0)
    return total


def _seconds_behind(client, journals: list[str]) -> float:
    """Now minus the stream-id time (ms) of the oldest entry not yet acknowledged."""
    oldest_ms = None
    for j in journals:
        g = next(g for g in client.xinfo_groups(j) if g["name"] == CONSUMER_GROUP)
        if int(g["pending"]):
            eid = client.xpending(j, CONSUMER_GROUP)["min"]
        else:
            nxt = client.xrange(j, f"({g['last-delivered-id']}", "+", count=1)
            eid = nxt[0][0] if nxt else None
        if eid:
            ms = int(eid.split("-")[0])
            oldest_ms = ms if oldest_ms is None else min(oldest_ms, ms)
    if oldest_ms is None:
        return 0.0
    return max(0.0, time.time() - oldest_ms / 1000)


def _journals(url: str) -> list[str]:
    ledger = Ledger.from_url(url)
    try:
        return [p.journal for p in ledger.partitions]
    finally:
        ledger.close()


def _check_db(dsn: str, url: str, accounts: tuple[str, ...], entries: int) -> dict:
    import psycopg
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("select count(*) from ledger_entries").fetchone()[0]
        db_total = conn.execute("select coalesce(sum(balance_minor), 0) from accounts").fetchone()[0]
    ledger = Ledger.from_url(url)
    try:
        redis_total = sum(i.balance_minor for i in ledger.accounts(list(accounts)).values() if i)
    finally:
        ledger.close()
    return {"rows": rows, "exact": rows == entries and int(db_total) == redis_total}


def drain(url: str, dsn: str, journals: list[str], instances: int, accounts, entries: int,
          chained: bool = True) -> dict:
    """Reset group and database, start `instances` daemons on the backlog, time the drain.
    chained=False: the daemons skip the hash chain (bench.unchained_service, bench only)."""
    client = connect(url)
    for j in journals:
        client.xgroup_destroy(j, CONSUMER_GROUP)
        client.xgroup_create(j, CONSUMER_GROUP, id="0")
    _reset_database(dsn)
    backlog = _unapplied(client, journals)
    spawned = time.perf_counter()
    module = "reconcile_service" if chained else "bench.unchained_service"
    procs = [_service(["run"], dsn, url, f"bench-{instances}-{i}", module) for i in range(instances)]
    samples: list[tuple[float, int]] = [(spawned, backlog)]
    deadline = spawned + DRAIN_TIMEOUT_S
    try:
        while True:
            now = time.perf_counter()
            left = _unapplied(client, journals)
            samples.append((now, left))
            if left == 0 or now > deadline or any(p.poll() is not None for p in procs):
                break
            time.sleep(POLL_S)
    finally:
        err = _stop(procs)
        client.close()
    if samples[-1][1] != 0:
        raise RuntimeError(f"drain with {instances} instance(s) did not finish: {samples[-1][1]} left; {err}")
    # the drain began at the last sample still showing the whole backlog
    begun = max(t for t, left in samples if left == backlog)
    ended = samples[-1][0]
    out = {"entries": backlog, "seconds": ended - begun, "startup_s": begun - spawned,
           "per_s": backlog / max(1e-6, ended - begun)}
    out.update(_check_db(dsn, url, accounts, entries))
    return out


def raw_copy(url: str, dsn: str, journals: list[str]) -> dict:
    """COPY the same rows (built exactly as the service builds them) into a table of the
    same shape, in binary like the drain's own COPY (the fastest way psycopg has to load
    them: text COPY of the same rows takes ~5x the client CPU); only COPY + COMMIT is
    timed. The text figure is measured too, for the note."""
    import psycopg
    from reconcile_service import bulk
    from reconcile_service.models import LedgerEntry
    from reconcile_service.entries import BookEntry, ledger_row
    from reconcile_service.dialect import utcnow

    client = connect(url)
    rows = []
    now = utcnow()
    for part_index, j in enumerate(journals):
        for eid, fields in client.xrange(j, "-", "+"):
            rows.append(ledger_row(BookEntry.parse(eid, part_index, fields), now))
    client.close()
    # the chain's columns, filled outside the timed COPY (the same bytes per row as the book's)
    for seq, r in enumerate(rows, 1):
        r["chain_seq"] = seq
        r["row_hash"] = hashlib.sha256(r["txn_id"].encode()).hexdigest()
    cols = list(rows[0])
    types = [bulk.copy_type(LedgerEntry.__table__.c[c].type) for c in cols]
    data = [tuple(r[c] for c in cols) for r in rows]
    out = {"entries": len(data)}
    for fmt in ("text", "binary"):
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS bench_copy_entries")
            conn.execute("CREATE TABLE bench_copy_entries (LIKE ledger_entries INCLUDING ALL)")
        with psycopg.connect(dsn) as conn:
            started = time.perf_counter()
            with conn.cursor() as cur, cur.copy(f"COPY bench_copy_entries ({', '.join(cols)}) FROM STDIN"
                                                + (" (FORMAT BINARY)" if fmt == "binary" else "")) as cp:
                if fmt == "binary":
                    cp.set_types(types)
                for row in data:
                    cp.write_row(row)
            conn.commit()
            out[f"{fmt}_seconds"] = time.perf_counter() - started
    out["seconds"] = out["binary_seconds"]
    out["per_s"] = len(data) / out["seconds"]
    out["text_per_s"] = len(data) / out["text_seconds"]
    return out


class _PacedDeducts(LedgerDriver):
    """LedgerDriver on an already filled ledger: no reset (a daemon is consuming it)."""

    def prepare(self, procs: int) -> None:
        import secrets
        self.nonce = "lag-" + secrets.token_hex(3)

    def verify(self, m) -> dict:
        return {}


def lag_run(url: str, dsn: str, journals: list[str], accounts, duration_s: float) -> dict:
    """One daemon, caught up; deductions paced at LAG_RATE_PER_S; seconds behind sampled."""
    client = connect(url)
    proc = _service(["run"], dsn, url, "bench-lag")
    samples: list[float] = []
    stop = threading.Event()

    def sample():
        c = connect(url)
        while not stop.is_set():
            try:
                samples.append(_seconds_behind(c, journals))
            except Exception:
                pass
            time.sleep(0.1)
        c.close()
    try:
        deadline = time.perf_counter() + 60
        # sampling starts once the daemon is consuming (its first XREADGROUP registers
        # it in the group): its start-up is not journal lag
        while time.perf_counter() < deadline and not all(
                any(c["name"] == "bench-lag" for c in client.xinfo_consumers(j, CONSUMER_GROUP)) for j in journals):
            time.sleep(0.05)
        while _unapplied(client, journals) and time.perf_counter() < deadline:
            time.sleep(0.05)
        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        m = load.run(_PacedDeducts(url, accounts, LAG_BATCH), LAG_PROCS, duration_s,
                     rate_per_s=LAG_RATE_PER_S / LAG_BATCH)
        stop.set()
        thread.join(5)
        after = time.perf_counter()
        while _unapplied(client, journals) and time.perf_counter() < after + 60:
            time.sleep(0.02)
        catch_up_s = time.perf_counter() - after
    finally:
        stop.set()
        err = _stop([proc])
        client.close()
    ordered = sorted(samples) or [0.0]
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]
    return {"achieved_per_s": m.throughput_per_s, "p50_s": pick(0.5), "p99_s": pick(0.99),
            "max_s": ordered[-1], "samples": len(samples), "catch_up_s": catch_up_s, "error": err}


def run(ctx) -> None:
    url = ctx.redis.url
    dsn = ctx.pg_dsn_for(DATABASE)
    accounts = spread_accounts()
    deductions = 1_000 if ctx.smoke else int(max(20_000, 12_000 * ctx.duration_s))
    fill_journal(url, accounts, deductions)
    entries = len(accounts) + deductions
    journals = _journals(url)
    results = {}
    for instances in ((1,) if ctx.smoke else (1, 2)):
        results[instances] = drain(url, dsn, journals, instances, accounts, entries)
    # the chain's cost: ×1 with and without it, interleaved (best of 2 each outside smoke),
    # so that a busy moment of the machine does not land on one side only
    chained_runs = [results[1]]
    unchained_runs = [drain(url, dsn, journals, 1, accounts, entries, chained=False)]
    if not ctx.smoke:
        chained_runs.append(drain(url, dsn, journals, 1, accounts, entries))
        unchained_runs.append(drain(url, dsn, journals, 1, accounts, entries, chained=False))
    best_chained = max(r["per_s"] for r in chained_runs)
    unchained = max(unchained_runs, key=lambda r: r["per_s"])
    copy = raw_copy(url, dsn, journals)
    ctx.data["reconcile"] = {"drain": results, "copy": copy, "unchained": unchained_runs, "chained": chained_runs}
    best = max(r["per_s"] for r in results.values())
    one = max(best_chained, results[1]["per_s"])
    for instances, r in results.items():
        ctx.row("6 reconcile drain", f"reconcile-service run ×{instances}, backlog of {r['entries']:,} entries "
                f"(1,000 accounts), PostgreSQL `{DATABASE}`", f"{r['per_s']:,.0f} entries/s",
                ratio=f"{r['per_s'] / copy['per_s']:.3f}x of raw COPY",
                target=f"≥ {TARGET_ENTRIES_PER_S:,} entries/s", met=r["per_s"] >= TARGET_ENTRIES_PER_S,
                finding="reconcile_30k", issue=17 if instances == 1 else None,
                note=f"drained in {r['seconds']:.2f} s after {r['startup_s']:.2f} s of daemon start-up; "
                     f"{r['rows']:,} rows in ledger_entries; exact (rows and account totals = Redis): {r['exact']}")
    cost = 1 - best_chained / unchained["per_s"]
    runs = lambda rs: ", ".join(f"{r['per_s']:,.0f}" for r in rs)
    ctx.row("6 reconcile drain", f"reconcile-service run ×1 WITHOUT the hash chain (bench.unchained_service, "
            f"bench only), same backlog of {unchained['entries']:,} entries", f"{unchained['per_s']:,.0f} entries/s",
            ratio=f"the chain costs {cost:.1%} of the drain rate (best ×1 chained {best_chained:,.0f}/s)",
            target="chain ≤ 15% of the drain rate", met=cost <= 0.15,
            note=f"best of interleaved runs: without {runs(unchained_runs)}/s, with {runs(chained_runs)}/s; "
                 "without = no chain head lock or update, no SHA-256 per row")
    ctx.row("6 reconcile drain", f"raw binary COPY of the same {copy['entries']:,} rows into a table LIKE "
            "ledger_entries INCLUDING ALL (same indexes), one transaction", f"{copy['per_s']:,.0f} entries/s",
            ratio=f"drain ×1 {one / copy['per_s']:.3f}x of this (best {best / copy['per_s']:.3f}x)",
            target=f"drain ×1 ≥ {TARGET_COPY_RATIO:g}x", met=one / copy["per_s"] >= TARGET_COPY_RATIO,
            finding="reconcile_copy_ratio", issue=17,
            note=f"COPY + COMMIT {copy['seconds']:.2f} s; rows built in Python beforehand exactly as the service "
                 f"builds them; text COPY of the same rows: {copy['text_per_s']:,.0f} entries/s "
                 f"(drain ×1 {one / copy['text_per_s']:.3f}x of that)")
    if ctx.smoke:
        ctx.row("6 reconcile drain", f"journal lag while the core sustains {LAG_RATE_PER_S:,} deductions/s",
                "skipped in smoke", target=f"lag < {TARGET_LAG_S:g} s")
        return
    lag = lag_run(url, dsn, journals, accounts, ctx.duration_s * 2)
    ctx.data["reconcile"]["lag"] = lag
    sustained = lag["achieved_per_s"] >= 0.95 * LAG_RATE_PER_S
    ctx.row("6 reconcile drain", f"journal lag, 1 daemon, core paced at {LAG_RATE_PER_S:,} deductions/s "
            f"({LAG_PROCS} processes, deduct_many batches of {LAG_BATCH}, open loop)",
            f"p50 {lag['p50_s']:.3f} s, p99 {lag['p99_s']:.3f} s, max {lag['max_s']:.3f} s behind",
            ratio=f"achieved {lag['achieved_per_s']:,.0f} deductions/s" + ("" if sustained else " (NOT sustained)"),
            target=f"p99 < {TARGET_LAG_S:g} s at {LAG_RATE_PER_S:,}/s sustained",
            met=lag["p99_s"] < TARGET_LAG_S and sustained, finding="reconcile_lag", issue=17,
            note=f"{lag['samples']} samples every 100 ms (now - stream-id time of the oldest unacknowledged entry); "
                 f"caught up {lag['catch_up_s']:.2f} s after the load stopped"
                 + (f"; daemon stderr: {lag['error']}" if lag["error"] else ""))
