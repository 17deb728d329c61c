"""Supervisor approvals as the gateway's grants (POST /v1/approvals): the PIN is checked on
the server once, the grant is good for one operation of the session that asked (a retry
of that txn id may carry it again), and for nothing else; a Z record goes on the
terminal's credential alone; the ping says the shop's retention."""
from __future__ import annotations

import dataclasses

import pytest

from core import InvalidRequest

from core.shifts import ShiftTotals
from gateway.wire import GatewayRefused
from tests.gateway.conftest import PLAIN, PLAIN_PIN, SUPERVISOR, SUPERVISOR_PIN, make_client


@pytest.fixture
def account(till, shop):
    assert till.open_account("A1", txn_id="T1-o-1").applied
    assert till.credit("A1", 5_000, txn_id="T1-c-1").applied
    assert till.deduct("A1", 1_000, txn_id="T1-d-1").applied
    return "A1"


def test_a_grant_approves_one_operation_and_its_retries_only(gateway, shop, account, till):
    signin, grant = till.approve(SUPERVISOR, SUPERVISOR_PIN, kind="refund")
    assert signin.ok and grant.supervisor_id == SUPERVISOR and grant.grant
    first = till.refund("A1", 300, txn_id="T1-r-1", original_txn_id="T1-d-1", approval_grant=grant.grant)
    assert first.applied and till.last_approved_by == SUPERVISOR
    again = till.refund("A1", 300, txn_id="T1-r-1", original_txn_id="T1-d-1", approval_grant=grant.grant)
    assert again.replayed and shop.balance("A1") == 4_300
    with pytest.raises(GatewayRefused) as refused:          # the same grant for a second refund
        till.refund("A1", 300, txn_id="T1-r-2", original_txn_id="T1-d-1", approval_grant=grant.grant)
    assert refused.value.code == "approval_refused" and refused.value.detail["outcome"] == "used"
    assert shop.balance("A1") == 4_300


def test_a_grant_is_for_its_kind_its_session_and_its_terminal(gateway, shop, account, till):
    _, for_close = till.approve(SUPERVISOR, SUPERVISOR_PIN, kind="close")
    with pytest.raises(GatewayRefused) as refused:
        till.refund("A1", 100, txn_id="T1-r-3", original_txn_id="T1-d-1", approval_grant=for_close.grant)
    assert refused.value.detail["outcome"] == "other_operation"
    _, grant = till.approve(SUPERVISOR, SUPERVISOR_PIN, kind="refund")
    other_till = make_client(gateway, shop.tokens["T2"])            # a grant captured from T1
    assert other_till.deduct("A1", 100, txn_id="T2-d-1").applied
    with pytest.raises(GatewayRefused) as refused:
        other_till.refund("A1", 100, txn_id="T2-r-1", original_txn_id="T2-d-1", approval_grant=grant.grant)
    assert refused.value.code == "approval_refused"
    other_cashier = make_client(gateway, shop.tokens["T1"], sign_in=(PLAIN, PLAIN_PIN))
    with pytest.raises(GatewayRefused) as refused:                  # another cashier's session on T1
        other_cashier.refund("A1", 100, txn_id="T1-r-4", original_txn_id="T1-d-1", approval_grant=grant.grant)
    assert refused.value.code == "approval_refused"
    with pytest.raises(GatewayRefused) as refused:
        till.refund("A1", 100, txn_id="T1-r-5", original_txn_id="T1-d-1", approval_grant="made-up")
    assert refused.value.detail["outcome"] == "expired"
    assert shop.balance("A1") == 3_900                              # only T2's own charge moved money


def test_approval_refusals_say_why_and_count_on_the_server(gateway, shop, account, till):
    signin, grant = till.approve(SUPERVISOR, "0000")
    assert grant is None and signin.outcome == "wrong_pin" and signin.attempts_left == 4
    signin, grant = till.approve(PLAIN, PLAIN_PIN)
    assert grant is None and signin.outcome == "not_supervisor"
    boss = make_client(gateway, shop.tokens["T2"], sign_in=(SUPERVISOR, SUPERVISOR_PIN))
    signin, grant = boss.approve(SUPERVISOR, SUPERVISOR_PIN)
    assert grant is None and signin.outcome == "self_approval"
    with pytest.raises(GatewayRefused) as refused:
        till.approve(SUPERVISOR, SUPERVISOR_PIN, kind="drop_table")
    assert refused.value.code == "kind_refused"
    no_session = make_client(gateway, shop.tokens["T1"], sign_in=None)
    with pytest.raises(GatewayRefused) as refused:
        no_session.approve(SUPERVISOR, SUPERVISOR_PIN)
    assert refused.value.code == "session_required"


def test_sessions_per_cashier_on_one_till(gateway, shop, account, till):
    assert till.sign_in(PLAIN, PLAIN_PIN).ok                        # a second cashier at the same till
    r = till.deduct("A1", 10, txn_id="T1-d-7", cashier_id="c1")     # goes with c1's own session
    assert r.applied and till.load_operation("T1-d-7").cashier_id == "c1"   # journaled as c1's
    till.sign_out("c1")
    with pytest.raises(GatewayRefused) as refused:                  # c1 signed out: nothing new for c1
        till.deduct("A1", 10, txn_id="T1-d-8", cashier_id="c1")
    assert refused.value.code == "session_required"
    assert till.deduct("A1", 10, txn_id="T1-d-7", cashier_id="c1").replayed   # a decided retry: its answer
    assert till.deduct("A1", 10, txn_id="T1-d-9", cashier_id=PLAIN).applied
    assert shop.balance("A1") == 3_980


def test_a_z_record_goes_on_the_terminal_credential_alone(gateway, shop, account, till):
    totals = dataclasses.asdict(ShiftTotals())
    no_session = make_client(gateway, shop.tokens["T1"], sign_in=None)
    r = no_session.close_shift(shift_no=1, totals=totals, txn_id="T1-x-1", closed_by="c1")
    assert r.applied
    assert no_session.close_shift(shift_no=1, totals=totals, txn_id="T1-x-1", closed_by="c1").replayed
    with pytest.raises(InvalidRequest) as refused:                   # without a session it must say who
        no_session.close_shift(shift_no=2, totals=totals, txn_id="T1-x-2")
    assert refused.value.field == "closed_by"


def test_the_ping_says_the_shops_retention(gateway, shop, till):
    answer = till.ping()
    assert answer["retention_s"] == shop.retention_s == till.known_retention_s() == till.retention_s
    assert "memory_share" in answer
