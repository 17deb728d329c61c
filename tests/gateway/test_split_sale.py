"""Split-tender sales through the gateway (issue 31 items 1-3): POST /v1/ops/sale runs
core's `Ledger.sale` with deduct's rights (the approval threshold and the member's PIN on
the card leg), POST /v1/ops/tender_refund with refund's (a supervisor approves); bad tenders
are refused naming the field; a retry after a lost reply replays; nothing of a declined
card leg is recorded."""
from __future__ import annotations

import pytest

from core import InvalidRequest, Status, TxnConflict
from gateway.wire import GatewayRefused
from tests.gateway.conftest import SUPERVISOR, SUPERVISOR_PIN
from core.journal_codec import read_range

MEMBER_PIN = "246810"


@pytest.fixture
def member(till):
    assert till.open_account("M1", txn_id="T1-o-m1").applied
    assert till.credit("M1", 3_850, txn_id="T1-c-m1").applied
    return "M1"


def sales_of(shop):
    return [e for p in shop.partitions for _, e in read_range(shop.client, p.journal) if e["kind"] == "sale"]


@pytest.mark.parametrize("method", ["cash", "wechat", "alipay", "bank_card", "other"])
def test_a_split_sale_with_each_tender_kind(shop, till, member, method):
    r = till.sale(member, 3_850, {method: 1_350}, txn_id=f"T1-s-{method}", total_minor=5_200,
                  change_minor=650 if method == "cash" else 0)
    assert (r.status, r.balance_minor, r.kind, r.amount_minor) == (Status.APPLIED, 0, "sale", 3_850)
    [e] = sales_of(shop)
    assert (e["tn"], e["tot"], e["term"], e["cash"]) == (f"{method}:1350", "5200", "T1", "c1")
    assert e.get("chg") == ("650" if method == "cash" else None)


def test_a_declined_card_leg_records_nothing_and_a_retry_replays(shop, till, member):
    r = till.sale(member, 4_000, {"cash": 1_200}, txn_id="T1-s-1", total_minor=5_200)
    assert r.status is Status.INSUFFICIENT_FUNDS and r.balance_minor == 3_850 and sales_of(shop) == []
    ok = till.sale(member, 3_000, {"wechat": 2_200}, txn_id="T1-s-2", total_minor=5_200)
    again = till.sale(member, 3_000, {"wechat": 2_200}, txn_id="T1-s-2", total_minor=5_200)
    assert ok.applied and again.replayed and again.journal_id == ok.journal_id and len(sales_of(shop)) == 1
    with pytest.raises(TxnConflict):
        till.sale(member, 3_000, {"alipay": 2_200}, txn_id="T1-s-2", total_minor=5_200)


@pytest.mark.parametrize("tenders, total, field", [
    ({"cash": 1.5}, 3_002, "tenders.cash"),
    ({"cash": True}, 3_001, "tenders.cash"),
    ({"bitcoin": 100}, 3_100, "tenders"),
    ({}, 3_000, "tenders"),
    ({"cash": 100}, 9_999, "total_minor"),
])
def test_bad_tenders_are_refused_naming_the_field(shop, till, member, tenders, total, field):
    with pytest.raises(InvalidRequest) as info:
        till.sale(member, 3_000, tenders, txn_id="T1-s-bad", total_minor=total)
    assert info.value.field == field and sales_of(shop) == []
    assert shop.balance(member) == 3_850


def test_the_card_leg_needs_the_members_pin_above_the_threshold(shop, till, member):
    assert shop.set_member_pin_threshold(1_000, txn_id="adm-mpin-1").applied
    till.set_member_pin(member, MEMBER_PIN, MEMBER_PIN)
    r = till.sale(member, 3_000, {"cash": 2_200}, txn_id="T1-s-pin", total_minor=5_200)
    assert r.status is Status.CONFIRMATION_REQUIRED and sales_of(shop) == [] and shop.balance(member) == 3_850
    # a card leg under the threshold needs none, whatever the cash
    assert till.sale(member, 500, {"cash": 90_000}, txn_id="T1-s-small", total_minor=90_500).applied
    r = till.sale(member, 3_000, {"cash": 2_200}, txn_id="T1-s-pin", total_minor=5_200, member_pin=MEMBER_PIN)
    assert r.applied and shop.balance(member) == 350


def test_the_card_leg_above_the_approval_threshold_needs_a_supervisor(shop, till, member):
    assert till.credit(member, 2_000_000, txn_id="T1-c-big", supervisor_id=SUPERVISOR,
                       supervisor_pin=SUPERVISOR_PIN).applied
    with pytest.raises(GatewayRefused) as refused:
        till.sale(member, 1_000_001, {"cash": 1}, txn_id="T1-s-big", total_minor=1_000_002)
    assert refused.value.code == "approval_required"
    assert till.sale(member, 1_000_001, {"cash": 1}, txn_id="T1-s-big", total_minor=1_000_002,
                     supervisor_id=SUPERVISOR, supervisor_pin=SUPERVISOR_PIN).applied


def test_refunds_of_a_split_sale_per_tender_need_a_supervisor(shop, till, member):
    assert till.sale(member, 3_000, {"cash": 1_200, "wechat": 1_000}, txn_id="T1-s-1", total_minor=5_200).applied
    with pytest.raises(GatewayRefused) as refused:
        till.tender_refund(member, 1_200, txn_id="T1-t-1", original_txn_id="T1-s-1", method="cash")
    assert refused.value.code == "approval_required"
    sup = dict(supervisor_id=SUPERVISOR, supervisor_pin=SUPERVISOR_PIN)
    assert till.refund(member, 1_000, txn_id="T1-r-1", original_txn_id="T1-s-1", **sup).applied   # partial card
    q = till.tender_refund(member, 700, txn_id="T1-t-1", original_txn_id="T1-s-1", method="cash", **sup)
    assert q.applied and q.kind == "tender_refund" and q.balance_minor == 1_850
    assert till.tender_refund(member, 501, txn_id="T1-t-2", original_txn_id="T1-s-1", method="cash",
                              **sup).status is Status.REFUND_EXCEEDS_ORIGINAL
    assert till.tender_refund(member, 1, txn_id="T1-t-3", original_txn_id="T1-s-1", method="alipay",
                              **sup).status is Status.TENDER_NOT_IN_SALE
    assert till.tender_refund(member, 1_000, txn_id="T1-t-4", original_txn_id="T1-s-1", method="wechat",
                              **sup).applied
    assert shop.sale_tenders(member, "T1-s-1") == {"card": 2_000, "cash": 500, "wechat": 0}


def test_one_approval_covers_a_split_refund_row_and_nothing_else(shop, till, member):
    """The till refunds a split sale as one approved row: the card leg's refund '<id>' and its
    tender refunds '<id>.t<n>' share one grant; another txn id cannot use it."""
    assert till.sale(member, 3_000, {"cash": 1_200, "wechat": 1_000}, txn_id="T1-s-1", total_minor=5_200).applied
    _, grant = till.approve(SUPERVISOR, SUPERVISOR_PIN, kind="refund")
    assert till.refund(member, 3_000, txn_id="T1-r-x", original_txn_id="T1-s-1", approval_grant=grant.grant).applied
    assert till.tender_refund(member, 1_200, txn_id="T1-r-x.t0", original_txn_id="T1-s-1", method="cash",
                              approval_grant=grant.grant).applied
    assert till.tender_refund(member, 1_000, txn_id="T1-r-x.t1", original_txn_id="T1-s-1", method="wechat",
                              approval_grant=grant.grant).applied
    with pytest.raises(GatewayRefused) as refused:          # another operation: not covered
        till.tender_refund(member, 1, txn_id="T1-r-y.t0", original_txn_id="T1-s-1", method="cash",
                           approval_grant=grant.grant)
    assert refused.value.code == "approval_refused"
    # a split refund without a card part: the grant binds to the row's id all the same
    assert till.sale(member, 100, {"cash": 500}, txn_id="T1-s-2", total_minor=600).applied
    _, grant = till.approve(SUPERVISOR, SUPERVISOR_PIN, kind="refund")
    assert till.tender_refund(member, 500, txn_id="T1-r-z.t0", original_txn_id="T1-s-2", method="cash",
                              approval_grant=grant.grant).applied
    with pytest.raises(GatewayRefused):
        till.refund(member, 100, txn_id="T1-r-w", original_txn_id="T1-s-2", approval_grant=grant.grant)
