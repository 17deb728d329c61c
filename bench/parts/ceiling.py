"""Part 1, the ceiling: `redis-benchmark` (C, 50 connections, with and without
pipelining -P 16) running the product's deduct operation as a plain script by SHA
(EVALSHA; the product itself calls the deduct function by FCALL) on a private Redis.

redis-benchmark replaces *every* ``__rand_int__`` occurrence with its *own* random
number (measured here: `SET k:__rand_int__ v:__rand_int__` stores different numbers
in key and value). The deduct script requires KEYS[2] == prefix..'t:'..ARGV[1], so
the naive command with the placeholder in both places gets only INVALID replies
(which redis-benchmark counts as successes): the part runs it briefly and reports
the share that really applied (0%). The ceiling proper uses a *variant*: the
product's script body byte for byte, preceded by one line that takes the txn id from
KEYS[2] (``ARGV[1] = string.sub(KEYS[2], #KEYS[3] + 2)``), so every call does the
product's full work on a fresh txn id. For reference the part also measures the
exact product SHA on its replay path (one fixed txn id) and the exact product SHA
with unique txn ids sent through `redis-cli --pipe` over one connection. Applied
counts are checked from the journal length, and the final balance must be exact.
"""
from __future__ import annotations

import csv
import io
import subprocess
import tempfile
import time
from pathlib import Path

from core import Ledger
from core.ledger import DEFAULT_RETENTION_S

from ..drivers import INITIAL_BALANCE_MINOR, deduct_keys, reset_ledger

ACCOUNT = "B0"
CLIENTS = 50
PIPELINE = 16
RAND_RANGE = 2_000_000_000          # redis-benchmark parses -r with atoi
VARIANT_PROLOGUE = "ARGV[1] = string.sub(KEYS[2], #KEYS[3] + 2)\n"


def redis_benchmark(port: int, command: list[str], requests: int, *, clients: int = CLIENTS,
                    pipeline: int = 1) -> dict:
    """One redis-benchmark run; answers rps and latency figures (ms) from its CSV."""
    args = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", str(clients),
            "-n", str(requests), "-r", str(RAND_RANGE), "-P", str(pipeline), "--csv", *command]
    started = time.perf_counter()
    out = subprocess.run(args, check=True, capture_output=True, text=True, timeout=600).stdout
    wall_s = time.perf_counter() - started
    rows = list(csv.DictReader(io.StringIO(out)))
    row = rows[-1]
    return {"rps": float(row["rps"]), "latency_ms_mean": float(row["avg_latency_ms"]),
            "latency_ms_p50": float(row["p50_latency_ms"]), "latency_ms_p99": float(row["p99_latency_ms"]),
            "requests": requests, "wall_s": wall_s}


def _resp(*parts: str) -> bytes:
    out = [f"*{len(parts)}\r\n".encode()]
    for p in parts:
        b = p.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


def run(ctx) -> None:
    server = ctx.redis
    url = server.url
    duration_s = ctx.duration_s
    retention = str(DEFAULT_RETENTION_S)

    def fresh():
        reset_ledger(url, (ACCOUNT,))
        led = Ledger.from_url(url)
        part = led.schema.partition_of(ACCOUNT)
        body = led.scripts["deduct"].body
        led.close()
        client = server.client()
        # the product calls the deduct function (FCALL); redis-benchmark's runs here use the
        # same operation as a plain script (its includes pasted in), loaded by SHA
        sha = client.script_load(body)
        return part, sha, body, client

    def applied_since(client, part, before: int) -> int:
        return client.xlen(part.journal) - before

    def sized(rps_guess: float, pipeline: int) -> int:
        return max(2000, int(rps_guess * duration_s) // (CLIENTS * pipeline) * CLIENTS * pipeline)

    # 0. the naive command: both placeholders get different values -> INVALID replies.
    part, sha, body, client = fresh()
    before = client.xlen(part.journal)
    naive_n = 5000 if ctx.smoke else 20000
    def keys(txn: str) -> list[str]:
        k = deduct_keys(part, ACCOUNT, txn)
        return [str(len(k)), *k]

    naive = redis_benchmark(server.port, ["EVALSHA", sha, *keys("__rand_int__"), "__rand_int__",
                                          ACCOUNT, "1", retention, "T1", "c1"], naive_n)
    naive["applied_share"] = applied_since(client, part, before) / naive_n
    sample = client.evalsha(sha, *keys("000000000001"), "000000000002", ACCOUNT, "1", retention, "T1", "c1")
    naive["sample_reply"] = sample
    ctx.data["ceiling_naive"] = naive

    # 1. the ceiling: the product body with a one-line prologue, fresh txn id per call.
    variant_sha = client.script_load(VARIANT_PROLOGUE + body)
    results = {}
    for pipeline in (1, PIPELINE):
        part, sha, body, client = fresh()
        variant_sha = client.script_load(VARIANT_PROLOGUE + body)
        cmd = ["EVALSHA", variant_sha, *keys("b__rand_int__"), "x", ACCOUNT, "1", retention, "T1", "c1"]
        probe = redis_benchmark(server.port, cmd, 2000 if ctx.smoke else 10000, pipeline=pipeline)
        part, sha, body, client = fresh()
        variant_sha = client.script_load(VARIANT_PROLOGUE + body)
        before = client.xlen(part.journal)
        n = sized(probe["rps"], pipeline)
        client.config_resetstat()
        r = redis_benchmark(server.port, cmd, n, pipeline=pipeline)
        r["commandstats"] = client.info("commandstats")
        applied = applied_since(client, part, before)
        balance = int(client.hget(part.account(ACCOUNT), "bal"))
        r["applied_share"] = applied / n
        r["exact"] = balance == INITIAL_BALANCE_MINOR - applied
        results[pipeline] = r
    ctx.data["ceiling_variant"] = results

    # 2. exact product SHA, replay path (one txn id: every call after the first replays).
    replay = {}
    for pipeline in (1, PIPELINE):
        part, sha, body, client = fresh()
        cmd = ["EVALSHA", sha, *keys("fixed-1"), "fixed-1", ACCOUNT, "1", retention, "T1", "c1"]
        n = sized(results[pipeline]["rps"] * 1.3, pipeline)
        replay[pipeline] = redis_benchmark(server.port, cmd, n, pipeline=pipeline)
    ctx.data["ceiling_replay"] = replay

    # 3. exact product SHA, unique txn ids, redis-cli --pipe on one connection.
    part, sha, body, client = fresh()
    n = max(5000, int(results[PIPELINE]["rps"] * duration_s))
    acct, jkey = part.account(ACCOUNT), part.journal
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cmds.resp"
        with path.open("wb") as f:
            chunk = []
            for i in range(n):
                txn = f"p{i}"
                chunk.append(_resp("EVALSHA", sha, *keys(txn), txn, ACCOUNT, "1", retention, "T1", "c1"))
                if len(chunk) == 10000:
                    f.write(b"".join(chunk)); chunk = []
            f.write(b"".join(chunk))
        before = client.xlen(jkey)
        started = time.perf_counter()
        with path.open("rb") as f:
            subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(server.port), "--pipe"],
                           stdin=f, check=True, capture_output=True, timeout=600)
        wall_s = time.perf_counter() - started
    applied = applied_since(client, part, before)
    balance = int(client.hget(acct, "bal"))
    ctx.data["ceiling_pipe"] = {"rps": n / wall_s, "requests": n, "applied_share": applied / n,
                                "exact": balance == INITIAL_BALANCE_MINOR - applied}
    client.close()

    c1, c16 = results[1], results[PIPELINE]
    ctx.row("1 ceiling", "naive redis-benchmark: __rand_int__ in KEYS[2] and ARGV[1] (50 conns)",
            f"{naive['rps']:,.0f} req/s, {naive['applied_share']:.0%} applied",
            note=f"each occurrence gets its own number -> reply {naive['sample_reply'][0]}: not a ceiling")
    ctx.row("1 ceiling", "redis-benchmark, product script + txn-from-KEYS[2] prologue, 50 conns, -P 1",
            f"{c1['rps']:,.0f} deductions/s", note=f"mean {c1['latency_ms_mean']:.2f} ms, p99 {c1['latency_ms_p99']:.2f} ms; "
            f"{c1['applied_share']:.2%} applied; balance exact: {c1['exact']}")
    ctx.row("1 ceiling", f"redis-benchmark, same, 50 conns, -P {PIPELINE}",
            f"{c16['rps']:,.0f} deductions/s", ratio=f"{c16['rps'] / c1['rps']:.2f}x of -P 1",
            note=f"{c16['applied_share']:.2%} applied; balance exact: {c16['exact']}")
    for pipeline, r in replay.items():
        ctx.row("1 ceiling", f"redis-benchmark, exact product SHA, replay path (fixed txn), -P {pipeline}",
                f"{r['rps']:,.0f} replays/s", ratio=f"{r['rps'] / results[pipeline]['rps']:.2f}x of ceiling -P {pipeline}")
    # server-side profile of one deduction: where Redis spends its time (INFO commandstats)
    stats = c16["commandstats"]
    n16 = c16["requests"]
    evalsha = stats.get("cmdstat_evalsha", {})
    inner = sorted(((k.removeprefix("cmdstat_"), v) for k, v in stats.items() if k != "cmdstat_evalsha"
                    and v.get("calls", 0) >= n16 // 2), key=lambda kv: -kv[1]["usec"])
    ctx.data["ceiling_profile"] = {"evalsha_usec_per_call": evalsha.get("usec_per_call", 0.0),
                                   "inner": [(k, v["calls"] / n16, v["usec_per_call"]) for k, v in inner]}
    ctx.row("1 ceiling", "server-side profile of one deduction (INFO commandstats, -P 16 run)",
            f"{evalsha.get('usec_per_call', 0.0):.1f} µs of Redis CPU per EVALSHA",
            ratio=f"→ at most {1e6 / max(1e-9, evalsha.get('usec_per_call', 1.0)):,.0f} deductions/s per Redis core",
            note="inside the script, per deduction: " + ", ".join(
                f"{k} ×{calls:.0f} {us:.2f} µs" for k, calls, us in ctx.data["ceiling_profile"]["inner"][:8]))
    p = ctx.data["ceiling_pipe"]
    ctx.row("1 ceiling", "redis-cli --pipe, exact product SHA, unique txn ids, 1 connection",
            f"{p['rps']:,.0f} deductions/s", ratio=f"{p['rps'] / c16['rps']:.2f}x of ceiling -P {PIPELINE}",
            note=f"{p['applied_share']:.2%} applied; balance exact: {p['exact']}")
    ctx.ceiling_single_per_s = c1["rps"]
    ctx.ceiling_pipelined_per_s = c16["rps"]
