"""Issue 24: what the ledger gateway adds to a charge on loopback. One till-like client
charges in a closed loop, alternating a direct `Ledger.deduct` (till -> Redis) and a
`GatewayLedger.deduct` (till -> gateway -> Redis, one uvicorn process, plain HTTP with
keep-alive, a signed-in session), so both see the same machine. Target (issue 24):
the gateway adds at most 1 ms to the p99.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from ..drivers import reset_ledger
from ..stats import percentile_ns

TARGET_ADDED_P99_MS = 1.0
ROOT = Path(__file__).resolve().parents[2]
ACCOUNT = "G0"


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_gateway(url: str, port: int) -> subprocess.Popen:
    import httpx
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CASHIER_REDIS_URL": url}
    proc = subprocess.Popen([sys.executable, "-m", "gateway", "run", "--host", "127.0.0.1", "--port", str(port),
                             "--log-level", "warning"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=0.5).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the gateway did not start")


def run(ctx) -> None:
    from core import Ledger
    from core.cashiers import CashierRegistry
    from gateway.client import GatewayLedger
    from gateway.terminals import TerminalRegistry

    url = ctx.redis.url
    reset_ledger(url, (ACCOUNT,))
    direct = Ledger.from_url(url, auto_init=False)
    CashierRegistry(direct.client).add("bench", "Bench", "1234")
    token = TerminalRegistry(direct.client).enroll("BENCH")
    port = _free_port()
    proc = _start_gateway(url, port)
    via = GatewayLedger(urls=[f"http://127.0.0.1:{port}"], token=token)
    try:
        assert via.sign_in("bench", "1234").ok
        samples = 300 if ctx.smoke else max(2_000, int(ctx.duration_s * 400))
        for i in range(100):                                  # warm both paths (connections, scripts)
            direct.deduct(ACCOUNT, 1, txn_id=f"wd-{i}", terminal_id="BENCH", cashier_id="bench")
            via.deduct(ACCOUNT, 1, txn_id=f"wg-{i}")
        direct_ns, gateway_ns = [], []
        for i in range(samples):
            t0 = time.perf_counter_ns()
            direct.deduct(ACCOUNT, 1, txn_id=f"bd-{i}", terminal_id="BENCH", cashier_id="bench")
            t1 = time.perf_counter_ns()
            via.deduct(ACCOUNT, 1, txn_id=f"bg-{i}")
            t2 = time.perf_counter_ns()
            direct_ns.append(t1 - t0)
            gateway_ns.append(t2 - t1)
    finally:
        via.close()
        direct.close()
        proc.terminate()
        proc.wait(15)
    direct_ns.sort()
    gateway_ns.sort()
    p = {name: {q: percentile_ns(v, q) / 1e6 for q in (50, 99)} for name, v in
         (("direct", direct_ns), ("gateway", gateway_ns))}
    added = p["gateway"][99] - p["direct"][99]
    ctx.data["gateway_latency"] = p
    ctx.row("issue 24 gateway", f"charge p99, till -> gateway -> Redis vs till -> Redis ({len(direct_ns)} each, "
            "one client, loopback)",
            f"gateway p50 {p['gateway'][50]:.3f} ms, p99 {p['gateway'][99]:.3f} ms; direct p50 "
            f"{p['direct'][50]:.3f} ms, p99 {p['direct'][99]:.3f} ms",
            ratio=f"adds {added:.3f} ms to p99", target=f"≤ {TARGET_ADDED_P99_MS:g} ms added",
            met=added <= TARGET_ADDED_P99_MS, issue=24,
            note="one uvicorn process (h11), plain HTTP keep-alive; the ledger call runs in Starlette's thread pool")
