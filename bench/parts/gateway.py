"""Issue 24: what the ledger gateway adds to a charge on loopback. One till-like client
charges in a closed loop, alternating a direct `Ledger.deduct` (till -> Redis) and a
`GatewayLedger.deduct` (till -> gateway -> Redis, one uvicorn process, plain HTTP with
keep-alive, a signed-in session), so both see the same machine. Then throughput: 4
client processes charging as fast as they can through one gateway process, next to 4
calling `Ledger.deduct` directly. Targets (issue 24): the gateway adds at most 1 ms to
the p99; one gateway process serves at least 5,000 charges/s from 4 clients.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from .. import load
from ..drivers import AMOUNT_MINOR, LedgerDriver, _Base, reset_ledger, spread_accounts
from ..stats import percentile_ns

TARGET_ADDED_P99_MS = 1.0
TARGET_GATEWAY_PER_S = 5_000
CLIENT_PROCS = 4
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
    _throughput(ctx)


class GatewayDriver(_Base):
    """`GatewayLedger.deduct` per request through the gateway at `gateway_url`."""
    name = "GatewayLedger.deduct"

    def __init__(self, url: str, accounts: tuple[str, ...]):
        super().__init__(url, accounts)
        self.gateway_url, self.token = "", ""

    def prepare(self, procs: int) -> None:
        super().prepare(procs)
        from core import Ledger
        from core.cashiers import CashierRegistry
        from gateway.terminals import TerminalRegistry
        ledger = Ledger.from_url(self.url, auto_init=False)
        CashierRegistry(ledger.client).add("bench", "Bench", "1234")
        self.token = TerminalRegistry(ledger.client).enroll("BENCH")
        ledger.close()

    def worker(self, index: int, procs: int):
        from core import Status
        from gateway.client import GatewayLedger
        client = GatewayLedger(urls=[self.gateway_url], token=self.token)
        assert client.sign_in("bench", "1234").ok
        reqs = self._requests(index)

        def step():
            account_id, txn_id = next(reqs)
            r = client.deduct(account_id, AMOUNT_MINOR, txn_id=f"BENCH-{txn_id}")
            return (1, 0, 0, AMOUNT_MINOR) if r.status is Status.APPLIED else (1, 0, 0, 0)
        return step


def _throughput(ctx) -> None:
    url = ctx.redis.url
    accounts = spread_accounts()
    seconds = 1.0 if ctx.smoke else max(2.0, ctx.duration_s / 2)
    direct = load.run(LedgerDriver(url, accounts), CLIENT_PROCS, seconds)
    driver = GatewayDriver(url, accounts)
    driver.prepare(CLIENT_PROCS)
    port = _free_port()
    proc = _start_gateway(url, port)
    driver.gateway_url = f"http://127.0.0.1:{port}"
    driver.prepare = lambda procs: None               # prepared above, with the gateway running
    try:
        via = load.run(driver, CLIENT_PROCS, seconds)
    finally:
        proc.terminate()
        proc.wait(15)
    ctx.data["gateway_throughput"] = {"direct": direct.throughput_per_s, "gateway": via.throughput_per_s}
    exact = via.extra.get("exact")
    ctx.row("issue 24 gateway", f"charges/s from {CLIENT_PROCS} client processes, one gateway process vs direct",
            f"gateway {via.throughput_per_s:,.0f}/s, direct {direct.throughput_per_s:,.0f}/s",
            ratio=f"{via.throughput_per_s / max(direct.throughput_per_s, 1):.2f}× direct",
            target=f"≥ {TARGET_GATEWAY_PER_S:,}/s", met=via.throughput_per_s >= TARGET_GATEWAY_PER_S, issue=24,
            note=f"balances exact: {exact}; clients, gateway and Redis share this machine's {os.cpu_count()} cores")
