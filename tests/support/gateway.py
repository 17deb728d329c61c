"""A real ledger gateway (gateway/app.py, served in a thread by gateway/in_thread.py) in the
test process, on a free loopback port in front of a given Redis URL, for the till's tests: every till
test reaches the ledger the way a till in a shop does (HTTP, its terminal's credential,
cashier sessions, supervisor grants), never Redis itself.

    gw = InProcessGateway(redis_url).start()
    ledger = gw.till_ledger("T1")          # a GatewayLedger with T1's credential
    ...
    gw.stop()

The gateway's own Redis calls get the short deadlines of the till's fast tests
(`call_deadline_s`, `socket_timeout_s`), below the till client's timeout, so a Redis
outage is answered "ledger unavailable" (HTTP 503) rather than by silence.
"""
from __future__ import annotations

import uvicorn

from core import Ledger, RetryPolicy
from gateway.app import Gateway, GatewaySettings
from gateway.client import GatewayLedger
from gateway.in_thread import free_port, serve_in_thread, stop
from core.terminals import TerminalRegistry


class InProcessGateway:
    """One gateway on 127.0.0.1:<free port> for `redis_url`; `till_ledger(terminal_id)`
    enrols the terminal once (a second call reuses its credential) and returns a client."""

    def __init__(self, redis_url: str, *, call_deadline_s: float = 1.0, socket_timeout_s: float = 0.5,
                 approval_above_minor: int = 0):
        self.redis_url = redis_url
        self.ledger = Ledger.from_url(redis_url, auto_init=False, socket_timeout_s=socket_timeout_s,
                                      retry=RetryPolicy(deadline_s=call_deadline_s))
        self.gateway = Gateway(self.ledger, GatewaySettings(approval_above_minor=approval_above_minor))
        self.port = free_port()
        self.tokens: dict[str, str] = {}
        self._server: uvicorn.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "InProcessGateway":
        self._server, _ = serve_in_thread(self.gateway, port=self.port)
        return self

    def enroll(self, terminal_id: str) -> str:
        """The terminal's credential (enrolled on first use; the same token afterwards)."""
        if terminal_id not in self.tokens:
            self.tokens[terminal_id] = TerminalRegistry(self.ledger.client).enroll(terminal_id)
        return self.tokens[terminal_id]

    def till_ledger(self, terminal_id: str = "T1", *, timeout_s: float = 2.0) -> GatewayLedger:
        return GatewayLedger([self.url], self.enroll(terminal_id), timeout_s=timeout_s)

    def stop(self) -> None:
        if self._server is not None:
            stop(self._server)
            self._server = None
        self.ledger.close()


class Gateways:
    """The gateways of one test, one per Redis URL (a till restarted in the same test
    finds the same gateway and its terminal's credential)."""

    def __init__(self, **options):
        self.options = options
        self.by_url: dict[str, InProcessGateway] = {}

    def for_url(self, redis_url: str) -> InProcessGateway:
        if redis_url not in self.by_url:
            self.by_url[redis_url] = InProcessGateway(redis_url, **self.options).start()
        return self.by_url[redis_url]

    def till_ledger(self, redis_url: str, terminal_id: str = "T1", **options) -> GatewayLedger:
        return self.for_url(redis_url).till_ledger(terminal_id, **options)

    def stop(self) -> None:
        for gw in self.by_url.values():
            gw.stop()
        self.by_url.clear()
