"""Hypothesis: random batches of charges (`GatewayLedger.deduct_many`) through the gateway
while replies are dropped after the gateway decided the batch (a fault proxy between
client and gateway) and the gateway is SIGKILLed and restarted. The till keeps every
unanswered batch and re-sends it as it was, as its outbox does; a batch may also be
re-sent after its answer came. Afterwards, on Redis: every account's balance == opening -
the charges answered APPLIED, each txn id journaled at most once, every replay answering
what the first answer said, and an item above the approval threshold never applied."""
from __future__ import annotations

import uuid
from collections import Counter

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from core import LedgerUnavailable, Result
from core.records import DeductRequest
from gateway.wire import GatewayRefused
from tests.gateway.conftest import make_client
from tests.properties.workload import RobustProxy

pytestmark = pytest.mark.slow

OPENING_MINOR = 20_000
THRESHOLD = 1_000_000            # the fixture's --approval-above-minor
ACCOUNTS = 3


def test_random_batches_with_faults(gateway, shop, till):
    proxy = RobustProxy(gateway.port, seed=11).start()
    client = make_client(gateway, shop.tokens["T1"], sign_in=None, urls=[f"http://127.0.0.1:{proxy.port}"],
                         timeout_s=2.0)
    client.session = till.session
    seen = Counter()

    class Till(RuleBasedStateMachine):
        def __init__(self):
            super().__init__()
            run = uuid.uuid4().hex[:8]
            self.accounts = [f"B{run}{i}" for i in range(ACCOUNTS)]
            for a in self.accounts:
                assert till.open_account(a, txn_id=f"o-{a}").applied
                assert till.credit(a, OPENING_MINOR, txn_id=f"c-{a}").applied
            self.seq = 0
            self.pending: dict[int, list[DeductRequest]] = {}   # batch no -> the batch: no answer yet
            self.batches: dict[int, list[DeductRequest]] = {}   # every batch sent
            self.answers: dict[str, Result] = {}                # txn id -> first Result
            # every history starts with replies being dropped (a rule changes it), so the faults
            # the final check asks for happen in every run, not only when hypothesis picks them
            proxy.drop_reply_probability = 0.3

        def _send(self, number: int):
            batch = self.batches[number]
            try:
                answers = client.deduct_many(batch)
            except LedgerUnavailable:
                seen["unknown"] += 1
                self.pending[number] = batch
                return
            self.pending.pop(number, None)
            seen["answered"] += 1
            assert len(answers) == len(batch)
            for req, answer in zip(batch, answers):
                if req.amount_minor > THRESHOLD:
                    assert isinstance(answer, GatewayRefused) and answer.code == "approval_required", answer
                    continue
                assert isinstance(answer, Result) and answer.txn_id == req.txn_id, answer
                seen["replays"] += answer.replayed     # (also the first answer seen of a lost one)
                first = self.answers.setdefault(req.txn_id, answer)
                if first is not answer:           # a replay: the first decision again
                    assert answer.replayed and (answer.status, answer.balance_minor) == \
                        (first.status, first.balance_minor), (first, answer)

        @rule(items=st.lists(st.tuples(st.integers(0, ACCOUNTS - 1),
                                       st.one_of(st.integers(1, 4_000), st.just(THRESHOLD + 1))),
                             min_size=1, max_size=12))
        def charge_batch(self, items):
            number = len(self.batches)
            batch = []
            for i, amount in items:
                self.seq += 1
                batch.append(DeductRequest(self.accounts[i], amount, f"T1-d-{uuid.uuid4().hex[:12]}{self.seq}"))
            self.batches[number] = batch
            seen["batches"] += 1
            self._send(number)

        @rule()
        def resend_pending(self):
            for number in list(self.pending):
                self._send(number)

        @rule(data=st.data())
        def resend_answered(self, data):
            if self.batches:
                self._send(data.draw(st.sampled_from(sorted(self.batches))))

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
            for _ in range(5):                     # the outbox: until every batch is answered
                for number in list(self.pending):
                    self._send(number)
            assert not self.pending, self.pending
            expected = dict.fromkeys(self.accounts, OPENING_MINOR)
            for answer in self.answers.values():
                if answer.applied:
                    expected[answer.account_id] -= answer.amount_minor
            for a in self.accounts:
                assert shop.balance(a) == expected[a], (a, shop.balance(a), expected[a])
                entries = shop.journal(a, count=1000)
                journaled = Counter(e.txn_id for e in entries)
                assert all(n == 1 for n in journaled.values()), journaled
                applied = {t for t, r in self.answers.items() if r.applied and r.account_id == a}
                assert applied == {e.txn_id for e in entries if e.kind == "deduct"}, (applied, journaled)
                big = {r.txn_id for b in self.batches.values() for r in b if r.amount_minor > THRESHOLD}
                assert not big & set(journaled)

    try:
        run_state_machine_as_test(Till, settings=settings(
            max_examples=8, stateful_step_count=25, deadline=None,
            suppress_health_check=list(HealthCheck)))
    finally:
        proxy.close()
        client.close()
    # the faults did happen: answers lost after the gateway decided them, restarts, replays
    assert proxy.dropped_replies and seen["unknown"] and seen["restarts"] and seen["replays"], (
        proxy.dropped_replies, seen)
    assert seen["answered"] >= seen["batches"]
