"""The seeded, fault-injected, multi-process history of issue 12.

`run_history(seed, ...)` starts a private redis-server (AOF, appendfsync always) behind
a fault proxy on a copy of `pumped_template()` (shared accounts, some at balances of
10^14 and more, one just under MAX_BALANCE_MINOR), runs concurrent client processes that send
random requests of every kind the ledger has (`client_main`), and meanwhile injects
faults from a seeded schedule: replies dropped after Redis ran the command (the proxy),
`CLIENT KILL`, `DEBUG SLEEP` stalls, and a SIGKILL of Redis restarted from its AOF.
Every client retries an unknown outcome with the same txn id and keeps every answer.
Afterwards it journals the expired holds, runs `reconcile-service run --once` into a
fresh PostgreSQL database, runs `reconcile_service.verify`, and hands everything to the
invariant checks of `history.py`. Nothing here fakes Redis or PostgreSQL.

`run_history(..., via_gateway=True)` runs the same clients as tills through two gateway
processes in front of the fault proxy, gateways SIGKILLed meanwhile (`via_gateway.py`).
"""
from __future__ import annotations

import atexit
import hashlib
import json
import multiprocessing as mp
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import redis

from core import Ledger, RetryPolicy
from core.sales import TENDER_METHODS, decode_tenders, encode_tenders
from core.validation import MAX_AMOUNT_MINOR, MAX_BALANCE_MINOR
from tests.properties.history import (Request, Violation, check, check_database, execute, execute_many,
                                      read_journal, record)
from tests.support.proxy import FaultyProxy
from tests.support.servers import RedisServer, wait_for

ROOT = Path(__file__).resolve().parents[2]
SHARED = [f"S-{i}" for i in range(5)]
WHALES = ["W-0", "W-1"]          # pumped to 10^14 and more: huge amounts and balances
NEAR_MAX = "M-0"                 # pumped to just under MAX_BALANCE_MINOR (some seeds)
WHALE_MINOR = 100_000_000_000_000          # 10^14
SHARED_POOL = [f"shared-{i}" for i in range(12)]   # txn ids every client sends for its own requests


class RobustProxy(FaultyProxy):
    """The fault proxy, surviving an upstream that is down (Redis being restarted): the
    client's connection is closed (it sees a reset and retries) instead of the accept
    loop dying. Also counts the connections it cut."""

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=2)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()


# ---------------------------------------------------------------- the client processes

@dataclass
class ClientState:
    name: str
    rng: random.Random
    seq: int = 0
    records: list = field(default_factory=list)
    sent: list = field(default_factory=list)              # every Request sent (for replays / reuse)
    charges: list = field(default_factory=list)           # (account, txn, amount) applied deductions/captures
    holds: list = field(default_factory=list)             # (account, txn, amount, ttl) applied holds
    planned_holds: list = field(default_factory=list)     # hold ids captured before they exist
    short_holds: list = field(default_factory=list)       # holds left to expire (their hx- id is reused)
    own_accounts: list = field(default_factory=list)
    duplicates: list = field(default_factory=list)        # txn ids re-sent after their retention
    till: bool = False                                    # a till through the gateways (via_gateway.py)
    sales: list = field(default_factory=list)             # (account, txn, tenders) applied split sales


def _as_till(st: ClientState, req: Request) -> Request:
    """The request as a till sends it: its txn id in its terminal's namespace ('<terminal
    id>-', the client's name), an account opened without a balance (via_gateway.py)."""
    if not st.till:
        return req
    if not req.txn_id.startswith(f"{st.name}-"):
        req = replace(req, txn_id=f"{st.name}-{req.txn_id}"[:64])
    if req.op == "open" and req.amount_minor:
        req = replace(req, amount_minor=0)
    return req


def _send(ledger, st: ClientState, req: Request, *, max_attempts: int = 12, remember: bool = True):
    """Send until the ledger answers (an unknown outcome is retried with the same txn id).
    `remember`: may be replayed or reused later (not a request of a short-retention ledger)."""
    req = _as_till(st, req)
    outcome = None
    for _ in range(max_attempts):
        outcome = execute(ledger, req)
        st.records.append(record(st.name, st.seq, req, outcome))
        st.seq += 1
        if type(outcome).__name__ not in ("LedgerUnavailable", "LedgerNotInitialized"):
            break
        time.sleep(0.2)
    if remember:
        st.sent.append(req)
    if getattr(outcome, "applied", False) and not outcome.replayed:
        if req.op in ("deduct", "capture", "sale"):
            st.charges.append((req.account_id or outcome.account_id, req.txn_id, req.amount_minor))
        if req.op == "sale":
            st.sales.append((req.account_id, req.txn_id, decode_tenders(req.tenders)))
        if req.op == "hold":
            st.holds.append((req.account_id, req.txn_id, req.amount_minor, req.ttl_s))
    return outcome


def _send_many(ledger, st: ClientState, reqs: list[Request]) -> None:
    reqs = [_as_till(st, r) for r in reqs]
    for _ in range(12):
        outcomes = execute_many(ledger, reqs)
        for req, out in zip(reqs, outcomes):
            st.records.append(record(st.name, st.seq, req, out, via="deduct_many"))
            st.seq += 1
        if not any(type(o).__name__ == "LedgerUnavailable" for o in outcomes):
            break
        time.sleep(0.2)
    for req, out in zip(reqs, outcomes):
        st.sent.append(req)
        if getattr(out, "applied", False) and not out.replayed:
            st.charges.append((req.account_id, req.txn_id, req.amount_minor))


def _amount(rng: random.Random, account: str) -> int:
    if account in WHALES or account == NEAR_MAX:
        return rng.choice([MAX_AMOUNT_MINOR, rng.randint(10 ** 9, MAX_AMOUNT_MINOR), rng.randint(1, 10 ** 6)])
    return rng.choice([rng.randint(1, 3000), rng.randint(1, 300), rng.randint(3000, 60_000)])


def _account(rng: random.Random, st: ClientState) -> str:
    pool = SHARED + WHALES + st.own_accounts + [NEAR_MAX, "NOPE-1"]
    return rng.choice(pool)


def _random_request(rng: random.Random, st: ClientState) -> Request:
    """A fresh random request of any kind (used for new txn ids and for reusing old ones)."""
    acct = _account(rng, st)
    txn = f"{st.name}-{st.seq}-{rng.randint(0, 10 ** 6)}"
    roll = rng.random()
    if roll < 0.3:
        return Request("deduct", txn, acct, _amount(rng, acct))
    if roll < 0.5:
        return Request("credit", txn, acct, _amount(rng, acct))
    if roll < 0.6 and st.charges:
        a, orig, amt = rng.choice(st.charges)
        return Request("refund", txn, a, rng.choice([amt, max(1, amt // 3), amt + 1, rng.randint(1, amt)]), orig)
    if roll < 0.75:
        return Request("hold", txn, acct, _amount(rng, acct), ttl_s=rng.choice([1, 2, 3, 60]))
    if roll < 0.85 and st.holds:
        a, h, amt, _ = rng.choice(st.holds)
        return Request("capture", txn, rng.choice([a, None]), rng.choice([amt, max(1, amt // 2), amt + 1]), h)
    if roll < 0.9 and st.holds:
        a, h, _, _ = rng.choice(st.holds)
        return Request("void", txn, rng.choice([a, None]), 0, h)
    if roll < 0.95:                                     # a split-tender sale (issue 31)
        tenders = {m: rng.randint(1, 5_000) for m in rng.sample(TENDER_METHODS, rng.randint(1, 2))}
        card = _amount(rng, acct)
        off = rng.choice([0, 0, 0, 0, 1])               # now and then a total that does not add up
        return Request("sale", txn, acct, card, tenders=encode_tenders(tenders),
                       total_minor=card + sum(tenders.values()) + off)
    if roll < 0.97 and st.sales:                        # one of its tenders given back
        a, sale, tenders = rng.choice(st.sales)
        method = rng.choice(list(tenders) + ["other"])
        paid = tenders.get(method, 1)
        return Request("tender_refund", txn, a, rng.choice([paid, max(1, paid // 2), paid + 1]), sale,
                       tenders=method)
    return Request(rng.choice(["freeze", "unfreeze"]), txn, acct)


def _step(ledger, st: ClientState) -> None:
    rng = st.rng
    roll = rng.random()
    if roll < 0.10 and st.sent:                         # a replay of an earlier request, same txn id
        _send(ledger, st, rng.choice(st.sent))
        return
    if roll < 0.16:                                     # a txn id reused for another request / account
        old = rng.choice([r.txn_id for r in st.sent] or SHARED_POOL) if rng.random() < 0.5 else rng.choice(SHARED_POOL)
        new = _random_request(rng, st)
        _send(ledger, st, Request(new.op, old, new.account_id, new.amount_minor, new.ref, new.ttl_s,
                                  tenders=new.tenders, total_minor=new.total_minor))
        return
    if roll < 0.24:                                     # a till's batch
        reqs = [Request("deduct", f"{st.name}-{st.seq}-b{k}", acct, _amount(rng, acct))
                for k, acct in enumerate(_account(rng, st) for _ in range(rng.randint(2, 6)))]
        if st.sent and rng.random() < 0.3:              # a retried item inside a new batch
            old = rng.choice(st.sent)
            if old.op == "deduct":
                reqs.append(old)
        _send_many(ledger, st, reqs)
        return
    if roll < 0.27:                                     # a capture (no account id) of a hold not placed yet
        hold_id = f"{st.name}-ph-{st.seq}"
        req = Request("capture", f"{st.name}-pc-{st.seq}", None, rng.randint(1, 500), hold_id)
        _send(ledger, st, req)
        st.planned_holds.append((hold_id, req))
        return
    if roll < 0.30 and st.planned_holds:                # ... the hold appears, then the capture is retried
        hold_id, capture = st.planned_holds.pop(0)
        _send(ledger, st, Request("hold", hold_id, rng.choice(SHARED), 1000, ttl_s=60))
        _send(ledger, st, capture)
        return
    if roll < 0.33:                                     # a hold left to expire, and its expiry's hx- id
        acct = rng.choice(SHARED + st.own_accounts)
        hold_id = f"{st.name}-sh-{st.seq}"
        out = _send(ledger, st, Request("hold", hold_id, acct, rng.randint(1, 200), ttl_s=1))
        if getattr(out, "applied", False):
            st.short_holds.append(hold_id)
            hx = "hx-" + hashlib.sha1(hold_id.encode()).hexdigest()
            _send(ledger, st, Request("deduct", hx, acct, rng.randint(1, 50)))
        return
    if roll < 0.35:                                     # journal released holds (the sweeper does it too)
        acct = rng.choice(SHARED + WHALES + st.own_accounts)
        try:
            ledger.expire_holds(acct)
        except Exception as exc:                        # noqa: BLE001 - judged like every answer
            if type(exc).__name__ not in ("LedgerUnavailable", "InvalidRequest"):
                st.records.append(record(st.name, st.seq, Request("hold", "expire_holds", acct), exc))
        return
    if roll < 0.37:                                     # open (own new account, or an existing id again)
        if rng.random() < 0.6 or not st.own_accounts:
            acct = f"{st.name}-A{len(st.own_accounts)}"
            if getattr(_send(ledger, st, Request("open", f"open-{acct}", acct, rng.randint(0, 50_000))), "applied", False):
                st.own_accounts.append(acct)
        else:
            _send(ledger, st, Request("open", f"{st.name}-o-{st.seq}", rng.choice(SHARED), 10))
        return
    _send(ledger, st, _random_request(rng, st))


def late_retry(url: str, st: ClientState) -> None:
    """A retry after the txn id's record expired (retention 1 s): documented to apply again
    (reconcile then reverses it with a compensating credit). Then a client request under the
    compensation's txn id `cmp:<partition>:<journal id>`, which it learned from the answer."""
    short = Ledger.from_url(url, retention_s=1, socket_timeout_s=2.0, retry=RetryPolicy(deadline_s=10.0))
    account = f"{st.name}-LATE"           # its own account: nobody freezes or drains it
    _send(short, st, Request("open", f"open-{account}", account, 1000), remember=False)
    txn = f"{st.name}-late"
    req = Request("deduct", txn, account, 7, retention_s=1)
    first = _send(short, st, req, remember=False)
    if not getattr(first, "applied", False):
        return
    wait_for(lambda: short.client.exists(short.schema.partition_of(account).txn(txn)) == 0, 10,
             "the record's retention to pass")
    second = _send(short, st, req, remember=False)
    short.close()
    # applied again = another journal entry than the first; `replayed` alone misses the
    # case where the second application's reply was dropped and its retry replayed it
    if getattr(second, "applied", False) and second.journal_id != first.journal_id:
        st.duplicates.append(txn)
        part = 0
        _send(Ledger.from_url(url, socket_timeout_s=2.0), st,
              Request("deduct", f"cmp:{part}:{second.journal_id}", SHARED[1], 3))


def client_main(url: str, name: str, seed: int, ops: int, duration_s: float, out_path: str,
                do_late_retry: bool, start, gateway: dict | None = None) -> None:
    """One client process. `gateway`: a till (urls, token, admin_url) whose terminal id is
    `name`, sending through the gateways (via_gateway.py); else a core Ledger on `url`."""
    if gateway:
        from tests.properties.via_gateway import TillLedger
        ledger = TillLedger(gateway, name)
        ledger.sign_in()
    else:
        ledger = Ledger.from_url(url, socket_timeout_s=0.25, retry=RetryPolicy(deadline_s=2.0))
    st = ClientState(name, random.Random(seed), till=bool(gateway))
    start.wait(60)                      # every client imported and connected: the faults start now
    deadline = time.monotonic() + duration_s
    if do_late_retry and not gateway:
        late_retry(url, st)
    for _ in range(ops):
        if time.monotonic() > deadline:
            break
        _step(ledger, st)
    Path(out_path).write_text(json.dumps({"records": st.records, "duplicates": st.duplicates,
                                          "approvals": getattr(ledger, "approvals", 0),
                                          "switches": getattr(ledger, "switches", 0),
                                          "batch_switches": getattr(ledger, "batch_switches", 0)}))


# ---------------------------------------------------------------- the faults

class Faults(threading.Thread):
    """A seeded schedule of faults against the real Redis while the clients run."""

    def __init__(self, server_box: dict, rng: random.Random, *, kills: int, duration_s: float,
                 make_server):
        super().__init__(daemon=True)
        self.box, self.rng, self.kills, self.duration_s = server_box, rng, kills, duration_s
        self.make_server = make_server
        self.done = threading.Event()
        self.log: list[str] = []

    def run(self) -> None:
        start = time.monotonic()
        kill_at = sorted(self.rng.uniform(0.25, 0.75) * self.duration_s for _ in range(self.kills))
        while not self.done.is_set():
            elapsed = time.monotonic() - start
            try:
                client = redis.Redis(port=self.box["server"].port, socket_timeout=5)
                if kill_at and elapsed >= kill_at[0]:
                    kill_at.pop(0)
                    self.box["server"].kill(signal.SIGKILL)     # acknowledged writes must survive
                    self.box["server"] = self.make_server().start()
                    self.log.append(f"{elapsed:.2f}s SIGKILL + AOF restart")
                else:
                    roll = self.rng.random()
                    if roll < 0.45:
                        stall = self.rng.choice([0.1, 0.3, 0.6])
                        client.execute_command("DEBUG", "SLEEP", stall)
                        self.log.append(f"{elapsed:.2f}s DEBUG SLEEP {stall}")
                    elif roll < 0.75:
                        killed = client.client_kill_filter(_type="normal", skipme=True)
                        self.log.append(f"{elapsed:.2f}s CLIENT KILL ({killed})")
                client.close()
            except redis.RedisError as exc:
                self.log.append(f"{elapsed:.2f}s fault skipped: {exc}")
            self.done.wait(self.rng.uniform(0.2, 0.7))


# ---------------------------------------------------------------- one run

@dataclass
class HistoryReport:
    seed: int
    violations: list[Violation]
    records: int
    journal_entries: int
    faults: list[str]
    dropped_replies: int
    replayed_answers: int
    unavailable_answers: int
    reconcile_exit: int
    verify: dict
    client_answers: int = 0                  # records of the client processes (not the setup's)
    via_gateway: bool = False
    gateway_kills: int = 0
    refund_approvals: int = 0
    gateway_dropped_replies: int = 0         # HTTP replies dropped between till and gateway
    gateway_switches: int = 0                # answers from another gateway than the till's last one
    batch_switches: int = 0                  # ... in the middle of a till's batch

    def summary(self, limit: int = 25) -> str:
        lines = [f"seed {self.seed}: {len(self.violations)} violation(s), {self.records} answers "
                 f"({self.client_answers} of the clients), "
                 f"{self.journal_entries} journal entries, {self.replayed_answers} replayed, "
                 f"{self.unavailable_answers} unavailable, {self.dropped_replies} replies dropped, "
                 f"reconcile exit {self.reconcile_exit}, faults: {'; '.join(self.faults[:12])}"]
        if self.via_gateway:
            lines.append(f"through 2 gateways: {self.gateway_kills} gateway SIGKILLs, "
                         f"{self.gateway_dropped_replies} HTTP replies dropped, {self.gateway_switches} "
                         f"answers from the other gateway ({self.batch_switches} mid-batch), "
                         f"{self.refund_approvals} refund approvals; "
                         + "; ".join(f for f in self.faults if "gateway" in f))
        by_inv: dict[str, int] = {}
        for x in self.violations:
            by_inv[x.invariant] = by_inv.get(x.invariant, 0) + 1
        lines.append(f"violated invariants: {by_inv}")
        shown: dict[str, int] = {}
        for x in self.violations:            # a few examples of each invariant
            shown[x.invariant] = shown.get(x.invariant, 0) + 1
            if shown[x.invariant] <= max(1, limit // max(1, len(by_inv))):
                lines.append(str(x)[:700])
        return "\n".join(lines)


def _pump(ledger: Ledger, account: str, target_minor: int, tag: str, records: list) -> None:
    """Credits of the largest amount one operation allows until the balance reaches
    target (each recorded like every other request)."""
    i = 0
    while True:
        missing = target_minor - ledger.balance(account)
        if missing <= 0:
            return
        req = Request("credit", f"pump-{tag}-{i}", account, min(MAX_AMOUNT_MINOR, missing))
        records.append(record("setup", len(records), req, execute(ledger, req)))
        i += 1


def _redis_state(ledger: Ledger) -> tuple[dict, dict]:
    ids = [a for p in ledger.partitions for a in ledger.account_ids(p)]
    accounts = {a: (i.balance_minor, i.status) for a, i in ledger.accounts(ids).items() if i is not None}
    reads = {}
    for a in ids:
        t0 = _redis_ms(ledger)
        balance, available = ledger.balances(a)
        reads[a] = (balance, available, t0, _redis_ms(ledger))
    return accounts, reads


def _redis_ms(ledger: Ledger) -> int:
    s, us = ledger.client.time()
    return s * 1000 + us // 1000


AOF = ("--appendonly", "yes", "--appendfsync", "always", "--enable-debug-command", "local")
_TEMPLATE: dict = {}


def pumped_template() -> tuple[Path, list[dict]]:
    """The data directory (AOF) of a Redis holding the shared accounts, the whales
    above and just below 10^14 and an account just under MAX_BALANCE_MINOR, and the
    records of the requests that made them. Built once per test session (about 12,000
    credits: pumping an account to 10^15 takes 10^4 of the largest operations); each
    history starts a server on a copy."""
    if "dir" not in _TEMPLATE:
        directory = Path(tempfile.mkdtemp(prefix="history-template-"))
        atexit.register(shutil.rmtree, directory, True)
        server = RedisServer(*AOF, directory=directory).start()
        try:
            ledger = Ledger.from_url(server.url)
            ledger.init()
            records: list[dict] = []
            for a in SHARED + WHALES + [NEAR_MAX]:
                req = Request("open", f"open-{a}", a, 500_000)
                records.append(record("setup", len(records), req, execute(ledger, req)))
            # W-0 above 10^14 from the start, W-1 just below (its credits cross 10^14)
            for w, target in zip(WHALES, (WHALE_MINOR + 7_654_321, WHALE_MINOR - MAX_AMOUNT_MINOR // 2)):
                _pump(ledger, w, target, w, records)
            _pump(ledger, NEAR_MAX, MAX_BALANCE_MINOR - 2 * MAX_AMOUNT_MINOR, NEAR_MAX, records)
            ledger.close()
        finally:
            server.stop()                # SIGTERM: the AOF is complete on disk
        (directory / "redis.log").unlink(missing_ok=True)
        _TEMPLATE.update(dir=directory, records=records)
    return _TEMPLATE["dir"], list(_TEMPLATE["records"])


def start_from_template(redis_dir: Path) -> tuple[RedisServer, list[dict]]:
    template, records = pumped_template()
    shutil.copytree(template, redis_dir)
    return RedisServer(*AOF, directory=redis_dir).start(), records


def run_history(seed: int, pg_url: str, tmp: Path, *, clients: int = 3, ops: int = 5000,
                duration_s: float = 6.0, kills: int = 1, drop_reply_probability: float = 0.02,
                via_gateway: bool = False, gateway_kills: int = 1, gateway_down_s: float = 2.0,
                gateway_drop_reply_probability: float = 0.02) -> HistoryReport:
    """`via_gateway`: the clients are tills sending through two gateway processes in front
    of the fault proxy (via_gateway.py), `gateway_kills` SIGKILLs of a gateway restarted at
    once and one kept down `gateway_down_s`, HTTP replies dropped in front of each."""
    redis_dir = tmp / "redis"
    first, records = start_from_template(redis_dir)
    port = first.port
    box = {"server": first}
    proxy = RobustProxy(port, drop_reply_probability=drop_reply_probability, seed=seed).start()
    gateways, fronts, gateway_faults = [], [], None
    counts = {"approvals": 0, "switches": 0, "batch_switches": 0}
    try:
        faults = Faults(box, random.Random(seed * 7 + 1), kills=kills, duration_s=duration_s,
                        make_server=lambda: RedisServer(*AOF, port=port, directory=redis_dir))
        ctx = mp.get_context("spawn")
        outs = [tmp / f"client-{i}.json" for i in range(clients)]
        start = ctx.Barrier(clients + 1)
        names = [f"c{i}" for i in range(clients)]
        tills: list[dict | None] = [None] * clients
        if via_gateway:
            from tests.properties import via_gateway as vg
            tokens = vg.enroll_tills(first.url, names)
            gateways = vg.start_gateways(proxy.url, tmp)
            fronts = [RobustProxy(gw.port, drop_reply_probability=gateway_drop_reply_probability,
                                  seed=seed * 13 + k).start() for k, gw in enumerate(gateways)]
            urls = [f"http://127.0.0.1:{f.port}" for f in fronts]
            # both gateways in every till's list, half of the tills starting at each
            order = [[0, 1], [1, 0]]
            batches = [ctx.Value("i", -1, lock=False) for _ in names]
            tills = [{"urls": [urls[k] for k in order[i % 2]], "order": order[i % 2], "token": tokens[n],
                      "admin_url": proxy.url, "batch_gateway": batches[i]} for i, n in enumerate(names)]
            gateway_faults = vg.GatewayFaults(gateways, random.Random(seed * 11 + 3), kills=gateway_kills,
                                              down_s=gateway_down_s, duration_s=duration_s, log=faults.log,
                                              batches=batches)
        procs = [ctx.Process(target=client_main, args=(proxy.url, names[i], seed * 100 + i, ops, duration_s,
                                                       str(outs[i]), i == 0, start, tills[i]))
                 for i in range(clients)]
        for p in procs:
            p.start()
        start.wait(120)
        faults.start()
        if gateway_faults:
            gateway_faults.start()
        for p in procs:
            p.join(duration_s + 120)
        faults.done.set()
        faults.join(30)
        if gateway_faults:
            gateway_faults.done.set()
            gateway_faults.join(60)
        for p in procs:
            if p.is_alive():
                p.kill()
                raise AssertionError(f"seed {seed}: a client process hung")
            assert p.exitcode == 0, f"seed {seed}: a client process failed (exit {p.exitcode})"
        duplicates = set()
        setup_records = len(records)
        for out in outs:
            data = json.loads(out.read_text())
            records += data["records"]
            duplicates |= set(data["duplicates"])
            for name in counts:
                counts[name] += data.get(name, 0)

        url = f"redis://127.0.0.1:{port}/0"
        ledger = Ledger.from_url(url)
        # every hold left to expire has expired: journal each release now (deterministic)
        now_ms = _redis_ms(ledger)
        latest = max([int(e["exp"]) for e in read_journal(ledger.client, _streams(ledger))
                      if e.get("kind") == "hold" and str(e.get("exp", "")).isdigit()
                      and int(e["exp"]) < now_ms + 10_000] or [0])
        wait_for(lambda: _redis_ms(ledger) > latest + 10, 30, "short holds to expire")
        for p in ledger.partitions:
            for a in list(ledger.account_ids(p)):
                while ledger.expire_holds(a) > 0:
                    pass
        env = dict(os.environ, CASHIER_REDIS_URL=url, CASHIER_DATABASE_URL=pg_url, PYTHONPATH=str(ROOT))
        run = subprocess.run([sys.executable, "-m", "reconcile_service", "run", "--once", "--metrics-port", "0",
                              "--log-format", "text"], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=180)
        (tmp / "reconcile.log").write_text(run.stdout + run.stderr)
        from reconcile_service.db import make_engine
        from reconcile_service.verify import verify
        engine = make_engine(pg_url)
        try:
            report = verify(ledger, engine)
            journal = read_journal(ledger.client, _streams(ledger))
            accounts, reads = _redis_state(ledger)
            violations = check(records, journal, accounts, available_reads=reads, expected_duplicates=duplicates)
            violations += check_database(engine, journal, accounts, expected_duplicates=duplicates)
        finally:
            engine.dispose()
        if run.returncode != 0:
            violations.append(Violation("reconcile_clean", f"reconcile-service run --once exited "
                                        f"{run.returncode}", {"log_tail": (run.stdout + run.stderr)[-1500:]}))
        for gw in gateways:       # a gateway's own failure (HTTP 500) reaches a till as "unavailable"
            errors = [line for line in gw.log_path.read_text(errors="replace").splitlines()
                      if " ERROR " in line or line.startswith("Traceback")]
            if errors:
                violations.append(Violation("gateway_no_internal_error", f"{gw.log_path.name}: {len(errors)} "
                                            "error line(s)", {"first": errors[:5]}))
        if not report.ok:
            violations += [Violation("verify_clean", f"{x.kind} {x.account_id}: {x.detail}"[:400])
                           for x in report.violations]
        ledger.close()
        return HistoryReport(seed, violations, len(records), len(journal), faults.log,
                             proxy.dropped_replies + sum(f.dropped_replies for f in fronts),
                             sum(1 for r in records if r["answer"].get("replayed")),
                             sum(1 for r in records if r["answer"]["type"] == "unavailable"),
                             run.returncode, report.as_dict()["checked"], len(records) - setup_records,
                             via_gateway, gateway_faults.kills if gateway_faults else 0, counts["approvals"],
                             sum(f.dropped_replies for f in fronts), counts["switches"], counts["batch_switches"])
    finally:
        for f in fronts:
            f.close()
        for gw in gateways:
            gw.stop()
        proxy.close()
        box["server"].cleanup()


def _streams(ledger: Ledger) -> list[str]:
    return [p.journal for p in ledger.partitions]
