"""Offline settlement (issue 27, core/offline.py, offline_deduct.lua): a charge made
offline is applied once by its txn id; what the balance no longer covers becomes an
offline debt (never a negative balance); no spending while a debt is open; the next
top-up pays it first; the server's per-member-per-till bound holds whatever a till claims."""
from __future__ import annotations

import time

import pytest

from core import InvalidRequest, Status
from core.journal_codec import read_range


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture
def acct(ledger):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=5_000)
    ledger.set_offline_limits(txn_id="lim-1", member_limit_minor=10_000, max_duration_s=7_200)
    return ledger


def journal_of(ledger, txn_id):
    return next(e for e in ledger.journal(ledger.partitions[0]) if e.txn_id == txn_id)


# when the outage's sales were made (a replay must carry the same time)
MADE_AT_MS = now_ms() - 60_000


def offline(ledger, txn, amount, *, term="T1", at=MADE_AT_MS, acct="A-1", card=None):
    return ledger.offline_deduct(acct, amount, txn_id=txn, terminal_id=term, cashier_id="C1",
                                 made_at_ms=at, card_no=card)


def test_covered_offline_charge_is_an_ordinary_charge_journaled_offline(acct):
    at = now_ms() - 60_000
    r = offline(acct, "T1-f-1", 3_000, at=at)
    assert r.applied and r.balance_minor == 2_000 and r.debt_minor == 0 and r.kind == "offline"
    assert acct.offline_debt("A-1") == 0
    raw = read_range(acct.client, acct.partitions[0].journal)[-1][1]
    assert raw["kind"] == "offline" and raw["amt"] == "-3000" and raw["om"] == str(at) and raw["cash"] == "C1"
    # a replay answers the first decision, nothing applied twice
    again = offline(acct, "T1-f-1", 3_000, at=at)
    assert again.replayed and again.balance_minor == 2_000 and acct.balance("A-1") == 2_000


def test_uncovered_part_becomes_an_offline_debt_never_a_negative_balance(acct):
    offline(acct, "T1-f-1", 4_000)
    r = offline(acct, "T2-f-1", 3_000, term="T2")
    assert r.applied and r.balance_minor == 0 and r.debt_minor == 2_000
    assert acct.balance("A-1") == 0 and acct.offline_debt("A-1") == 2_000
    raw = read_range(acct.client, acct.partitions[0].journal)[-1][1]
    assert raw["kind"] == "offline_debt" and raw["amt"] == "-1000" and raw["dt"] == "2000"
    # nothing left at all: the whole charge is debt, amount 0 journaled
    r = offline(acct, "T2-f-2", 500, term="T2")
    assert r.balance_minor == 0 and r.debt_minor == 500 and acct.offline_debt("A-1") == 2_500
    assert offline(acct, "T2-f-2", 500, term="T2").debt_minor == 500      # replay keeps the debt


def test_no_spending_while_a_debt_is_open_and_a_top_up_pays_it_first(acct):
    offline(acct, "T1-f-1", 6_000)
    assert acct.offline_debt("A-1") == 1_000
    assert acct.deduct("A-1", 1, txn_id="d-1").status is Status.DEBT_OPEN
    assert acct.hold("A-1", 1, txn_id="h-1", ttl_s=60).status is Status.DEBT_OPEN
    closed = acct.close_account("A-1", txn_id="x-1")
    assert closed.status is Status.DEBT_OPEN
    # a top-up smaller than the debt: all of it pays the debt, the balance gets nothing
    r = acct.credit("A-1", 400, txn_id="c-1")
    assert r.applied and r.debt_minor == 400 and r.balance_minor == 0 and acct.offline_debt("A-1") == 600
    raw = read_range(acct.client, acct.partitions[0].journal)[-1][1]
    assert raw["kind"] == "credit" and raw["amt"] == "0" and raw["dp"] == "400"
    assert acct.deduct("A-1", 1, txn_id="d-2").status is Status.DEBT_OPEN
    # the next pays the rest of the debt first, then the balance
    r = acct.credit("A-1", 1_000, txn_id="c-2")
    assert r.debt_minor == 600 and r.balance_minor == 400 and acct.offline_debt("A-1") == 0
    assert acct.credit("A-1", 1_000, txn_id="c-2").debt_minor == 600          # replay says the same
    assert acct.deduct("A-1", 400, txn_id="d-3").applied


def test_a_debt_is_owed_principal_a_bonus_never_pays_it(acct):
    offline(acct, "T1-f-1", 5_500)
    r = acct.credit("A-1", 300, txn_id="c-1", bonus_minor=100)
    assert r.debt_minor == 300 and r.balance_minor == 100 and acct.offline_debt("A-1") == 200
    raw = read_range(acct.client, acct.partitions[0].journal)[-1][1]
    assert (raw["pd"], raw["bd"], raw["dp"], raw["amt"]) == ("0", "100", "300", "100")
    assert acct.deduct("A-1", 50, txn_id="d-1").status is Status.DEBT_OPEN     # still owed


def test_holds_are_not_taken_by_an_offline_charge(acct):
    acct.hold("A-1", 2_000, txn_id="h-1", ttl_s=600)
    r = offline(acct, "T1-f-1", 4_000)
    assert r.balance_minor == 2_000 and r.debt_minor == 1_000
    assert acct.capture("h-1", 2_000, txn_id="k-1").applied     # the hold still has its money
    assert acct.balance("A-1") == 0


def test_blocked_card_and_frozen_account_are_still_settled(acct):
    acct.issue_card("A-1", "CARD-1", txn_id="i-1")
    acct.block_card("CARD-1", txn_id="b-1", reason="lost")
    r = offline(acct, "T1-f-1", 1_000, card="CARD-1")
    assert r.applied and r.balance_minor == 4_000
    assert read_range(acct.client, acct.partitions[0].journal)[-1][1]["cb"] == "1"
    acct.freeze("A-1", txn_id="fz-1")
    assert offline(acct, "T1-f-2", 1_000).applied
    assert read_range(acct.client, acct.partitions[0].journal)[-1][1]["fz"] == "1"


def test_declines_that_apply_nothing(acct):
    assert offline(acct, "T1-f-1", 100, acct="NOPE").status is Status.ACCOUNT_NOT_FOUND
    acct.open_account("B-1", txn_id="open-B-1", initial_minor=100)
    acct.issue_card("B-1", "CARD-B", txn_id="i-b")
    assert offline(acct, "T1-f-2", 100, card="CARD-B").status is Status.CARD_NOT_THIS_ACCOUNT
    acct.close_account("B-1", txn_id="x-b")
    assert offline(acct, "T1-f-3", 100, acct="B-1").status is Status.ACCOUNT_CLOSED
    assert acct.balance("A-1") == 5_000


def test_the_server_bounds_each_till_per_member_per_window(acct):
    """A till can always claim it was offline: the bound is what limits it."""
    t0 = now_ms() - 3 * 3_600_000
    assert offline(acct, "T1-f-1", 6_000, at=t0).applied
    r = offline(acct, "T1-f-2", 4_001, at=t0 + 1_000)
    assert r.status is Status.OFFLINE_LIMIT_EXCEEDED and acct.offline_debt("A-1") == 1_000
    assert offline(acct, "T1-f-3", 4_000, at=t0 + 2_000).applied              # exactly the limit
    assert offline(acct, "T1-f-4", 1, at=t0 - 1).status is Status.OFFLINE_LIMIT_EXCEEDED  # no going back
    # another till has its own limit: the bound is limit x tills
    assert offline(acct, "T2-f-1", 10_000, term="T2", at=t0).applied
    assert offline(acct, "T2-f-2", 1, term="T2", at=t0).status is Status.OFFLINE_LIMIT_EXCEEDED
    # a new window opens only after the last one's duration
    assert offline(acct, "T1-f-5", 1, at=t0 + 7_200_000 - 1).status is Status.OFFLINE_LIMIT_EXCEEDED
    assert offline(acct, "T1-f-6", 10_000, at=t0 + 7_200_000).applied
    assert acct.offline_debt("A-1") == 30_000 - 5_000


def test_bad_input_names_the_field_and_changes_nothing(acct):
    with pytest.raises(InvalidRequest) as e:
        acct.offline_deduct("A-1", 100, txn_id="T1-f-1", terminal_id="T1", made_at_ms=1.5)
    assert e.value.field == "made_at_ms"
    with pytest.raises(InvalidRequest) as e:
        acct.offline_deduct("A-1", 100, txn_id="T1-f-1", terminal_id="", made_at_ms=now_ms())
    assert e.value.field == "terminal_id"
    with pytest.raises(InvalidRequest) as e:
        acct.offline_deduct("A-1", 100, txn_id="T1-f-1", terminal_id="T1", made_at_ms=now_ms() + 600_000)
    assert e.value.field == "made_at_ms"
    with pytest.raises(InvalidRequest) as e:
        acct.set_offline_limits(txn_id="l-2", max_duration_s=0)
    assert e.value.field == "offline_max_duration_s"
    assert acct.balance("A-1") == 5_000 and acct.offline_debt("A-1") == 0


def test_offline_limits_are_shop_settings(acct):
    limits = acct.offline_limits()
    assert limits.member_limit_minor == 10_000 and limits.max_duration_s == 7_200
    assert limits.till_budget_minor == 200_000                    # the default
    acct.set_offline_limits(txn_id="lim-2", till_budget_minor=50_000, member_limit_minor=0)
    assert acct.offline_limits().till_budget_minor == 50_000
    assert offline(acct, "T1-f-1", 1).status is Status.OFFLINE_LIMIT_EXCEEDED   # 0: no offline sales


def test_a_covered_offline_sale_is_refunded_like_a_charge_one_that_left_a_debt_is_not(acct):
    assert offline(acct, "T1-f-cover", 2_000).applied
    back = acct.refund("A-1", 1_500, txn_id="T1-r-1", original_txn_id="T1-f-cover")
    assert back.applied and back.balance_minor == 4_500
    over = acct.refund("A-1", 501, txn_id="T1-r-2", original_txn_id="T1-f-cover")
    assert over.status == Status.REFUND_EXCEEDS_ORIGINAL and acct.balance("A-1") == 4_500
    # 4,500 left: a 6,000 sale leaves a 1,500 debt and cannot be refunded (settle the debt)
    left = offline(acct, "T1-f-debt", 6_000)
    assert left.applied and left.debt_minor == 1_500 and acct.balance("A-1") == 0
    refused = acct.refund("A-1", 100, txn_id="T1-r-3", original_txn_id="T1-f-debt")
    assert refused.status == Status.ORIGINAL_NOT_FOUND
    assert acct.balance("A-1") == 0 and acct.offline_debt("A-1") == 1_500



def test_a_top_up_that_pays_a_debt_writes_account_and_record_once_each(acct):
    """credit.lua writes the balance, bonus, last journal id and the debt left in one HSET,
    and the decision with the debt paid ('dp') in one HSET + EXPIRE: what readers see."""
    offline(acct, "T1-f-1", 6_000)
    part = acct.partitions[0]
    for txn, amount, bonus, paid, left in (("c-1", 400, 50, 400, 600), ("c-2", 700, 0, 600, 0)):
        r = acct.credit("A-1", amount, txn_id=txn, bonus_minor=bonus)
        a = acct.client.hgetall(part.account("A-1"))
        assert a["lj"] == r.journal_id and a.get("dt", "0") == str(left) and a["bo"] == "50"
        rec = acct.client.hgetall(part.txn(txn))
        assert r.debt_minor == paid and rec == {"f": rec["f"], "s": "A", "b": str(r.balance_minor),
                                                "j": r.journal_id, "dp": str(paid)}
        assert 0 < acct.client.ttl(part.txn(txn)) <= acct.retention_s
        assert acct.credit("A-1", amount, txn_id=txn, bonus_minor=bonus).debt_minor == int(rec["dp"])
    assert acct.balance("A-1") == 50 + 100
