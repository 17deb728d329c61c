"""Hypothesis: random charges of members who have a payment PIN, through the gateway
behind a fault proxy that drops replies after the gateway decided; each charge is sent
with the right PIN, a wrong one or none, an unanswered one is re-sent with the same txn id
and body (the outbox), a decided one is retried with the same txn id and no PIN, and a
supervisor resets a locked PIN now and then. Afterwards, on Redis: each txn id is
journaled at most once, nothing above the threshold was applied without a send that
carried the right PIN, every retry answered the first decision, and every balance is the
opening minus the charges applied."""
from __future__ import annotations

import uuid
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from core import LedgerUnavailable
from core.result import Status
from gateway.wire import GatewayRefused
from tests.gateway.conftest import SUPERVISOR, SUPERVISOR_PIN, make_client
from tests.properties.workload import RobustProxy

pytestmark = pytest.mark.slow

OPENING_MINOR = 200_000
THRESHOLD = 3_000
ACCOUNTS = 2
RIGHT, WRONG = "802461", "111111"


def test_member_pins_under_faults(gateway, shop, till):
    proxy = RobustProxy(gateway.port, seed=11).start()
    client = make_client(gateway, shop.tokens["T1"], sign_in=None, urls=[f"http://127.0.0.1:{proxy.port}"],
                         timeout_s=2.0)
    client.session = till.session
    direct = till
    seen = Counter()
    assert shop.set_member_pin_threshold(THRESHOLD, txn_id="adm-mpin-prop").applied

    class Till(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            run = uuid.uuid4().hex[:8]
            self.accounts = [f"Q{run}{i}" for i in range(ACCOUNTS)]
            for a in self.accounts:
                assert direct.open_account(a, txn_id=f"T1-o-{a}").applied
                assert direct.credit(a, OPENING_MINOR, txn_id=f"T1-c-{a}").applied
                direct.set_member_pin(a, RIGHT, RIGHT)
            self.seq = 0
            self.requests: dict[str, tuple] = {}        # txn id -> (account, amount)
            self.pins_sent: dict[str, set] = {}         # txn id -> the PINs its sends carried
            self.pending: dict[str, str | None] = {}    # txn id -> the PIN of the unanswered send
            self.decided: dict[str, object] = {}        # txn id -> first decision (a Result core stored)
            # every history starts with replies being dropped (a rule changes it): the faults the
            # final check asks for happen in every run, not only when hypothesis picks them
            proxy.drop_reply_probability = 0.3

        def _send(self, txn_id: str, pin: str | None):
            account, amount = self.requests[txn_id]
            self.pins_sent.setdefault(txn_id, set()).add(pin)
            try:
                answer = client.deduct(account, amount, txn_id=txn_id, member_pin=pin)
            except LedgerUnavailable:
                seen["unknown"] += 1
                self.pending[txn_id] = pin
                return
            except GatewayRefused as exc:               # a wrong or locked PIN: nothing decided
                assert exc.code == "member_pin_refused" and pin != RIGHT or exc.detail["outcome"] == "locked", exc
                seen[exc.detail["outcome"]] += 1
                self.pending.pop(txn_id, None)
                return
            self.pending.pop(txn_id, None)
            if answer.status is Status.CONFIRMATION_REQUIRED:
                seen["confirmation_required"] += 1
                assert pin is None and amount > THRESHOLD and txn_id not in self.decided
                return
            first = self.decided.setdefault(txn_id, answer)
            if first is not answer:
                seen["replays"] += 1
                assert answer.replayed and (answer.status, answer.balance_minor) == (first.status, first.balance_minor)

        def _txn(self) -> str:
            self.seq += 1
            return f"T1-m-{uuid.uuid4().hex[:12]}{self.seq}"

        @rule(i=st.integers(0, ACCOUNTS - 1), amount=st.integers(1, 2 * THRESHOLD),
              pin=st.sampled_from([RIGHT, WRONG, None]))
        def charge(self, i, amount, pin):
            txn_id = self._txn()
            self.requests[txn_id] = (self.accounts[i], amount)
            self._send(txn_id, pin)

        @rule()
        def resend_pending(self):
            for txn_id, pin in list(self.pending.items()):
                self._send(txn_id, pin)

        @rule(data=st.data())
        def retry_decided_without_pin(self, data):
            if self.decided:
                self._send(data.draw(st.sampled_from(sorted(self.decided))), None)

        @rule(data=st.data(), pin=st.sampled_from([RIGHT, WRONG, None]))
        def retry_any(self, data, pin):
            if self.requests:
                self._send(data.draw(st.sampled_from(sorted(self.requests))), pin)

        @rule(i=st.integers(0, ACCOUNTS - 1))
        def supervisor_resets(self, i):
            account = self.accounts[i]
            direct.reset_member_pin(account, supervisor_id=SUPERVISOR, supervisor_pin=SUPERVISOR_PIN)
            direct.set_member_pin(account, RIGHT, RIGHT)     # the member sets it again at once
            seen["resets"] += 1

        @rule(p=st.sampled_from([0.0, 0.3, 0.6]))
        def drop_replies(self, p):
            proxy.drop_reply_probability = p

        @invariant()
        def nothing_above_the_threshold_without_the_pin(self):
            for a in self.accounts:
                for e in shop.journal(a, count=1000):
                    if e.kind == "deduct" and e.txn_id in self.requests and self.requests[e.txn_id][1] > THRESHOLD:
                        assert RIGHT in self.pins_sent[e.txn_id], e

        def teardown(self):
            proxy.drop_reply_probability = 0.0
            for _ in range(5):
                for txn_id, pin in list(self.pending.items()):
                    self._send(txn_id, pin)
            assert not self.pending, self.pending
            for a in self.accounts:
                journaled = Counter(e.txn_id for e in shop.journal(a, count=1000) if e.kind == "deduct")
                assert all(n == 1 for n in journaled.values()), journaled
                applied = {t for t, r in self.decided.items() if r.applied and self.requests[t][0] == a}
                assert applied == set(journaled), (applied, set(journaled))
                assert shop.balance(a) == OPENING_MINOR - sum(self.requests[t][1] for t in applied)

    try:
        run_state_machine_as_test(Till, settings=settings(
            max_examples=8, stateful_step_count=30, deadline=None,
            suppress_health_check=list(HealthCheck)))
    finally:
        proxy.close()
        client.close()
    # the faults happened in every run (each history starts dropping replies); which of the
    # other paths (replays, missing or wrong PINs) a run took is hypothesis's choice, reported
    print("member-PIN property:", proxy.dropped_replies, "replies dropped;", dict(seen))
    assert proxy.dropped_replies and seen["unknown"], (proxy.dropped_replies, seen)
