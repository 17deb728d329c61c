"""`deduct_many` runs its deductions as `deduct_batch` calls (many items per FCALL, each
decided by deduct.lua's own code): against real Redis and the 3-master Cluster. A
hypothesis run of random batches (txn ids reused inside a batch and across batches,
with the same and with other amounts, missing and frozen accounts, amounts at and past
the limits, calls cut into chunks of 3) through a proxy that drops replies after Redis
ran them, retried with the same txn ids, checked item by item against an exact model of
one `deduct` after another; an item whose code fails on its own gets its error and the
items after it are still decided; a whole call refused for memory is decided item by item;
with wait_replicas a batch is acknowledged only once a replica holds it.
"""
from __future__ import annotations

import signal

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import core.batches
from core import (MAX_AMOUNT_MINOR, DeductRequest, InvalidRequest, Ledger, LedgerError, LedgerUnavailable, Result,
                  RetryPolicy, Status, TxnConflict)
from tests.support.flaky_ledger import faulty_fixture, until_answered
from tests.support.servers import RedisServer, wait_for
from core.journal_codec import read_range

ACCOUNTS = ("B-0", "B-1", "B-2", "B-frozen", "B-missing")
OPENING_MINOR = {"B-0": 1_000, "B-1": MAX_AMOUNT_MINOR, "B-2": 0, "B-frozen": 500}


def _journal(ledger) -> list[dict]:
    return [f for part in ledger.partitions for _, f in read_range(ledger.client, part.journal)]


def _open_all(ledger) -> None:
    ledger.init()
    for account, opening in OPENING_MINOR.items():
        ledger.open_account(account, txn_id=f"open-{account}", initial_minor=opening)
    ledger.freeze("B-frozen", txn_id="freeze-B-frozen")


class Model:
    """One `deduct` after another: the first answer of a txn id is kept for its replays."""

    def __init__(self):
        self.balance = dict(OPENING_MINOR)
        self.first: dict[str, tuple[str, int, tuple]] = {}   # txn -> (account, amount, answer)

    def deduct(self, req: DeductRequest):
        if type(req.amount_minor) is not int or not 0 < req.amount_minor <= MAX_AMOUNT_MINOR:
            return ("invalid", "amount_minor")
        if req.cashier_id == "C 1":
            return ("invalid", "cashier_id")
        if req.txn_id in self.first:
            account, amount, answer = self.first[req.txn_id]
            if (account, amount) != (req.account_id, req.amount_minor):
                return ("conflict",)
            return answer
        if req.account_id not in self.balance:
            answer = (Status.ACCOUNT_NOT_FOUND, 0)
        elif req.account_id == "B-frozen":
            answer = (Status.ACCOUNT_FROZEN, self.balance[req.account_id])
        elif self.balance[req.account_id] >= req.amount_minor:
            self.balance[req.account_id] -= req.amount_minor
            answer = (Status.APPLIED, self.balance[req.account_id])
        else:
            answer = (Status.INSUFFICIENT_FUNDS, self.balance[req.account_id])
        self.first[req.txn_id] = (req.account_id, req.amount_minor, answer)
        return answer


def _seen(item) -> tuple:
    if isinstance(item, InvalidRequest):
        return ("invalid", item.field)
    if isinstance(item, TxnConflict):
        return ("conflict",)
    assert isinstance(item, Result), item
    return (item.status, item.balance_minor)


requests = st.builds(
    DeductRequest,
    st.sampled_from(ACCOUNTS),
    st.one_of(st.integers(1, 1_200), st.sampled_from([MAX_AMOUNT_MINOR, MAX_AMOUNT_MINOR + 1, 0, -1])),
    st.sampled_from([f"x-{n}" for n in range(12)]),
    terminal_id=st.just("T-1"),
    cashier_id=st.sampled_from([None, "C-1", "C 1"]),
    card_no=st.just(None),          # charges by card: tests/core/test_identities.py
)


faulty = faulty_fixture(drop_reply_probability=0.3, seed=17)


@pytest.mark.slow    # ~9 s: fault injection (lost replies); not in the fast lane
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(requests, min_size=1, max_size=14), min_size=1, max_size=5))
def test_batches_under_lost_replies_answer_as_one_deduct_after_another(ledger, faulty, monkeypatch, batches):
    monkeypatch.setattr(core.batches, "BATCH_ITEMS_PER_CALL", 3)     # calls cut into chunks
    flaky, _ = faulty
    ledger.client.flushdb()
    _open_all(ledger)
    model = Model()
    answers: dict[str, list] = {}                  # txn -> every answer it got
    for batch in batches:
        items = until_answered(lambda: flaky.deduct_many(batch))
        assert len(items) == len(batch)
        for req, item in zip(batch, items):
            assert isinstance(item, (Result, LedgerError)), item
            assert _seen(item) == model.deduct(req), (req, item)
            if isinstance(item, Result):
                answers.setdefault(req.txn_id, []).append(item)
    for txn, seen in answers.items():               # a replay is the first answer exactly
        assert len({(r.status, r.balance_minor, r.journal_id) for r in seen}) == 1, seen
    assert {a: ledger.balance(a) for a in OPENING_MINOR} == model.balance
    deducts = [f for f in _journal(ledger) if f["kind"] == "deduct"]
    applied = [t for t, (_, _, answer) in model.first.items() if answer[0] is Status.APPLIED]
    assert sorted(f["txn"] for f in deducts) == sorted(applied)   # each applied txn journaled once


def test_an_item_that_fails_on_its_own_gets_its_error_and_the_rest_are_decided(ledger):
    _open_all(ledger)
    part = ledger.partitions[0]
    ledger.client.set(part.account("B-broken"), "not a hash")     # HMGET raises WRONGTYPE in the script
    reqs = [DeductRequest("B-0", 10, "w-1"), DeductRequest("B-broken", 10, "w-2"), DeductRequest("B-0", 20, "w-3")]
    first = ledger.deduct_many(reqs)
    assert [r.status for r in (first[0], first[2])] == [Status.APPLIED, Status.APPLIED]
    assert not first[0].replayed and not first[2].replayed
    assert isinstance(first[1], LedgerError) and "WRONGTYPE" in str(first[1])
    with pytest.raises(LedgerError, match="WRONGTYPE"):          # what the single call says of it
        ledger.deduct("B-broken", 10, txn_id="w-2")
    assert ledger.balance("B-0") == 970
    again = ledger.deduct_many(reqs)
    assert again[0].replayed and again[2].replayed and again[2].balance_minor == 970


def test_a_call_refused_for_memory_is_decided_item_by_item(redis_url, ledger):
    _open_all(ledger)
    admin = ledger.client
    admin.config_set("maxmemory", 1)
    try:
        items = ledger.deduct_many([DeductRequest("B-0", 1, f"m-{n}") for n in range(5)])
        assert all(isinstance(i, LedgerUnavailable) and "out of memory" in str(i) and i.txn_id == f"m-{n}"
                   for n, i in enumerate(items)), items
    finally:
        admin.config_set("maxmemory", 0)
    assert ledger.balance("B-0") == 1_000 and not [f for f in _journal(ledger) if f["kind"] == "deduct"]
    assert all(i.applied and not i.replayed
               for i in ledger.deduct_many([DeductRequest("B-0", 1, f"m-{n}") for n in range(5)]))


def test_one_call_per_partition_and_chunk(ledger):
    """On a standalone Redis with one partition, 120 items are 3 calls of 50, 50, 20."""
    _open_all(ledger)
    before = int(ledger.client.info("commandstats").get("cmdstat_fcall", {}).get("calls", 0))
    items = ledger.deduct_many([DeductRequest("B-1", 1, f"c-{n}") for n in range(120)])
    assert all(i.applied for i in items) and items[-1].balance_minor == MAX_AMOUNT_MINOR - 120
    calls = int(ledger.client.info("commandstats")["cmdstat_fcall"]["calls"]) - before
    assert calls == -(-120 // core.batches.BATCH_ITEMS_PER_CALL) == 3


def test_batches_on_the_cluster_answer_per_item_across_partitions(cluster_ledger):
    cluster_ledger.init()
    accounts = [f"K-{n}" for n in range(40)]
    for a in accounts:
        cluster_ledger.open_account(a, txn_id=f"open-{a}", initial_minor=100)
    reqs = [DeductRequest(a, 60, f"k-{n}") for n, a in enumerate(accounts * 2)]   # second of each: too little
    items = cluster_ledger.deduct_many(reqs)
    assert [i.status for i in items] == [Status.APPLIED] * 40 + [Status.INSUFFICIENT_FUNDS] * 40
    assert all(cluster_ledger.balance(a) == 40 for a in accounts)
    assert [(i.status, i.balance_minor, i.replayed) for i in cluster_ledger.deduct_many(reqs)] == \
        [(i.status, i.balance_minor, True) for i in items]


def test_with_wait_replicas_a_batch_is_answered_only_once_a_replica_holds_it():
    """Primary + replica, wait_replicas=1: the batch calls end with WAIT; a stopped replica
    makes the whole batch unknown (LedgerUnavailable), and the same batch afterwards is
    applied exactly once."""
    primary = RedisServer().start()
    replica = RedisServer("--replicaof", "127.0.0.1", str(primary.port)).start()
    try:
        wait_for(lambda: replica.client().info("replication").get("master_link_status") == "up", 20, "replica")
        safe = Ledger.from_url(primary.url, wait_replicas=1, wait_timeout_ms=100, retry=RetryPolicy(deadline_s=0.5))
        safe.init()
        safe.open_account("W-1", txn_id="open-W-1", initial_minor=1_000)
        assert all(i.applied for i in safe.deduct_many([DeductRequest("W-1", 1, f"a-{n}") for n in range(60)]))
        batch = [DeductRequest("W-1", 2, f"b-{n}") for n in range(60)]
        replica.proc.send_signal(signal.SIGSTOP)
        try:
            with pytest.raises(LedgerUnavailable):
                safe.deduct_many(batch)
        finally:
            replica.proc.send_signal(signal.SIGCONT)
        items = safe.deduct_many(batch)
        assert all(isinstance(i, Result) and i.applied for i in items), items
        assert safe.balance("W-1") == 1_000 - 60 - 120
        safe.close()
    finally:
        replica.stop()
        primary.stop()
