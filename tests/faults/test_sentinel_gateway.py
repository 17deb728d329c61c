"""A Sentinel failover behind the ledger gateway (issue 24): a till (`GatewayLedger`, its
enrolled terminal, a signed-in cashier) charges through a real gateway process whose Redis
URL is the Sentinel URL (`?wait_replicas=1`); the primary is SIGKILLed mid-charges and
the sentinels promote a replica while the till goes on. The gateway is not restarted: it
must follow the new primary by itself. The till retries every unknown outcome with the
same txn id (its outbox) and replays some decided ones; a fault proxy between till and
gateway drops some replies after the gateway answered.

Afterwards, on the new primary: every txn id the till sent is journaled at most once,
every APPLIED answer is journaled (wait_replicas=1: nothing acknowledged was lost), every
replay answered what the first answer said, and each balance is its journal's sum.
"""
from __future__ import annotations

import random
import signal
import threading
import time
from collections import Counter

import pytest

from core import Ledger, LedgerUnavailable, Status
from core.cashiers import CashierRegistry
from gateway.client import GatewayLedger
from core.terminals import TerminalRegistry
from tests.gateway.conftest import GatewayProcess
from tests.properties.workload import RobustProxy
from tests.support.servers import RedisSentinelServers, wait_for
from core.journal_codec import read_range

pytestmark = pytest.mark.slow
ACCOUNTS = [f"G-{i}" for i in range(4)]
INITIAL_MINOR = 1_000_000


def test_gateway_on_sentinel_applies_each_txn_once_across_a_failover():
    rng = random.Random(24)
    with RedisSentinelServers(replicas=2) as deploy:
        admin = Ledger.from_url(deploy.url())
        admin.init()
        for a in ACCOUNTS:
            admin.open_account(a, txn_id=f"open-{a}", initial_minor=INITIAL_MINOR)
        CashierRegistry(admin.client).add("k1", "Li Na", "2345", can_top_up=True)
        token = TerminalRegistry(admin.client).enroll("T1")
        # the library reaches the replicas by replication: a promoted one must have it
        wait_for(lambda: all(admin.scripts.loaded_on(deploy.node_client(n)) for n in deploy.replicas()), 30,
                 "the function library on every replica")
        gateway = GatewayProcess(deploy.url(query="wait_replicas=1"), "--call-deadline-s", "1.0").start()
        # replies lost between till and gateway after the gateway decided: unknown outcomes
        # of applied charges too, not only of those Redis never saw
        proxy = RobustProxy(gateway.port, drop_reply_probability=0.05, seed=24).start()
        till = GatewayLedger([f"http://127.0.0.1:{proxy.port}"], token, timeout_s=3.0)
        try:
            assert till.sign_in("k1", "2345").ok
            sent: dict[str, tuple] = {}          # txn id -> (method, account, amount)
            answers: dict[str, object] = {}      # txn id -> first answer
            seen = Counter()
            killed: dict = {}

            def kill_primary():
                wait_for(lambda: seen["applied"] >= 60, 120, "charges before the kill")
                old = deploy.primary()
                old.kill(signal.SIGKILL)
                killed.update(port=old.port, at=time.monotonic(), applied=seen["applied"])

            killer = threading.Thread(target=kill_primary, daemon=True)
            killer.start()

            def send(txn: str) -> None:
                method, account, amount = sent[txn]
                give_up = time.monotonic() + 90
                while True:
                    try:
                        answer = getattr(till, method)(account, amount, txn_id=txn)
                        break
                    except LedgerUnavailable as exc:     # unknown outcome: the same txn id again
                        assert exc.txn_id == txn
                        seen["unknown"] += 1
                        seen["switching"] += bool(getattr(exc, "switching", False))
                        assert time.monotonic() < give_up, f"{txn} never answered"
                        time.sleep(0.05)
                first = answers.setdefault(txn, answer)
                if first is not answer:
                    seen["replays"] += 1
                    assert answer.replayed and (answer.status, answer.balance_minor) == \
                        (first.status, first.balance_minor), (txn, first, answer)
                elif answer.status is Status.APPLIED:
                    seen["applied"] += 1
                    if killed:
                        seen["applied_after_kill"] += 1

            i = 0
            while not killed or seen["applied_after_kill"] < 60:
                if answers and rng.random() < 0.15:
                    send(rng.choice(sorted(answers)))            # a lost reply: the request again
                    continue
                method = "credit" if rng.random() < 0.2 else "deduct"
                sent[f"T1-{method[0]}-{i}"] = (method, rng.choice(ACCOUNTS), rng.randint(1, 5_000))
                send(f"T1-{method[0]}-{i}")
                i += 1
            killer.join(5)
            new = deploy.wait_for_failover(killed["port"])
            assert new.port != killed["port"]
        finally:
            till.close()
            proxy.close()
            gateway.stop()

        ledger = Ledger.from_url(deploy.url(), auto_init=False)
        journal = [f for part in ledger.partitions for _, f in read_range(ledger.client, part.journal)]
        txns = Counter(f["txn"] for f in journal if f["txn"].startswith("T1-"))     # the till's
        doubled = {t: n for t, n in txns.items() if n > 1}
        assert not doubled, f"applied twice: {doubled}"
        applied = {t for t, r in answers.items() if r.status is Status.APPLIED}
        assert applied == set(txns), (f"acknowledged but not journaled: {sorted(applied - set(txns))[:10]}; "
                                      f"journaled but answered otherwise: {sorted(set(txns) - applied)[:10]}")
        for a in ACCOUNTS:
            assert ledger.balance(a) == sum(int(f["amt"]) for f in journal if f["acct"] == a) >= 0
        print({"sent": len(sent), "applied": len(applied), **seen, "killed_after": killed["applied"],
               "replies_dropped": proxy.dropped_replies})
        # the primary was killed mid-charges (the gateway said "switching"), replies were lost
        assert seen["switching"] > 0 and proxy.dropped_replies > 0 and seen["replays"] > 0, seen
        ledger.close()
        admin.close()
