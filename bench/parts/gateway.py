"""Issue 24: what the ledger gateway costs, next to the direct path, in one run.

1. Latency: one till-like client charges in a closed loop, alternating a direct
   `Ledger.deduct` (till -> Redis) and a `GatewayLedger.deduct` (till -> gateway -> Redis,
   one uvicorn process, plain HTTP with keep-alive, a signed-in session), so both see the
   same machine. Target: the gateway adds at most 1 ms to the p99.
2. Throughput, back to back: 4 client processes charging as fast as they can calling
   `Ledger.deduct` directly, then through one gateway process, then spread over two
   gateway processes (clients 0, 2 on one port, 1, 3 on the other). Targets: one gateway
   process serves at least 5,000 charges/s; two serve at least 1.7x one.
3. Batches, back to back: 4 client processes calling `Ledger.deduct_many` (batches of
   100) directly, then `GatewayLedger.deduct_many` (POST /v1/ops/deduct_many) through one
   gateway process. Target: at least 0.8x direct.
Every measurement checks the balances afterwards (opening - what the clients saw applied).
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from .. import load
from ..drivers import AMOUNT_MINOR, LedgerDriver, _Base, reset_ledger, spread_accounts
from ..stats import percentile_ns

TARGET_ADDED_P99_MS = 1.0
TARGET_GATEWAY_PER_S = 5_000
TARGET_TWO_GATEWAYS_RATIO = 1.7
TARGET_BATCH_RATIO = 0.8
CLIENT_PROCS = 4
BATCH = 100                       # as part 3's deduct_many (bench/parts/client.py)
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
    from core.terminals import TerminalRegistry

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
    """`GatewayLedger.deduct` per request (batch 1) or `GatewayLedger.deduct_many` of
    `batch` through the gateways at `gateway_urls`: worker i talks to gateway i mod n."""

    def __init__(self, url: str, accounts: tuple[str, ...], batch: int = 1):
        super().__init__(url, accounts, batch)
        self.gateway_urls: list[str] = []
        self.token = ""

    @property
    def name(self) -> str:
        many = f"GatewayLedger.deduct_many({self.batch})" if self.batch > 1 else "GatewayLedger.deduct"
        return f"{many} via {len(self.gateway_urls)} gateway(s)"

    def prepare(self, procs: int) -> None:
        super().prepare(procs)
        from core import Ledger
        from core.cashiers import CashierRegistry
        from core.terminals import TerminalRegistry
        ledger = Ledger.from_url(self.url, auto_init=False)
        CashierRegistry(ledger.client).add("bench", "Bench", "1234")
        self.token = TerminalRegistry(ledger.client).enroll("BENCH")
        ledger.close()

    def worker(self, index: int, procs: int):
        from core import Status
        from core.records import DeductRequest
        from gateway.client import GatewayLedger
        client = GatewayLedger(urls=[self.gateway_urls[index % len(self.gateway_urls)]], token=self.token)
        assert client.sign_in("bench", "1234").ok
        reqs = self._requests(index)
        applied = Status.APPLIED
        if self.batch == 1:
            def step():
                account_id, txn_id = next(reqs)
                r = client.deduct(account_id, AMOUNT_MINOR, txn_id=f"BENCH-{txn_id}")
                return (1, 0, 0, AMOUNT_MINOR) if r.status is applied else (1, 0, 0, 0)
            return step
        batch = self.batch

        def step_many():
            items = [DeductRequest(a, AMOUNT_MINOR, f"BENCH-{t}") for a, t in (next(reqs) for _ in range(batch))]
            ok = sum(1 for r in client.deduct_many(items) if getattr(r, "status", None) is applied)
            return batch, 0, batch - ok, ok * AMOUNT_MINOR
        return step_many


_TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def _proc_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process `pid` used so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) * _TICK_S


def _children() -> list[int]:
    """The pids whose parent is this process (the load's worker processes, the gateways)."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return found


def _machine_busy() -> tuple[float, float]:
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]
    return sum(values) * _TICK_S, (sum(values) - idle) * _TICK_S


class CpuSampler:
    """Cores busy per component over the middle of a load run (after the workers started
    and signed in, before they stop): the gateway process(es), the client processes, the
    private redis-server, and the whole machine (others' jobs included). From a thread of
    the parent, reading /proc twice `window_s` apart."""

    def __init__(self, seconds: float, redis_pid: int, gateway_pids: list[int]):
        self.redis_pid, self.gateway_pids = redis_pid, gateway_pids
        self.start_after_s = min(1.5, seconds * 0.3) + 0.5        # workers start, sign in, warm up
        self.window_s = max(0.5, seconds * 0.5)
        self.cores: dict[str, float] = {}
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _snapshot(self) -> dict[str, float]:
        clients = [p for p in _children() if p not in self.gateway_pids]
        total, busy = _machine_busy()
        return {"gateway": sum(_proc_cpu_s(p) for p in self.gateway_pids),
                "clients": sum(_proc_cpu_s(p) for p in clients), "redis": _proc_cpu_s(self.redis_pid),
                "machine": busy, "machine_total": total, "_clients": tuple(clients)}

    def _sample(self) -> None:
        time.sleep(self.start_after_s)
        a = self._snapshot()
        time.sleep(self.window_s)
        b = self._snapshot()
        if a["_clients"] != b["_clients"]:       # a worker ended inside the window: no reading
            return
        wall = self.window_s
        self.cores = {k: (b[k] - a[k]) / wall for k in ("gateway", "clients", "redis", "machine")}
        self.cores["machine_cores"] = (b["machine_total"] - a["machine_total"]) / wall

    def __enter__(self) -> "CpuSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._thread.join(30)

    def describe(self, per_s: float) -> str:
        c = self.cores
        if not c:
            return "CPU not sampled"
        per = (lambda k: f"{c[k] * 1e3 / per_s:.2f}" if per_s else "?")
        ours = c["gateway"] + c["clients"] + c["redis"]
        return (f"cores busy: gateway {c['gateway']:.2f}, clients {c['clients']:.2f}, Redis {c['redis']:.2f} "
                f"(ms CPU per deduction {per('gateway')} + {per('clients')} + {per('redis')}); "
                f"machine {c['machine']:.2f} of {c['machine_cores']:.1f} (others' jobs "
                f"{max(c['machine'] - ours, 0):.2f})")


def _via_gateways(ctx, driver: GatewayDriver | LedgerDriver, gateways: int, seconds: float):
    """`driver` run by CLIENT_PROCS processes against `gateways` fresh gateway processes
    (0: direct), with the CPU each component used: (Measurement, CpuSampler)."""
    driver.prepare(CLIENT_PROCS)
    procs = []
    try:
        for _ in range(gateways):
            port = _free_port()
            procs.append(_start_gateway(driver.url, port))
            driver.gateway_urls.append(f"http://127.0.0.1:{port}")
        driver.prepare = lambda n: None           # prepared above, before the gateways started
        with CpuSampler(seconds, ctx.redis.proc.pid, [p.pid for p in procs]) as cpu:
            m = load.run(driver, CLIENT_PROCS, seconds)
        return m, cpu
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(15)


def _throughput(ctx) -> None:
    url = ctx.redis.url
    accounts = spread_accounts()
    seconds = 1.0 if ctx.smoke else max(2.0, ctx.duration_s / 2)
    cores = os.cpu_count()
    direct, direct_cpu = _via_gateways(ctx, LedgerDriver(url, accounts), 0, seconds)
    one, one_cpu = _via_gateways(ctx, GatewayDriver(url, accounts), 1, seconds)
    two, two_cpu = _via_gateways(ctx, GatewayDriver(url, accounts), 2, seconds)
    ctx.data["gateway_throughput"] = {"direct": direct.throughput_per_s, "gateway": one.throughput_per_s,
                                      "two_gateways": two.throughput_per_s,
                                      "cpu": {"direct": direct_cpu.cores, "one": one_cpu.cores,
                                              "two": two_cpu.cores}}
    ctx.row("issue 24 gateway", f"charges/s from {CLIENT_PROCS} client processes, one gateway process vs direct",
            f"gateway {one.throughput_per_s:,.0f}/s, direct {direct.throughput_per_s:,.0f}/s",
            ratio=f"{one.throughput_per_s / max(direct.throughput_per_s, 1):.2f}× direct",
            target=f"≥ {TARGET_GATEWAY_PER_S:,}/s", met=one.throughput_per_s >= TARGET_GATEWAY_PER_S,
            finding="gateway_throughput", issue=24,
            note=f"balances exact: {one.extra.get('exact')} (direct {direct.extra.get('exact')}); "
                 f"one gateway: {one_cpu.describe(one.throughput_per_s)}; direct: "
                 f"{direct_cpu.describe(direct.throughput_per_s)}; {cores} cores")
    ratio = two.throughput_per_s / max(one.throughput_per_s, 1)
    ctx.row("issue 24 gateway", f"charges/s from {CLIENT_PROCS} client processes spread over two gateway "
            "processes vs all on one",
            f"two gateways {two.throughput_per_s:,.0f}/s, one {one.throughput_per_s:,.0f}/s, direct "
            f"{direct.throughput_per_s:,.0f}/s",
            ratio=f"{ratio:.2f}× one gateway; {two.throughput_per_s / max(direct.throughput_per_s, 1):.2f}× direct",
            target=f"≥ {TARGET_TWO_GATEWAYS_RATIO:g}× one", met=ratio >= TARGET_TWO_GATEWAYS_RATIO,
            finding="gateway_two_processes", issue=24,
            note=f"balances exact: {two.extra.get('exact')}; two gateways: {two_cpu.describe(two.throughput_per_s)}; "
                 f"{cores} cores")
    _batches(ctx, url, accounts, seconds)


def _batches(ctx, url: str, accounts: tuple[str, ...], seconds: float) -> None:
    direct, direct_cpu = _via_gateways(ctx, LedgerDriver(url, accounts, BATCH), 0, seconds)
    via, via_cpu = _via_gateways(ctx, GatewayDriver(url, accounts, BATCH), 1, seconds)
    ctx.data["gateway_batches"] = {"direct": direct.throughput_per_s, "gateway": via.throughput_per_s,
                                   "cpu": {"direct": direct_cpu.cores, "gateway": via_cpu.cores}}
    ratio = via.throughput_per_s / max(direct.throughput_per_s, 1)
    ctx.row("issue 24 gateway", f"deduct_many, batches of {BATCH}, from {CLIENT_PROCS} client processes, "
            "one gateway process vs direct",
            f"gateway {via.throughput_per_s:,.0f} deductions/s, direct {direct.throughput_per_s:,.0f}/s",
            ratio=f"{ratio:.2f}× direct", target=f"≥ {TARGET_BATCH_RATIO:g}× direct",
            met=ratio >= TARGET_BATCH_RATIO, finding="gateway_deduct_many", issue=24,
            note=f"batch p50 {via.latency_ms_p50:.2f} ms (direct {direct.latency_ms_p50:.2f} ms); balances exact: "
                 f"{via.extra.get('exact')} (direct {direct.extra.get('exact')}); gateway: "
                 f"{via_cpu.describe(via.throughput_per_s)}; direct: {direct_cpu.describe(direct.throughput_per_s)}")
