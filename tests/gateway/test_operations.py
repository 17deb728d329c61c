"""Money operations through the gateway: every till operation answers core's Result, the
journal records the terminal of the credential and the cashier of the session, and a retry
of a txn id (also after a gateway restart) gets the first answer and applies nothing new."""
from __future__ import annotations

import pytest

from core import InvalidRequest, Result, Status, TxnConflict
from gateway.wire import CloseResult, GatewayRefused
from tests.gateway.conftest import CASHIER, SUPERVISOR, SUPERVISOR_PIN, make_client


@pytest.fixture
def funded(till):
    assert till.open_account("A1", txn_id="T1-o-1", holder_name="张三", phone="13800138000").applied
    assert till.credit("A1", 10_000, txn_id="T1-c-1").applied
    return till


def test_charge_credit_refund_hold_capture_void(funded, shop):
    till = funded
    charge = till.deduct("A1", 2_500, txn_id="T1-d-1")
    assert isinstance(charge, Result) and charge.status is Status.APPLIED and charge.balance_minor == 7_500
    assert charge.kind == "deduct" and charge.journal_id and not charge.replayed
    refund = till.refund("A1", 500, txn_id="T1-r-1", original_txn_id="T1-d-1",
                         supervisor_id=SUPERVISOR, supervisor_pin=SUPERVISOR_PIN)
    assert refund.applied and refund.balance_minor == 8_000
    assert till.last_approved_by == SUPERVISOR
    hold = till.hold("A1", 3_000, txn_id="T1-h-1", ttl_s=600)
    assert hold.applied and hold.balance_minor == 5_000            # available after the hold
    assert till.balances("A1") == (8_000, 5_000)
    assert till.hold_account("T1-h-1") == "A1"
    capture = till.capture("T1-h-1", 2_000, txn_id="T1-k-1", account_id="A1")
    assert capture.applied and capture.balance_minor == 6_000
    hold2 = till.hold("A1", 1_000, txn_id="T1-h-2", ttl_s=600)
    assert hold2.applied
    void = till.void("T1-h-2", txn_id="T1-v-1")                     # account looked up by core
    assert void.applied and till.balances("A1") == (6_000, 6_000)
    assert till.deduct("A1", 999_999, txn_id="T1-d-2").status is Status.INSUFFICIENT_FUNDS
    assert shop.balance("A1") == 6_000
    for entry in shop.journal("A1", count=50):
        assert (entry.terminal_id, entry.cashier_id) == ("T1", CASHIER), entry


def test_member_operations_and_reads(funded, shop):
    till = funded
    assert till.issue_card("A1", "CARD001", txn_id="T1-n-1").applied
    assert till.resolve_card("CARD001").account_id == "A1"
    assert till.block_card("CARD001", txn_id="T1-x-1", reason="lost").applied
    assert till.resolve_card("CARD001").status is Status.CARD_BLOCKED
    [match] = till.find_members("张")
    assert (match.account_id, match.phone, match.balance_minor) == ("A1", "13800138000", 10_000)
    info = till.account("A1")
    assert (info.balance_minor, info.holder_name, info.principal_minor) == (10_000, "张三", 10_000)
    assert till.promotions() == []
    with pytest.raises(InvalidRequest):
        till.close_account("A1", txn_id="T1-q-1")                     # needs a supervisor
    closed = till.close_account("A1", txn_id="T1-q-1", supervisor_id=SUPERVISOR, supervisor_pin=SUPERVISOR_PIN)
    assert isinstance(closed, CloseResult) and closed.applied and closed.payout_minor == 10_000
    again = till.close_account("A1", txn_id="T1-q-1", supervisor_id=SUPERVISOR, supervisor_pin=SUPERVISOR_PIN)
    assert again.replayed and again.payout_minor == 10_000
    assert till.deduct("A1", 1, txn_id="T1-d-9").status is Status.ACCOUNT_CLOSED
    shift = till.close_shift(shift_no=1, totals={"sales_count": 1, "sales_minor": 100}, txn_id="T1-z-1")
    assert shift.applied and shift.kind == "shift_close"


def test_account_not_found_is_cores(till):
    from core import AccountNotFound
    with pytest.raises(AccountNotFound):
        till.account("NOPE")


def test_retry_gets_the_first_answer_and_applies_nothing(funded, shop):
    first = funded.deduct("A1", 1_000, txn_id="T1-d-7")
    funded.credit("A1", 50, txn_id="T1-c-7")                         # the balance moves on
    again = funded.deduct("A1", 1_000, txn_id="T1-d-7")
    assert again.replayed and again.balance_minor == first.balance_minor == 9_000
    assert shop.balance("A1") == 9_050
    with pytest.raises(TxnConflict):
        funded.deduct("A1", 1_001, txn_id="T1-d-7")                 # same id, other request
    assert shop.balance("A1") == 9_050


def test_retry_after_a_gateway_restart_and_through_another_gateway(funded, shop, gateway, redis_url):
    first = funded.deduct("A1", 700, txn_id="T1-d-8")
    gateway.kill()                                                   # SIGKILL: nothing graceful
    gateway.start()
    again = funded.deduct("A1", 700, txn_id="T1-d-8")                # same client, same session (in Redis)
    assert again.replayed and again.balance_minor == first.balance_minor
    from tests.gateway.conftest import GatewayProcess
    other = GatewayProcess(redis_url).start()
    try:
        client = make_client(other, shop.tokens["T1"], sign_in=None)
        client.session = funded.session                             # a stateless gateway knows the session
        third = client.deduct("A1", 700, txn_id="T1-d-8")
        assert third.replayed and third.balance_minor == first.balance_minor
    finally:
        other.stop()
    assert shop.balance("A1") == 10_000 - 700


def test_top_up_rights_and_approval_threshold(gateway, shop):
    from tests.gateway.conftest import PLAIN, PLAIN_PIN
    plain = make_client(gateway, shop.tokens["T2"], sign_in=(PLAIN, PLAIN_PIN))
    assert plain.open_account("B1", txn_id="T2-o-1").applied
    with pytest.raises(GatewayRefused) as refused:
        plain.credit("B1", 100, txn_id="T2-c-1")
    assert refused.value.code == "approval_required"
    assert plain.credit("B1", 100, txn_id="T2-c-1", supervisor_id=SUPERVISOR, supervisor_pin=SUPERVISOR_PIN).applied
    top = make_client(gateway, shop.tokens["T1"])
    assert top.credit("B1", 5_000_000, txn_id="T1-c-big", supervisor_id=SUPERVISOR,
                      supervisor_pin=SUPERVISOR_PIN).applied
    with pytest.raises(GatewayRefused) as refused:                   # above --approval-above-minor
        top.deduct("B1", 1_000_001, txn_id="T1-d-big")
    assert refused.value.code == "approval_required"
    with pytest.raises(GatewayRefused) as refused:
        top.deduct("B1", 1_000_001, txn_id="T1-d-big", supervisor_id=SUPERVISOR, supervisor_pin="0000")
    assert refused.value.code == "approval_refused" and refused.value.detail["outcome"] == "wrong_pin"
    assert top.deduct("B1", 1_000_001, txn_id="T1-d-big", supervisor_id=SUPERVISOR,
                      supervisor_pin=SUPERVISOR_PIN).applied
    assert shop.balance("B1") == 5_000_100 - 1_000_001


def test_history_reads(funded, shop):
    from core.history import History
    funded.deduct("A1", 400, txn_id="T1-d-h")
    funded.refund("A1", 150, txn_id="T1-r-h", original_txn_id="T1-d-h", supervisor_id=SUPERVISOR,
                  supervisor_pin=SUPERVISOR_PIN)
    past = funded.load_operation("T1-d-h")
    theirs = History(shop).load("T1-d-h")
    assert {f: getattr(past, f) for f in past.__dataclass_fields__} == \
        {f: getattr(theirs, f) for f in past.__dataclass_fields__}
    assert past.applied and past.refundable_minor == 250 and past.cashier_id == CASHIER
    recent = funded.recent("A1", count=5)
    assert [o.txn_id for o in recent] == [o.txn_id for o in History(shop).recent("A1", count=5)]
    with pytest.raises(GatewayRefused) as missing:
        funded.load_operation("T1-d-never")
    assert missing.value.code == "operation_not_found"


def test_a_charge_by_card_carries_the_card_and_a_blocked_card_does_not_pay(funded, shop):
    """Issue 25 item 3 through the gateway: the till sends the card it found the member by;
    a block between the look-up and the charge declines it; an ambiguous string is never
    resolved to one member (item 1)."""
    till = funded
    assert till.issue_card("A1", "CARD001", txn_id="T1-n-1").applied
    found = till.resolve_card("CARD001")
    assert found.active and found.account_id == "A1"
    assert till.block_card("CARD001", txn_id="T1-x-1", reason="stolen").applied
    r = till.deduct(found.account_id, 100, txn_id="T1-d-1", card_no="CARD001")
    assert r.status is Status.CARD_BLOCKED and shop.balance("A1") == 10_000
    assert till.hold("A1", 100, txn_id="T1-h-1", ttl_s=60, card_no="CARD001").status is Status.CARD_BLOCKED
    assert till.issue_card("A1", "CARD002", txn_id="T1-n-2").applied
    assert till.deduct("A1", 100, txn_id="T1-d-2", card_no="CARD002").applied
    assert till.open_account("A2", txn_id="T1-o-2").applied
    assert till.deduct("A2", 1, txn_id="T1-d-3", card_no="CARD002").status is Status.CARD_NOT_THIS_ACCOUNT
    assert till.open_account("CARD002", txn_id="T1-o-3").status is Status.ACCOUNT_ID_TAKEN
    assert till.open_account("A3", txn_id="T1-o-4", phone="13800138000").status is Status.PHONE_TAKEN
    assert till.issue_card("A2", "13800138000", txn_id="T1-n-3").status is Status.CARD_NO_IS_PHONE
    part = shop.schema.partition_of("CARD009")                       # data from before the fix
    shop.client.hset(part.card("CARD009"), mapping={"a": "A1", "st": "active"})
    shop.client.hset(part.account("CARD009"), mapping={"bal": "0", "st": "active"})
    card = till.resolve_card("CARD009")
    assert card.status is Status.LOOKUP_AMBIGUOUS and card.candidates == ("card:A1", "account:CARD009")
