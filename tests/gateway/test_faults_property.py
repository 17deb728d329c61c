"""Hypothesis: random charges, top-ups and refunds through the gateway while replies are
dropped after the gateway applied the request (a fault proxy between client and gateway)
and the gateway is SIGKILLed and restarted. The till keeps every unanswered request and
re-sends it with the same txn id and the same body, as its outbox does. Afterwards, on
Redis: every account's balance == opening + top-ups + refunds - charges, each decided
request counted once, each txn id journaled at most once, and every replay answered what
the first answer said."""
from __future__ import annotations

import uuid
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from core import LedgerUnavailable
from tests.gateway.conftest import SUPERVISOR, SUPERVISOR_PIN, make_client
from tests.properties.workload import RobustProxy

pytestmark = pytest.mark.slow

OPENING_MINOR = 5_000
PROMO_MIN_MINOR, PROMO_BONUS_MINOR = 1_000, 100
ACCOUNTS = 3


def test_random_operations_with_faults(gateway, shop, till):
    proxy = RobustProxy(gateway.port, seed=7).start()
    client = make_client(gateway, shop.tokens["T1"], sign_in=None, urls=[f"http://127.0.0.1:{proxy.port}"],
                         timeout_s=2.0)
    client.session = till.session
    direct = till
    seen = Counter()
    assert shop.add_promotion(PROMO_MIN_MINOR, PROMO_BONUS_MINOR, txn_id="adm-promo-faults").applied

    class Till(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            run = uuid.uuid4().hex[:8]
            self.accounts = [f"P{run}{i}" for i in range(ACCOUNTS)]
            for a in self.accounts:
                assert direct.open_account(a, txn_id=f"o-{a}").applied
                assert direct.credit(a, OPENING_MINOR, txn_id=f"c-{a}", bonus_minor=PROMO_BONUS_MINOR).applied
            self.seq = 0
            self.pending: dict[str, tuple] = {}      # txn id -> (method, args, kwargs): no answer yet
            self.answers: dict[str, object] = {}     # txn id -> first answer
            self.requests: dict[str, tuple] = {}
            self.charges: list[tuple[str, str, int]] = []

        def _send(self, txn_id: str, method: str, *args, **kwargs):
            self.requests[txn_id] = (method, args, kwargs)
            try:
                answer = getattr(client, method)(*args, txn_id=txn_id, **kwargs)
            except LedgerUnavailable as exc:
                assert exc.txn_id == txn_id
                seen["unknown"] += 1
                self.pending[txn_id] = (method, args, kwargs)
                return
            self.pending.pop(txn_id, None)
            first = self.answers.setdefault(txn_id, answer)
            if first is not answer:                  # a replay: the first decision again
                seen["replays"] += 1
                assert answer.replayed and (answer.status, answer.balance_minor) == (first.status, first.balance_minor)
            if method == "deduct" and answer.applied:
                self.charges.append((args[0], txn_id, args[1]))

        def _txn(self, letter: str) -> str:
            self.seq += 1
            return f"T1-{letter}-{uuid.uuid4().hex[:12]}{self.seq}"

        @rule(i=st.integers(0, ACCOUNTS - 1), amount=st.integers(1, 3_000))
        def charge(self, i, amount):
            self._send(self._txn("d"), "deduct", self.accounts[i], amount)

        @rule(i=st.integers(0, ACCOUNTS - 1), amount=st.integers(1, 2_000))
        def top_up(self, i, amount):
            # the bonus the promotion in force gives (the gateway refuses any other: test_rules.py)
            bonus = PROMO_BONUS_MINOR if amount >= PROMO_MIN_MINOR else 0
            self._send(self._txn("c"), "credit", self.accounts[i], amount, bonus_minor=bonus)

        @rule(data=st.data())
        def refund(self, data):
            if self.charges:
                account, original, amount = data.draw(st.sampled_from(self.charges))
                part = data.draw(st.integers(1, amount))
                self._send(self._txn("r"), "refund", account, part, original_txn_id=original,
                           supervisor_id=SUPERVISOR, supervisor_pin=SUPERVISOR_PIN)

        @rule()
        def resend_pending(self):
            for txn_id, (method, args, kwargs) in list(self.pending.items()):
                self._send(txn_id, method, *args, **kwargs)

        @rule(data=st.data())
        def replay_decided(self, data):
            if self.answers:
                txn_id = data.draw(st.sampled_from(sorted(self.answers)))
                method, args, kwargs = self.requests[txn_id]
                self._send(txn_id, method, *args, **kwargs)

        @rule(p=st.sampled_from([0.0, 0.3, 0.6]))
        def drop_replies(self, p):
            proxy.drop_reply_probability = p

        @rule()
        def restart_gateway(self):
            seen["restarts"] += 1
            gateway.kill()
            gateway.start()

        @invariant()
        def balances_never_negative(self):
            for a in self.accounts:
                assert shop.balance(a) >= 0

        def teardown(self):
            proxy.drop_reply_probability = 0.0
            for _ in range(5):                       # the outbox: until every request is answered
                for txn_id, (method, args, kwargs) in list(self.pending.items()):
                    self._send(txn_id, method, *args, **kwargs)
            assert not self.pending, self.pending
            expected = {a: OPENING_MINOR + PROMO_BONUS_MINOR for a in self.accounts}
            for txn_id, answer in self.answers.items():
                if not answer.applied:
                    continue
                method, args, kwargs = self.requests[txn_id]
                sign = -1 if method == "deduct" else 1
                expected[args[0]] += sign * (args[1] + kwargs.get("bonus_minor", 0))
            for a in self.accounts:
                assert shop.balance(a) == expected[a], (a, shop.balance(a), expected[a])
                journaled = Counter(e.txn_id for e in shop.journal(a, count=1000))
                assert all(n == 1 for n in journaled.values()), journaled
                applied = {t for t, r in self.answers.items() if r.applied and self.requests[t][1][0] == a}
                assert applied <= set(journaled), applied - set(journaled)

    try:
        run_state_machine_as_test(Till, settings=settings(
            max_examples=8, stateful_step_count=25, deadline=None,
            suppress_health_check=list(HealthCheck)))
    finally:
        proxy.close()
        client.close()
    # the faults did happen: answers lost after the gateway applied them, restarts, replays
    assert proxy.dropped_replies and seen["unknown"] and seen["restarts"] and seen["replays"], (
        proxy.dropped_replies, seen)
