"""Hot accounts split across slots, on the real Redis and the real 3-master Cluster:
many processes deducting from a split account never oversell, rebalancing moves funds
with journaled transfers, a process dying between the two halves of a transfer loses
and creates nothing, retries across split and merge replay, merge restores one plain
account with the exact total, credits spread over the shards."""
from __future__ import annotations

import multiprocessing as mp
import os
import random
import signal
import time

import pytest

from core import InvalidRequest, Ledger, Status
from core.keys import shard_id

PROCESSES = 6
ATTEMPTS = 60
AMOUNT = 7
INITIAL = 1500          # covers 214 of the 360 attempts


def journal_sum(ledger: Ledger, root: str) -> tuple[int, list]:
    """Sum of the amounts of every journal entry that counts towards `root` (all partitions)."""
    from core.ledger import JournalEntry
    entries = []
    for part in ledger.partitions:
        for jid, fields in ledger.client.xrange(part.journal):
            e = JournalEntry.from_fields(jid, part.index, fields)
            if e.account_root == root:
                entries.append(e)
    return sum(e.amount_minor for e in entries), entries


def settled(ledger: Ledger, account: str) -> None:
    ledger.settle_grace_ms = 0
    ledger.settle_transfers(account)


def opened_split(ledger: Ledger, account="HOT", initial=INITIAL, shards=4) -> str:
    ledger.open_account(account, txn_id=f"open-{account}", initial_minor=initial)
    r = ledger.split_account(account, shards=shards, txn_id=f"split-{account}")
    assert r.applied and r.balance_minor == initial
    return account


def check_books(ledger: Ledger, account: str) -> None:
    """Nothing lost or created: the journal adds up to the total, money in flight included."""
    settled(ledger, account)
    view = ledger.split_state(account)
    assert view.in_flight_minor == 0
    total, entries = journal_sum(ledger, account)
    assert total == ledger.balance(account) == view.total_minor
    ids = [e.txn_id for e in entries]
    assert len(ids) == len(set(ids)), "a txn id was journaled twice"
    assert all(s.balance_minor >= 0 for s in view.subs())


# ---------------------------------------------------------------- basics

def test_split_spreads_the_balance_and_reads_answer_the_total(ledger):
    opened_split(ledger, initial=1001, shards=4)
    view = ledger.split_state("HOT")
    assert sorted(s.id for s in view.shard_subs()) == [shard_id("HOT", k) for k in range(4)]
    assert all(s.balance_minor >= 250 for s in view.shard_subs()) and view.root.balance_minor == 0
    assert ledger.balance("HOT") == ledger.available("HOT") == 1001
    assert ledger.account("HOT").balance_minor == 1001
    again = ledger.split_account("HOT", shards=4, txn_id="split-HOT")
    assert again.replayed and again.balance_minor == 1001
    assert ledger.split_account("HOT", shards=3, txn_id="split-2").status is Status.ALREADY_SPLIT
    assert Ledger(ledger.client).balance("HOT") == 1001            # another process: no cache
    check_books(ledger, "HOT")


def test_shard_ids_cannot_be_used_by_callers(ledger):
    opened_split(ledger)
    for call in (lambda: ledger.deduct("HOT#1", 1, txn_id="x"), lambda: ledger.credit("HOT#1", 1, txn_id="x"),
                 lambda: ledger.open_account("HOT#9", txn_id="x"), lambda: ledger.deduct("HOT", 1, txn_id="x#1")):
        with pytest.raises(InvalidRequest):
            call()
    with pytest.raises(InvalidRequest):
        ledger.split_account("HOT", shards=17, txn_id="s")
    with pytest.raises(InvalidRequest):
        ledger.split_account("A" * 62, shards=2, txn_id="s")


def test_plain_accounts_pay_no_extra_round_trip(ledger, monkeypatch):
    ledger.open_account("PLAIN", txn_id="o", initial_minor=100)
    ledger.deduct("PLAIN", 1, txn_id="warm")
    sent = []
    real = ledger.client.execute_command
    monkeypatch.setattr(ledger.client, "execute_command", lambda *a, **k: sent.append(a[0]) or real(*a, **k))
    monkeypatch.setattr(ledger.client, "pipeline", lambda *a, **k: sent.append("PIPELINE"))
    assert ledger.deduct("PLAIN", 1, txn_id="d").applied
    assert ledger.credit("PLAIN", 1, txn_id="c").applied
    assert ledger.balance("PLAIN") == 99
    assert sent == ["EVALSHA", "EVALSHA", "HMGET"]


def test_statuses_and_replays_on_a_split_account(ledger):
    opened_split(ledger, initial=1000)
    d = ledger.deduct("HOT", 100, txn_id="d-1", terminal_id="T1", cashier_id="c7")
    assert d.applied and d.balance_minor == 900 and d.account_id == "HOT" and not d.replayed
    again = ledger.deduct("HOT", 100, txn_id="d-1", terminal_id="T1", cashier_id="c7")
    assert again.replayed and again.balance_minor == 900 and again.journal_id == d.journal_id
    from core import TxnConflict
    with pytest.raises(TxnConflict):
        ledger.deduct("HOT", 101, txn_id="d-1")
    no = ledger.deduct("HOT", 5000, txn_id="d-2")
    assert no.status is Status.INSUFFICIENT_FUNDS and no.balance_minor == 900
    ledger.credit("HOT", 10_000, txn_id="c-1")
    assert ledger.deduct("HOT", 5000, txn_id="d-2").status is Status.INSUFFICIENT_FUNDS   # stored decline
    assert ledger.refund("HOT", 40, txn_id="r-1", original_txn_id="d-1").balance_minor == 10_940
    assert ledger.refund("HOT", 61, txn_id="r-2", original_txn_id="d-1").status is Status.REFUND_EXCEEDS_ORIGINAL
    h = ledger.hold("HOT", 300, txn_id="h-1", ttl_s=60)
    assert h.applied and ledger.available("HOT") == 10_640 and ledger.balance("HOT") == 10_940
    assert ledger.capture("h-1", 200, txn_id="cap-1").applied                  # found without account_id
    assert ledger.capture("h-1", 200, txn_id="cap-2", account_id="HOT").status is Status.HOLD_ALREADY_CAPTURED
    assert ledger.balance("HOT") == ledger.available("HOT") == 10_740
    assert ledger.freeze("HOT", txn_id="f-1").applied
    assert ledger.deduct("HOT", 1, txn_id="d-3").status is Status.ACCOUNT_FROZEN
    assert ledger.credit("HOT", 1, txn_id="c-2").status is Status.ACCOUNT_FROZEN
    assert ledger.unfreeze("HOT", txn_id="f-2").applied
    assert ledger.deduct("HOT", 1, txn_id="d-4").applied
    from core import DeductRequest
    batch = ledger.deduct_many([DeductRequest("HOT", 2, "b-1"), DeductRequest("HOT", 10**9, "b-2"),
                                DeductRequest("HOT", 1, "d-4")])
    assert [r.status for r in batch] == [Status.APPLIED, Status.INSUFFICIENT_FUNDS, Status.APPLIED]
    assert batch[2].replayed
    check_books(ledger, "HOT")


def test_credits_spread_over_the_shards(ledger):
    opened_split(ledger, initial=0, shards=4)
    for i in range(40):
        assert ledger.credit("HOT", 10, txn_id=f"c-{i}").applied
    view = ledger.split_state("HOT")
    assert sum(1 for s in view.shard_subs() if s.balance_minor > 0) == 4
    assert ledger.balance("HOT") == 400
    _, entries = journal_sum(ledger, "HOT")
    credits = [e for e in entries if e.kind == "credit"]
    assert len(credits) == 40 and all(e.root_id == "HOT" and e.account_id.startswith("HOT#") for e in credits)
    check_books(ledger, "HOT")


# ---------------------------------------------------------------- rebalancing and transfers

def test_rebalancing_when_no_single_shard_covers(ledger):
    opened_split(ledger, initial=1000, shards=4)          # 250 on each shard
    r = ledger.deduct("HOT", 900, txn_id="big")
    assert r.applied and r.balance_minor == 100
    assert ledger.balance("HOT") == 100
    _, entries = journal_sum(ledger, "HOT")
    outs = [e for e in entries if e.kind == "xfer_out" and e.original_txn_id == "big"]
    ins = [e for e in entries if e.kind == "xfer_in" and e.original_txn_id == "big"]
    assert outs and len(outs) == len(ins)
    assert {e.transfer_id for e in outs} == {e.transfer_id for e in ins}
    assert all(e.peer_id and e.root_id == "HOT" for e in outs + ins)
    assert ledger.deduct("HOT", 900, txn_id="big").replayed
    assert ledger.deduct("HOT", 101, txn_id="too-much").status is Status.INSUFFICIENT_FUNDS
    assert ledger.deduct("HOT", 100, txn_id="rest").applied and ledger.balance("HOT") == 0
    check_books(ledger, "HOT")


def test_death_between_transfer_halves_then_settle(ledger):
    opened_split(ledger, initial=1000, shards=2)
    xid = ledger.transfer_out_only("HOT", "HOT#0", "HOT#1", 200, "crash-1")   # the process "dies" here
    view = ledger.split_state("HOT")
    assert view.in_flight_minor == 200
    assert ledger.balance("HOT") == 1000                       # money in flight still counts
    total, _ = journal_sum(ledger, "HOT")
    assert total == 800                                          # the journal shows the out-half only
    ledger.settle_grace_ms = 60_000
    assert ledger.settle_transfers("HOT") == 1
    assert ledger.settle_transfers("HOT") == 0                   # idempotent
    view = ledger.split_state("HOT")
    assert view.shard(1).balance_minor == 700 and xid in view.shard(0).in_flight   # kept through the grace
    assert ledger.balance("HOT") == 1000
    check_books(ledger, "HOT")
    view = ledger.split_state("HOT")
    assert not view.shard(0).in_flight and not view.shard(1).received


def _deduct_forever(url: str, worker: int) -> None:
    ledger = Ledger.from_url(url)
    i = 0
    while True:
        ledger.deduct("HOT", random.choice((3, 40, 130)), txn_id=f"k{worker}-{os.getpid()}-{i}")
        i += 1


def test_sigkill_in_a_loop_loses_and_creates_nothing(redis_url):
    ledger = Ledger.from_url(redis_url)
    opened_split(ledger, initial=20_000, shards=4)
    ctx = mp.get_context("spawn")
    for round_ in range(6):
        ledger.credit("HOT", 3000, txn_id=f"top-{round_}")          # lands on one shard: rebalancing follows
        procs = [ctx.Process(target=_deduct_forever, args=(redis_url, w)) for w in range(2)]
        for p in procs:
            p.start()
        time.sleep(random.uniform(0.4, 0.9))
        for p in procs:
            os.kill(p.pid, signal.SIGKILL)
            p.join(10)
        assert ledger.balance("HOT") >= 0
    check_books(ledger, "HOT")
    _, entries = journal_sum(ledger, "HOT")
    spent = -sum(e.amount_minor for e in entries if e.kind == "deduct")
    assert spent > 0 and ledger.balance("HOT") == 20_000 + 6 * 3000 - spent
    assert any(e.kind == "xfer_out" and e.original_txn_id.startswith("k") for e in entries)


# ---------------------------------------------------------------- retries across split and merge

def test_retries_straddling_split_and_merge_replay(ledger):
    ledger.open_account("HOT", txn_id="o", initial_minor=1000)
    before = ledger.deduct("HOT", 100, txn_id="before-split")
    ledger.split_account("HOT", shards=4, txn_id="s-1")
    again = ledger.deduct("HOT", 100, txn_id="before-split")
    assert again.replayed and again.balance_minor == before.balance_minor
    c = ledger.credit("HOT", 50, txn_id="credit-while-split")
    during = ledger.deduct("HOT", 30, txn_id="during-split")
    m = ledger.merge_account("HOT", txn_id="m-1")
    assert m.applied and m.balance_minor == 920
    fresh = Ledger(ledger.client)                                   # another process, empty cache
    for led in (ledger, fresh):
        assert led.deduct("HOT", 30, txn_id="during-split").replayed
        assert led.credit("HOT", 50, txn_id="credit-while-split").journal_id == c.journal_id
        assert led.deduct("HOT", 100, txn_id="before-split").replayed
    assert ledger.refund("HOT", 30, txn_id="refund-after-merge", original_txn_id="during-split").applied
    assert ledger.balance("HOT") == 950
    assert ledger.merge_account("HOT", txn_id="m-1").replayed
    assert ledger.merge_account("HOT", txn_id="m-2").status is Status.NOT_SPLIT
    # a second split: the old decisions still replay
    ledger.split_account("HOT", shards=2, txn_id="s-2")
    assert fresh.deduct("HOT", 30, txn_id="during-split").replayed
    assert during.journal_id == fresh.deduct("HOT", 30, txn_id="during-split").journal_id
    check_books(ledger, "HOT")


def test_merge_restores_one_plain_account_with_the_exact_total(ledger):
    opened_split(ledger, initial=5000, shards=8)
    for i in range(30):
        ledger.deduct("HOT", 37, txn_id=f"d-{i}")
        ledger.credit("HOT", 11, txn_id=f"c-{i}")
    ledger.transfer_out_only("HOT", "HOT#2", "HOT#5", 5, "left-in-flight")
    total = 5000 - 30 * 37 + 30 * 11
    assert ledger.balance("HOT") == total
    m = ledger.merge_account("HOT", txn_id="merge")
    assert m.applied and m.balance_minor == total
    view = ledger.split_state("HOT")
    assert view.sh == 0 and view.root.balance_minor == total
    assert all(s.closed and s.balance_minor == 0 for s in view.shard_subs())
    assert ledger.deduct("HOT", total, txn_id="all").applied and ledger.balance("HOT") == 0
    check_books(ledger, "HOT")


def test_merge_waits_for_holds(ledger):
    opened_split(ledger, initial=1000, shards=2)
    ledger.hold("HOT", 100, txn_id="h-1", ttl_s=60)
    r = ledger.merge_account("HOT", txn_id="m")
    assert r.status is Status.ACCOUNT_HAS_HOLDS and ledger.balance("HOT") == 1000
    assert ledger.deduct("HOT", 10, txn_id="during").applied        # the root takes over meanwhile
    assert ledger.void("h-1", txn_id="v-1", account_id="HOT").applied
    assert ledger.merge_account("HOT", txn_id="m").applied
    assert ledger.balance("HOT") == ledger.account("HOT").balance_minor == 990
    check_books(ledger, "HOT")


# ---------------------------------------------------------------- many processes

def _worker(url: str, worker: int, queue) -> None:
    ledger = Ledger.from_url(url)
    applied = 0
    for i in range(ATTEMPTS):
        txn = f"w{worker}-{i}"
        result = ledger.deduct("HOT", AMOUNT, txn_id=txn)
        assert ledger.deduct("HOT", AMOUNT, txn_id=txn).status is result.status
        assert result.status in (Status.APPLIED, Status.INSUFFICIENT_FUNDS)
        applied += result.applied
    queue.put(applied)


def _race(url: str) -> None:
    ledger = Ledger.from_url(url)
    opened_split(ledger, initial=INITIAL, shards=4)
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, w, queue)) for w in range(PROCESSES)]
    for p in procs:
        p.start()
    successes = sum(queue.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    final = ledger.balance("HOT")
    assert final >= 0
    assert successes * AMOUNT == INITIAL - final
    assert final < AMOUNT * PROCESSES          # demand exceeded supply: (almost) everything was sold
    _, entries = journal_sum(ledger, "HOT")
    deductions = [e for e in entries if e.kind == "deduct"]
    assert len(deductions) == successes == len({e.txn_id for e in deductions})
    check_books(ledger, "HOT")


def test_processes_on_a_split_account(redis_url):
    _race(redis_url)


@pytest.mark.cluster
def test_processes_on_a_split_account_on_cluster(cluster_url):
    _race(cluster_url)


@pytest.mark.cluster
def test_shards_land_on_every_primary(cluster_ledger):
    opened_split(cluster_ledger, initial=400, shards=4)
    nodes = {cluster_ledger.client.get_node_from_key(cluster_ledger.schema.partition_of(s).journal).name
             for s in [shard_id("HOT", k) for k in range(4)]}
    assert len(nodes) == 3
    assert cluster_ledger.deduct("HOT", 350, txn_id="big").applied
    cluster_ledger.transfer_out_only("HOT", "HOT#0", "HOT#3", 10, "crash") if \
        cluster_ledger.split_state("HOT").shard(0).available_minor >= 10 else None
    m = cluster_ledger.merge_account("HOT", txn_id="m")
    assert m.applied and m.balance_minor == 50
    check_books(cluster_ledger, "HOT")


# ---------------------------------------------------------------- cashierctl split / merge

def test_split_and_merge_commands(ledger, redis_url, capsys):
    import argparse
    import json

    from admin import split_commands

    def run(*argv):
        parser = argparse.ArgumentParser()
        parser.add_argument("--redis-url", default=redis_url)
        parser.add_argument("--json", action="store_true")
        split_commands.register(parser.add_subparsers(dest="command", required=True))
        args = parser.parse_args(list(argv))
        code = args.func(args)
        out, err = capsys.readouterr()
        return code, out, err

    ledger.open_account("HOT", txn_id="o", initial_minor=1234)
    code, out, _ = run("--json", "split", "HOT", "--shards", "3", "--txn-id", "s-1")
    assert code == 0 and json.loads(out) == {"status": "APPLIED", "balance_minor": 1234, "replayed": False,
                                             "txn_id": "s-1", "account_id": "HOT", "kind": "split",
                                             "shards": 3}
    code, out, _ = run("split", "HOT", "--shards", "3", "--txn-id", "s-1")
    assert code == 0 and "already done" in out and "12.34" in out
    code, out, _ = run("split", "HOT", "--shards", "2")
    assert code == 1 and "ALREADY_SPLIT" in out
    code, _, err = run("split", "HOT", "--shards", "40")
    assert code == 2 and "shards" in err and "Traceback" not in err
    code, _, err = run("merge", "HOT", "--txn-id", "s-1")
    assert code == 4 and "s-1" in err
    code, out, _ = run("merge", "HOT", "--txn-id", "m-1")
    assert code == 0 and "merge HOT: done" in out
    assert ledger.balance("HOT") == 1234 and ledger.split_state("HOT").sh == 0
    code, out, _ = run("merge", "HOT")
    assert code == 1 and "NOT_SPLIT" in out


def test_expired_holds_on_shards_are_journaled(ledger):
    opened_split(ledger, "HOT", 3000, 4)
    assert ledger.hold("HOT", 300, txn_id="h-exp", ttl_s=1).applied
    time.sleep(1.1)
    shard = next(s for s in (shard_id("HOT", k) for k in range(4))
                 if ledger.client.zcard(ledger.schema.partition_of(s).hold_expiries(s)))
    assert ledger.expire_holds(shard) == 1
    assert ledger.expire_holds(shard) == 0
    part = ledger.schema.partition_of(shard)
    kinds = [f["kind"] for _, f in ledger.client.xrange(part.journal) if f.get("orig") == "h-exp"]
    assert kinds == ["hold_expire"]
    assert ledger.capture("h-exp", 1, txn_id="c-late").status is Status.HOLD_EXPIRED
