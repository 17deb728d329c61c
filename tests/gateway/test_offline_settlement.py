"""Offline settlement through the gateway (issue 27): on the terminal's credential with the
cashier the till states, bounded on the server per till (offline_till_budget) and per
member and till (offline_member_limit, in the ledger's script) whatever a till claims; the
till's offline facts (limits, member-PIN threshold, blocked cards) from GET /v1/offline."""
from __future__ import annotations

import time

import pytest

from core import InvalidRequest, Status
from gateway.wire import GatewayRefused
from tests.gateway.conftest import CASHIER, make_client

MADE_AT_MS = int(time.time() * 1000) - 120_000


@pytest.fixture
def funded(till, shop):
    assert till.open_account("A1", txn_id="T1-o-1").applied
    assert till.credit("A1", 5_000, txn_id="T1-c-1").applied
    assert till.open_account("B1", txn_id="T1-o-2").applied
    assert till.credit("B1", 50_000, txn_id="T1-c-2").applied
    shop.set_offline_limits(txn_id="lim-1", member_limit_minor=10_000, till_budget_minor=15_000,
                            max_duration_s=7_200)
    return till


def test_settlement_goes_with_the_stated_cashier_and_leaves_a_debt_past_the_balance(funded, shop, gateway):
    # no cashier signed in: the credential alone settles (the sale happened earlier)
    bare = make_client(gateway, shop.tokens["T1"], sign_in=None)
    r = bare.offline_deduct("A1", 6_000, txn_id="T1-f-1", made_at_ms=MADE_AT_MS, made_by=CASHIER)
    assert r.applied and r.balance_minor == 0 and r.debt_minor == 1_000 and r.kind == "offline"
    again = bare.offline_deduct("A1", 6_000, txn_id="T1-f-1", made_at_ms=MADE_AT_MS, made_by=CASHIER)
    assert again.replayed and again.debt_minor == 1_000
    entry = shop.journal("A1", count=1)[0]
    assert (entry.kind, entry.terminal_id, entry.cashier_id) == ("offline_debt", "T1", CASHIER)
    assert shop.offline_debt("A1") == 1_000
    # while the debt is open the member cannot spend; a top-up pays it first
    assert funded.deduct("A1", 1, txn_id="T1-d-1").status is Status.DEBT_OPEN
    topup = funded.credit("A1", 3_000, txn_id="T1-c-3")
    assert topup.applied and topup.debt_minor == 1_000 and topup.balance_minor == 2_000
    bare.close()


def test_the_till_budget_is_checked_on_the_server(funded, shop, gateway):
    t2 = make_client(gateway, shop.tokens["T2"], sign_in=None)
    assert t2.offline_deduct("B1", 10_000, txn_id="T2-f-1", made_at_ms=MADE_AT_MS, made_by=CASHIER).applied
    assert t2.offline_deduct("A1", 5_000, txn_id="T2-f-2", made_at_ms=MADE_AT_MS, made_by=CASHIER).applied
    past = t2.offline_deduct("A1", 1, txn_id="T2-f-3", made_at_ms=MADE_AT_MS + 1, made_by=CASHIER)
    assert past.status is Status.OFFLINE_LIMIT_EXCEEDED and not past.applied
    assert shop.balance("A1") == 0 and shop.balance("B1") == 40_000
    # a retry of a settled sale is still answered its first decision
    assert t2.offline_deduct("A1", 5_000, txn_id="T2-f-2", made_at_ms=MADE_AT_MS, made_by=CASHIER).replayed
    # another till has its own budget; the member bound is per till
    t1 = make_client(gateway, shop.tokens["T1"], sign_in=None)
    assert t1.offline_deduct("B1", 10_000, txn_id="T1-f-9", made_at_ms=MADE_AT_MS, made_by=CASHIER).applied
    limit = t1.offline_deduct("B1", 1, txn_id="T1-f-10", made_at_ms=MADE_AT_MS, made_by=CASHIER)
    assert limit.status is Status.OFFLINE_LIMIT_EXCEEDED
    # a declined settlement gave its budget back: 10,000 of 15,000 used by T1
    assert t1.offline_deduct("A1", 5_000, txn_id="T1-f-11", made_at_ms=MADE_AT_MS, made_by=CASHIER).applied
    t1.close()
    t2.close()


def test_bad_settlements_are_refused_naming_the_field(funded, shop, gateway):
    bare = make_client(gateway, shop.tokens["T1"], sign_in=None)
    with pytest.raises(InvalidRequest) as e:
        bare.offline_deduct("A1", 100, txn_id="T1-f-1", made_at_ms=int(time.time() * 1000) + 3_600_000,
                            made_by=CASHIER)
    assert e.value.field == "made_at_ms"
    with pytest.raises(InvalidRequest) as e:
        bare._op("offline_deduct", "T1-f-2", None, "c2", session="", account_id="A1", amount_minor=100,
                 made_at_ms=MADE_AT_MS, made_by=CASHIER)
    assert e.value.field == "cashier_id"
    with pytest.raises(GatewayRefused) as e:
        bare.offline_deduct("A1", 100, txn_id="T1-f-3", made_at_ms=MADE_AT_MS, made_by=CASHIER, terminal_id="T2")
    assert e.value.field == "terminal_id"
    with pytest.raises(InvalidRequest) as e:
        bare._op("offline_deduct", "T1-f-4", None, None, session="", account_id="A1", amount_minor=100,
                 made_at_ms=1.5, made_by=CASHIER)
    assert e.value.field == "made_at_ms"
    assert shop.balance("A1") == 5_000
    # a refused settlement used none of the till's budget (15,000)
    assert bare.offline_deduct("B1", 10_000, txn_id="T1-f-5", made_at_ms=MADE_AT_MS, made_by=CASHIER).applied
    assert bare.offline_deduct("A1", 5_000, txn_id="T1-f-6", made_at_ms=MADE_AT_MS, made_by=CASHIER).applied
    bare.close()


def test_offline_info_lists_limits_threshold_and_blocked_cards(funded, shop, gateway):
    assert funded.issue_card("A1", "CARD-1", txn_id="T1-n-1").applied
    assert funded.issue_card("A1", "CARD-2", txn_id="T1-n-2").applied
    assert funded.block_card("CARD-1", txn_id="T1-x-1", reason="lost").applied
    shop.set_member_pin_threshold(2_000, txn_id="pin-1")
    bare = make_client(gateway, shop.tokens["T2"], sign_in=None)
    info = bare.offline_info()
    assert info["blocked_cards"] == ["CARD-1"]
    assert (info["member_limit_minor"], info["till_budget_minor"], info["max_duration_s"]) == (10_000, 15_000, 7_200)
    assert info["member_pin_above_minor"] == 2_000 and abs(info["as_of_ms"] - time.time() * 1000) < 60_000
    bare.close()
