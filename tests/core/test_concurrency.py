"""Many processes deducting from one account at once, on the real Redis and the real
Cluster: never negative, never oversold, one journal entry per success."""
from __future__ import annotations

import multiprocessing as mp

import pytest

from core import Ledger, Status

PROCESSES = 8
ATTEMPTS_PER_PROCESS = 150
AMOUNT_MINOR = 7
INITIAL_MINOR = 5000   # covers 714 of the 1200 attempts: many must be declined


def _worker(url: str, worker: int, queue) -> None:
    ledger = Ledger.from_url(url)
    applied = declined = 0
    for i in range(ATTEMPTS_PER_PROCESS):
        txn = f"w{worker}-{i}"
        result = ledger.deduct("HOT", AMOUNT_MINOR, txn_id=txn)
        # every retry of the same txn must answer the same
        assert ledger.deduct("HOT", AMOUNT_MINOR, txn_id=txn).status is result.status
        assert result.balance_minor >= 0
        if result.status is Status.APPLIED:
            applied += 1
        else:
            assert result.status is Status.INSUFFICIENT_FUNDS
            declined += 1
    queue.put((applied, declined))


def _race(url: str) -> tuple[Ledger, int]:
    ledger = Ledger.from_url(url)
    ledger.open_account("HOT", txn_id="open-HOT", initial_minor=INITIAL_MINOR)
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, w, queue)) for w in range(PROCESSES)]
    for p in procs:
        p.start()
    totals = [queue.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    return ledger, sum(a for a, _ in totals)


def _check(ledger: Ledger, successes: int) -> None:
    final = ledger.balance("HOT")
    assert final >= 0
    assert successes * AMOUNT_MINOR == INITIAL_MINOR - final
    assert successes == INITIAL_MINOR // AMOUNT_MINOR          # demand exceeded supply
    deductions = [e for e in ledger.journal("HOT", count=10_000) if e.kind == "deduct"]
    assert len(deductions) == successes
    assert len({e.txn_id for e in deductions}) == successes


@pytest.mark.slow    # ~10 s: 8 processes; not in the fast lane
def test_eight_processes_on_one_account(redis_url):
    _check(*_race(redis_url))


@pytest.mark.slow    # ~10 s: 8 processes; not in the fast lane
@pytest.mark.cluster
def test_eight_processes_on_one_account_on_cluster(cluster_url):
    _check(*_race(cluster_url))
