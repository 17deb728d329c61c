"""Fixtures of the gateway tests: a real `cashier-gateway` (uvicorn, its own process) on a
free loopback port in front of the test Redis, two enrolled terminals, cashiers with PINs,
and a signed-in client."""
from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from core import Ledger
from core.cashiers import CashierRegistry
from gateway.client import GatewayLedger
from core.terminals import TerminalRegistry
from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
CASHIER, CASHIER_PIN = "c1", "1234"
PLAIN, PLAIN_PIN = "c2", "2345"            # may not top up
SUPERVISOR, SUPERVISOR_PIN = "sup", "9876"


class GatewayProcess:
    """`python -m gateway run` on one port; stop/kill/start keep the port (a restart)."""

    def __init__(self, redis_url: str, *args: str, port: int | None = None, verify: str | None = None):
        self.redis_url = redis_url
        self.args = args
        self.port = port or free_port()
        self.verify = verify              # the certificate to trust: the gateway runs TLS
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"{'https' if self.verify else 'http'}://127.0.0.1:{self.port}"

    def start(self) -> "GatewayProcess":
        env = {**os.environ, "PYTHONPATH": str(ROOT), "CASHIER_REDIS_URL": self.redis_url}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gateway", "run", "--host", "127.0.0.1", "--port", str(self.port),
             "--log-level", "warning", *self.args], cwd=ROOT, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gateway exited: {self.proc.stderr.read().decode()[-2000:]}")
            try:
                trust = ssl.create_default_context(cafile=self.verify) if self.verify else True
                if httpx.get(f"{self.url}/v1/health", timeout=0.5, verify=trust).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise TimeoutError("the gateway did not start")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc and self.proc.stderr:
            self.proc.stderr.close()

    def kill(self) -> None:
        self.stop(signal.SIGKILL)

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture
def shop(redis_url):
    """The ledger (direct, for setting up and checking), cashiers, terminals T1 and T2."""
    ledger = Ledger.from_url(redis_url)
    ledger.init()
    registry = CashierRegistry(ledger.client)
    registry.add(CASHIER, "Li Na", CASHIER_PIN, can_top_up=True)
    registry.add(PLAIN, "Zhao Lei", PLAIN_PIN)
    registry.add(SUPERVISOR, "Wang Wei", SUPERVISOR_PIN, supervisor=True)
    terminals = TerminalRegistry(ledger.client)
    tokens = {t: terminals.enroll(t) for t in ("T1", "T2")}
    ledger.tokens = tokens
    ledger.terminals = terminals
    yield ledger
    ledger.close()


@pytest.fixture
def gateway(shop, redis_url):
    gw = GatewayProcess(redis_url, "--approval-above-minor", "1000000").start()
    yield gw
    gw.stop()


def make_client(gateway, token: str, *, sign_in: tuple[str, str] | None = (CASHIER, CASHIER_PIN),
                urls=None, timeout_s: float = 3.0) -> GatewayLedger:
    client = GatewayLedger(urls=urls or [gateway.url], token=token, timeout_s=timeout_s)
    if sign_in:
        assert client.sign_in(*sign_in).ok
    return client


@pytest.fixture
def till(gateway, shop):
    client = make_client(gateway, shop.tokens["T1"])
    yield client
    client.close()
