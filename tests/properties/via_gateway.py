"""The history of issue 12 through the ledger gateway (issue 24): the client processes are
tills, each a `GatewayLedger` with the URLs of BOTH gateways, its own enrolled terminal,
and a signed-in cashier; the gateways (real `python -m gateway run` processes) talk to
Redis through the fault proxy, so every Redis fault of `workload.Faults` happens behind
them. Meanwhile `GatewayFaults` SIGKILLs gateways mid-run: one is restarted at once, one
is kept down for a while (the tills must go to the other); and a fault proxy in front of
each gateway drops HTTP replies after the gateway answered (the till fails over to the
other gateway with the same txn id, which must replay the first decision).

What a till cannot send is not generated on this path (workload.py adapts):
 * every txn id starts with '<terminal id>-' (the gateway answers a replay of a declined
   request only when the id is its terminal's), so ids shared between clients are gone;
 * no opening balance (`open` takes none at the gateway: accounts are opened, then
   topped up), no short-retention ledger (the shop's retention is the gateway's), no
   `cmp:`/`@` ids, no `deduct_many` (a till's batch is its outbox, sent one by one).
Refunds need a supervisor: each refund's txn id gets its own grant (POST /v1/approvals
with the supervisor's id and PIN, the till signed in as a plain cashier), carried again
by every retry of that txn id. Freeze, unfreeze and the release of expired holds are
back-office work (cashierctl, the reconcile service's sweeper): they go straight to
Redis (through the same fault proxy), as in a shop.
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from core import Ledger, LedgerUnavailable, RetryPolicy
from core.cashiers import CashierRegistry
from gateway.client import GatewayLedger
from core.terminals import TerminalRegistry
from tests.gateway.conftest import ROOT, GatewayProcess

SUPERVISOR, SUPERVISOR_PIN = "sup", "9876"
CASHIER_PIN = "2345"
GATEWAY_CALL_DEADLINE_S = 1.0      # the gateway's retries of one Redis call
TILL_TIMEOUT_S = 2.5               # above it: a Redis outage is answered 503, not by silence


def cashier_of(terminal_id: str) -> str:
    return f"k{terminal_id}"


def enroll_tills(redis_url: str, terminal_ids: list[str]) -> dict[str, str]:
    """Cashiers (may top up, not supervisors), one supervisor, and one enrolled terminal per
    till: terminal id -> its credential."""
    ledger = Ledger.from_url(redis_url)
    try:
        cashiers = CashierRegistry(ledger.client)
        cashiers.add(SUPERVISOR, "Wang Wei", SUPERVISOR_PIN, supervisor=True)
        terminals = TerminalRegistry(ledger.client)
        tokens = {}
        for t in terminal_ids:
            cashiers.add(cashier_of(t), f"Till {t}", CASHIER_PIN, can_top_up=True)
            tokens[t] = terminals.enroll(t)
        return tokens
    finally:
        ledger.close()


class LoggedGateway(GatewayProcess):
    """`GatewayProcess` whose log goes to a file (a pipe nobody reads could fill up and
    stall a gateway under a long run's warnings); kept for the failure report."""

    def __init__(self, redis_url: str, log_path: Path, *args: str):
        super().__init__(redis_url, *args)
        self.log_path = log_path

    def start(self) -> "LoggedGateway":
        env = {**os.environ, "PYTHONPATH": str(ROOT), "CASHIER_REDIS_URL": self.redis_url}
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gateway", "run", "--host", "127.0.0.1", "--port", str(self.port),
                 "--log-level", "warning", *self.args], cwd=ROOT, env=env, stdout=log, stderr=log)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gateway exited: {self.log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.url}/v1/health", timeout=0.5).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise TimeoutError("the gateway did not start")


def start_gateways(redis_url: str, tmp: Path, n: int = 2) -> list[LoggedGateway]:
    return [LoggedGateway(redis_url, tmp / f"gateway-{i + 1}.log", "--call-deadline-s",
                          str(GATEWAY_CALL_DEADLINE_S)).start() for i in range(n)]


class TillLedger:
    """What `history.execute` calls, for a till: money through the gateways
    (`GatewayLedger` with both URLs), back-office operations straight to Redis."""

    def __init__(self, gateway: dict, terminal_id: str):
        self.terminal_id = terminal_id
        self.till = GatewayLedger(gateway["urls"], gateway["token"], timeout_s=TILL_TIMEOUT_S)
        self.admin = Ledger.from_url(gateway["admin_url"], socket_timeout_s=0.25,
                                     retry=RetryPolicy(deadline_s=2.0))
        self.order = gateway["order"]            # index in `urls` -> the gateway's index
        self.batch_gateway = gateway.get("batch_gateway")     # multiprocessing Value (or None)
        self.grants: dict[str, str] = {}         # refund txn id -> the grant its sends carry
        self.approvals = 0
        self.switches = 0                         # answers from another gateway than the last one
        self.batch_switches = 0                   # ... of them in the middle of a batch

    def _tracked(self, call, *args, in_batch: bool = False, **kwargs):
        before = self.till._current
        try:
            return call(*args, **kwargs)
        finally:
            if self.till._current != before:
                self.switches += 1
                self.batch_switches += in_batch

    def sign_in(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                signin = self.till.sign_in(cashier_of(self.terminal_id), CASHIER_PIN)
                assert signin.ok, f"{self.terminal_id}: sign-in refused ({signin.outcome})"
                return
            except LedgerUnavailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def close(self) -> None:
        self.till.close()
        self.admin.close()

    # -- through the gateway
    def open_account(self, account_id, *, txn_id, initial_minor=0):
        assert initial_minor == 0, "a till opens accounts without a balance"
        return self._tracked(self.till.open_account, account_id, txn_id=txn_id)

    def deduct(self, account_id, amount_minor, *, txn_id, terminal_id=None):
        return self._tracked(self.till.deduct, account_id, amount_minor, txn_id=txn_id)

    def credit(self, account_id, amount_minor, *, txn_id):
        return self._tracked(self.till.credit, account_id, amount_minor, txn_id=txn_id)

    def refund(self, account_id, amount_minor, *, txn_id, original_txn_id):
        grant = self.grants.get(txn_id)
        if grant is None:
            signin, approval = self._tracked(self.till.approve, SUPERVISOR, SUPERVISOR_PIN, kind="refund")
            if approval is None:      # a raw error: the checker reports it (contract_types)
                raise AssertionError(f"the supervisor's approval was refused: {signin.outcome}")
            grant = self.grants[txn_id] = approval.grant
            self.approvals += 1
        return self._tracked(self.till.refund, account_id, amount_minor, txn_id=txn_id,
                             original_txn_id=original_txn_id, approval_grant=grant)

    def sale(self, account_id, card_minor, tenders, *, txn_id, total_minor, change_minor=0, terminal_id=None):
        return self._tracked(self.till.sale, account_id, card_minor, tenders, txn_id=txn_id,
                             total_minor=total_minor, change_minor=change_minor)

    def tender_refund(self, account_id, amount_minor, *, txn_id, original_txn_id, method):
        grant = self.grants.get(txn_id)
        if grant is None:
            signin, approval = self._tracked(self.till.approve, SUPERVISOR, SUPERVISOR_PIN, kind="tender_refund")
            if approval is None:
                raise AssertionError(f"the supervisor's approval was refused: {signin.outcome}")
            grant = self.grants[txn_id] = approval.grant
            self.approvals += 1
        return self._tracked(self.till.tender_refund, account_id, amount_minor, txn_id=txn_id,
                             original_txn_id=original_txn_id, method=method, approval_grant=grant)

    def hold(self, account_id, amount_minor, *, txn_id, ttl_s):
        return self._tracked(self.till.hold, account_id, amount_minor, txn_id=txn_id, ttl_s=ttl_s)

    def capture(self, hold_txn_id, amount_minor, *, txn_id, account_id=None):
        return self._tracked(self.till.capture, hold_txn_id, amount_minor, txn_id=txn_id, account_id=account_id)

    def void(self, hold_txn_id, *, txn_id, account_id=None):
        return self._tracked(self.till.void, hold_txn_id, txn_id=txn_id, account_id=account_id)

    def deduct_many(self, items):
        """A till's batch: its outbox sent one charge after the other; each item's answer
        (or exception) in order. Meanwhile `batch_gateway` says which gateway (index) the
        batch is going to, for `GatewayFaults` to kill that one mid-batch."""
        out = []
        try:
            for item in items:
                if self.batch_gateway is not None:
                    self.batch_gateway.value = self.order[self.till._current]
                try:
                    out.append(self._tracked(self.till.deduct, item.account_id, item.amount_minor,
                                             txn_id=item.txn_id, in_batch=True))
                except Exception as exc:          # noqa: BLE001 - judged like every answer
                    out.append(exc)
        finally:
            if self.batch_gateway is not None:
                self.batch_gateway.value = -1
        return out

    # -- the back office, on Redis
    def freeze(self, account_id, *, txn_id):
        return self.admin.freeze(account_id, txn_id=txn_id)

    def unfreeze(self, account_id, *, txn_id):
        return self.admin.unfreeze(account_id, txn_id=txn_id)

    def expire_holds(self, account_id):
        return self.admin.expire_holds(account_id)


class GatewayFaults(threading.Thread):
    """SIGKILLs of the gateways while the tills run, from a seeded schedule: `kills` of a
    gateway restarted at once (about 1 s down while it starts), each in the middle of a
    till's batch when one comes within 3 s (`batches`: one shared Value per till, the index
    of the gateway its batch is going to, -1 when none), then one gateway kept down for
    `down_s` (every till must use the other). Never both at once."""

    def __init__(self, gateways: list[GatewayProcess], rng: random.Random, *, kills: int, down_s: float,
                 duration_s: float, log: list[str], batches: list | None = None):
        super().__init__(daemon=True)
        self.gateways, self.rng, self.down_s, self.log = gateways, rng, down_s, log
        self.batches = batches or []
        self.plan = sorted((self.rng.uniform(0.1, 0.35) * duration_s, self.rng.randrange(len(gateways)), 0.0)
                           for _ in range(kills))
        if down_s:
            self.plan.append((0.6 * duration_s, self.rng.randrange(len(gateways)), down_s))
        self.done = threading.Event()
        self.kills = 0

    def run(self) -> None:
        start = time.monotonic()
        for at, index, down_s in self.plan:
            if self.done.wait(max(0.0, at - (time.monotonic() - start))):
                return
            where = ""
            if not down_s:
                index, where = self.batch_target(index)
            gw = self.gateways[index]
            gw.kill()                              # SIGKILL: requests in flight get no answer
            self.kills += 1
            t = time.monotonic() - start
            self.done.wait(down_s)
            try:
                gw.start()
            except Exception as exc:               # noqa: BLE001 - logged; the run goes on with one
                self.log.append(f"{t:.2f}s gateway {index + 1} did not restart: {exc}")
                continue
            self.log.append(f"{t:.2f}s gateway {index + 1} SIGKILL{where}, back after "
                            f"{time.monotonic() - start - t:.1f}s")

    def batch_target(self, index: int) -> tuple[int, str]:
        """The gateway a till's batch is going to (waiting up to 3 s for one), else `index`."""
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and not self.done.is_set():
            for till, value in enumerate(self.batches):
                target = value.value
                if target >= 0:
                    return target, f" mid-batch of c{till}"
            time.sleep(0.005)
        return index, ""
