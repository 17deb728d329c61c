"""Refund limits against a real Redis when the sale's record is written outside the
scripts (issue 25 item 4): the refunded total is not one counter any more. The sale's
txn record keeps one field per refund ('r:<refund txn id>' = its amount, written only by
refund.lua) and the total 'r' beside them; a refund is checked against the sale's own
amount and the sum of those fields, and refused when the stored total disagrees. Also a
hypothesis run of random partial refunds of random sales through a proxy that drops
replies (retried with the same txn ids), with a raw client bumping the counters in
between, checked by the invariants: refunds per sale never above the sale, bucket by
bucket, and balance = opening - charges + refunds."""
from __future__ import annotations

import itertools

import pytest
import redis
from hypothesis import HealthCheck, given, settings, strategies as st

from core import Ledger, Status
from tests.support.flaky_ledger import faulty_fixture, until_answered
from core.journal_codec import read_range

faulty = faulty_fixture(drop_reply_probability=0.3, seed=25)


@pytest.fixture
def raw(redis_url):
    """A plain client on the ledger's database: what any holder of a Redis login can do."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


def _journal_len(ledger: Ledger) -> int:
    return sum(ledger.client.xlen(p.journal) for p in ledger.partitions)


def test_a_bumped_refund_counter_does_not_raise_the_limit(ledger, raw):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=2_000)
    assert ledger.deduct("A-1", 500, txn_id="sale").applied
    sale_key = ledger.schema.partition_of("A-1").txn("sale")
    raw.hincrby(sale_key, "r", -1_000_000)                # the issue-24 attack
    before, entries = ledger.balance("A-1"), _journal_len(ledger)
    over = ledger.refund("A-1", 1_000_500, txn_id="r-big", original_txn_id="sale")
    assert over.status is Status.REFUND_EXCEEDS_ORIGINAL and not over.applied
    # a record changed outside the scripts proves nothing left to refund: even a small one
    small = ledger.refund("A-1", 100, txn_id="r-small", original_txn_id="sale")
    assert small.status is Status.REFUND_EXCEEDS_ORIGINAL
    assert ledger.balance("A-1") == before == 1_500 and _journal_len(ledger) == entries


def test_the_counter_lowered_after_a_refund_is_caught(ledger, raw):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=2_000)
    ledger.deduct("A-1", 500, txn_id="sale")
    assert ledger.refund("A-1", 400, txn_id="r-1", original_txn_id="sale").applied
    sale_key = ledger.schema.partition_of("A-1").txn("sale")
    assert raw.hget(sale_key, "r") == "400" and raw.hget(sale_key, "r:r-1") == "400"
    raw.hincrby(sale_key, "r", -400)                      # the counter says nothing refunded
    r = ledger.refund("A-1", 500, txn_id="r-2", original_txn_id="sale")
    assert r.status is Status.REFUND_EXCEEDS_ORIGINAL and ledger.balance("A-1") == 1_900
    raw.hincrby(sale_key, "r:r-1", -300)                  # one refund's own field moved instead
    assert ledger.refund("A-1", 100, txn_id="r-3", original_txn_id="sale").status is \
        Status.REFUND_EXCEEDS_ORIGINAL
    assert ledger.balance("A-1") == 1_900


def test_a_bonus_taken_above_the_sale_is_refused(ledger, raw):
    ledger.open_account("A-1", txn_id="open-A-1")
    ledger.credit("A-1", 1_000, txn_id="top", bonus_minor=500)
    ledger.set_spend_order("bonus_first", txn_id="order")
    ledger.deduct("A-1", 600, txn_id="sale")
    raw.hset(ledger.schema.partition_of("A-1").txn("sale"), "tb", 10_000)
    assert ledger.refund("A-1", 600, txn_id="r-1", original_txn_id="sale").status is \
        Status.REFUND_EXCEEDS_ORIGINAL


@pytest.mark.parametrize("field, value", [("r:ghost", "100"), ("r:ghost", "0"), ("tb", "x"), ("tb", ""),
                                          ("r", "00"), ("r", "-1")])
def test_a_first_refund_checks_a_record_that_looks_untouched(ledger, raw, field, value):
    """refund.lua takes a record with no refund fields and no bonus ('r' and 'tb' absent)
    as it stands; one field written outside the scripts still refuses every refund."""
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=2_000)
    ledger.deduct("A-1", 600, txn_id="sale")
    raw.hset(ledger.schema.partition_of("A-1").txn("sale"), field, value)
    assert ledger.refund("A-1", 100, txn_id="r-1", original_txn_id="sale").status is \
        Status.REFUND_EXCEEDS_ORIGINAL
    assert ledger.balance("A-1") == 1_400


def test_a_first_and_a_second_refund_keep_the_total(ledger, raw):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=2_000)
    ledger.deduct("A-1", 600, txn_id="sale")
    assert ledger.refund("A-1", 100, txn_id="r-1", original_txn_id="sale").applied
    assert raw.hget(ledger.schema.partition_of("A-1").txn("sale"), "r") == "100"
    assert ledger.refund("A-1", 500, txn_id="r-2", original_txn_id="sale").applied
    rec = raw.hgetall(ledger.schema.partition_of("A-1").txn("sale"))
    assert (rec["r"], rec["r:r-1"], rec["r:r-2"]) == ("600", "100", "500")
    assert ledger.refund("A-1", 1, txn_id="r-3", original_txn_id="sale").status is Status.REFUND_EXCEEDS_ORIGINAL


def test_record_layout_replay_and_retention(ledger, raw):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=2_000)
    ledger.deduct("A-1", 600, txn_id="sale")
    sale_key = ledger.schema.partition_of("A-1").txn("sale")
    ttl_before = raw.ttl(sale_key)
    first = ledger.refund("A-1", 200, txn_id="r-1", original_txn_id="sale")
    ledger.refund("A-1", 300, txn_id="r-2", original_txn_id="sale")
    again = ledger.refund("A-1", 200, txn_id="r-1", original_txn_id="sale")
    assert again.replayed and (again.balance_minor, again.journal_id) == (first.balance_minor, first.journal_id)
    rec = raw.hgetall(sale_key)
    assert {k: v for k, v in rec.items() if k.startswith("r")} == {"r": "500", "r:r-1": "200", "r:r-2": "300"}
    assert 0 < raw.ttl(sale_key) <= ttl_before                 # the sale's retention is kept
    assert raw.object("encoding", sale_key) == "listpack"      # still the small encoding
    assert ledger.refund("A-1", 101, txn_id="r-3", original_txn_id="sale").status is \
        Status.REFUND_EXCEEDS_ORIGINAL
    assert ledger.refund("A-1", 100, txn_id="r-4", original_txn_id="sale").applied


def test_a_record_from_before_the_refund_fields_keeps_its_total(ledger, raw):
    """A sale refunded by the older script has only 'r': it still counts."""
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=2_000)
    ledger.deduct("A-1", 600, txn_id="sale")
    raw.hset(ledger.schema.partition_of("A-1").txn("sale"), "r", 450)
    assert ledger.refund("A-1", 151, txn_id="r-1", original_txn_id="sale").status is \
        Status.REFUND_EXCEEDS_ORIGINAL
    assert ledger.refund("A-1", 150, txn_id="r-2", original_txn_id="sale").applied
    assert ledger.refund("A-1", 1, txn_id="r-3", original_txn_id="sale").status is \
        Status.REFUND_EXCEEDS_ORIGINAL


_example = itertools.count()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sales=st.lists(st.tuples(st.integers(1, 5_000), st.integers(0, 100)), min_size=1, max_size=4),
       ops=st.lists(st.tuples(st.sampled_from(["refund", "refund", "refund", "tamper"]), st.integers(0, 3),
                              st.integers(1, 3_000), st.integers(-10_000, 10_000)),
                    min_size=1, max_size=14))
def test_property_refunds_never_exceed_their_sale_under_lost_replies_and_tampering(
        ledger, raw, faulty, sales, ops):
    flaky, _proxy = faulty
    n = next(_example)
    account, opening = f"P-{n}", 100_000
    assert until_answered(lambda: flaky.open_account(account, txn_id=f"open-{account}")).applied
    # part of the opening is a bonus, so the sales take from both buckets
    assert until_answered(lambda: flaky.credit(account, opening - 20_000, txn_id=f"{account}-top",
                                               bonus_minor=20_000)).applied
    ledger.set_spend_order("proportional", txn_id=f"order-{n}")
    charged = 0
    taken = []                                    # (txn, amount, bonus taken)
    for i, (amount, _) in enumerate(sales):
        txn = f"{account}-s{i}"
        r = until_answered(lambda: flaky.deduct(account, amount, txn_id=txn))
        assert r.applied
        charged += amount
        e = read_range(ledger.client, ledger.schema.partition_of(account).journal, r.journal_id, r.journal_id)[0][1]
        taken.append((txn, amount, -int(e.get("bd", 0))))
    refunds: dict[str, list[tuple[int, int]]] = {t: [] for t, _, _ in taken}   # (principal, bonus) back
    for j, (kind, which, amount, bump) in enumerate(ops):
        sale, sale_amount, _tb = taken[which % len(taken)]
        if kind == "tamper":
            raw.hincrby(ledger.schema.partition_of(account).txn(sale), "r", bump or -1)
            continue
        txn = f"{account}-r{j}"
        call = lambda: flaky.refund(account, amount, txn_id=txn, original_txn_id=sale)
        r = until_answered(call)
        again = until_answered(call)
        assert again.replayed and (again.status, again.journal_id) == (r.status, r.journal_id)
        if r.applied:
            e = read_range(ledger.client, ledger.schema.partition_of(account).journal, r.journal_id, r.journal_id)[0][1]
            bd = int(e.get("bd", 0))
            refunds[sale].append((int(e["amt"]) - bd, bd))
        else:
            assert r.status is Status.REFUND_EXCEEDS_ORIGINAL
    refunded = 0
    for sale, sale_amount, tb in taken:
        back_p = sum(p for p, _ in refunds[sale])
        back_b = sum(b for _, b in refunds[sale])
        assert back_p + back_b <= sale_amount, (sale, refunds[sale])
        assert back_b <= tb and back_p <= sale_amount - tb, (sale, tb, refunds[sale])
        refunded += back_p + back_b
    assert ledger.balance(account) == opening - charged + refunded
