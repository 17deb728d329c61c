"""Dynamic member codes through the gateway (issue 31 items 7 and 8): enrolment needs a
supervisor (a grant of kind member_code_enrol, or their id and PIN) and answers the secret
once; a charge above the threshold of an enrolled member is CONFIRMATION_REQUIRED without
a confirmation, applied with a valid `member_code`; a code reused by another charge or
expired is refused with its own outcome, nothing applied; the retry of a confirmed
charge needs no second code; wrong codes count towards the lockout the PIN shares; the
secret is in no log."""
from __future__ import annotations

import signal
import time

import pytest

from core import InvalidRequest
from core.member_codes import STEP_S, code_key, member_code_text, secret_of_uri
from core.result import Status
from gateway.wire import GatewayRefused
from tests.gateway.conftest import PLAIN, PLAIN_PIN, SUPERVISOR, SUPERVISOR_PIN, GatewayProcess, make_client

THRESHOLD = 5_000
MEMBER_PIN = "246810"


@pytest.fixture
def member(till, shop):
    assert till.open_account("M1", txn_id="T1-o-m1").applied
    assert till.credit("M1", 50_000, txn_id="T1-c-m1").applied
    assert shop.set_member_pin_threshold(THRESHOLD, txn_id="adm-mpin-1").applied
    return "M1"


def _enrol(till, member) -> str:
    _, grant = till.approve(SUPERVISOR, SUPERVISOR_PIN, kind="member_code_enrol")
    answer = till.enrol_member_code(member, approval_grant=grant.grant)
    assert answer["outcome"] == "ok" and answer["approved_by"] == SUPERVISOR
    return secret_of_uri(answer["otpauth_uri"])


def test_enrolment_needs_a_supervisor_and_answers_the_secret_once(gateway, shop, member, till):
    with pytest.raises(InvalidRequest) as bad:
        till.enrol_member_code(member)
    assert bad.value.field == "approval"
    with pytest.raises(GatewayRefused) as refused:
        till.enrol_member_code(member, supervisor_id=PLAIN, supervisor_pin=PLAIN_PIN)
    assert refused.value.code == "approval_refused" and refused.value.detail["outcome"] == "not_supervisor"
    _, reset_grant = till.approve(SUPERVISOR, SUPERVISOR_PIN, kind="member_pin_reset")
    with pytest.raises(GatewayRefused) as refused:           # a grant for another kind
        till.enrol_member_code(member, approval_grant=reset_grant.grant)
    assert refused.value.detail["outcome"] == "other_operation"
    with pytest.raises(InvalidRequest) as bad:
        till.enrol_member_code("NOPE", supervisor_id=SUPERVISOR, supervisor_pin=SUPERVISOR_PIN)
    assert bad.value.field == "account_id"
    profile = till._request("GET", f"/accounts/{member}/profile")[1]
    assert profile["member_code"] == {"enrolled": False}
    secret = _enrol(till, member)
    assert shop.client.hget(code_key(member), "secret") == secret
    profile = till._request("GET", f"/accounts/{member}/profile")[1]
    assert profile["member_code"] == {"enrolled": True} and secret not in str(profile)


def test_a_code_confirms_one_charge_once(gateway, shop, member, till):
    assert till.deduct(member, 9_000, txn_id="T1-d-none").applied          # nothing enrolled: none needed
    secret = _enrol(till, member)
    before = shop.balance(member)
    r = till.deduct(member, 6_000, txn_id="T1-d-1")
    assert r.status is Status.CONFIRMATION_REQUIRED and not r.applied
    code = member_code_text(secret, member)
    r = till.deduct(member, 6_000, txn_id="T1-d-1", member_code=code)
    assert r.applied and not r.replayed
    again = till.deduct(member, 6_000, txn_id="T1-d-1")                    # a retry: no second code
    assert again.replayed and again.balance_minor == r.balance_minor
    again = till.deduct(member, 6_000, txn_id="T1-d-1", member_code=code)  # nor a check of the old one
    assert again.replayed
    with pytest.raises(GatewayRefused) as refused:                         # reused by another charge
        till.hold(member, 6_000, txn_id="T1-h-2", ttl_s=600, member_code=code)
    assert refused.value.code == "member_code_refused" and refused.value.field == "member_code"
    assert refused.value.detail == {"outcome": "code_used", "attempts_left": 0}
    assert shop.balance(member) == before - 6_000 and shop.available(member) == before - 6_000
    assert till.deduct(member, THRESHOLD, txn_id="T1-d-at").applied        # at the threshold: none needed
    with pytest.raises(InvalidRequest) as bad:                             # malformed: a field error
        till.deduct(member, 6_000, txn_id="T1-d-3", member_code="MC1:M1:12")
    assert bad.value.field == "member_code"
    with pytest.raises(GatewayRefused) as refused:        # no PIN set: a PIN does not confirm it
        till.deduct(member, 6_000, txn_id="T1-d-4", member_pin="123456")
    assert refused.value.code == "member_pin_refused" and refused.value.detail["outcome"] == "no_pin"
    assert shop.balance(member) == before - 6_000 - THRESHOLD


def test_an_expired_code_another_members_and_wrong_ones_are_refused(gateway, shop, member, till):
    secret = _enrol(till, member)
    assert till.open_account("M2", txn_id="T1-o-m2").applied
    before = shop.balance(member)
    stale = member_code_text(secret, member, time.time() - 3 * STEP_S)     # shown 90-120 s ago
    with pytest.raises(GatewayRefused) as refused:
        till.deduct(member, 6_000, txn_id="T1-d-old", member_code=stale)
    assert refused.value.detail == {"outcome": "code_expired", "attempts_left": 0}
    with pytest.raises(GatewayRefused) as refused:                         # M1's code for M2's charge
        till.deduct("M2", 1, txn_id="T1-d-m2", member_code=member_code_text(secret, member))
    assert refused.value.code == "member_code_refused" and refused.value.detail["outcome"] == "other_member"
    right = member_code_text(secret, member)
    wrong = f"MC1:{member}:{(int(right[-6:]) + 1) % 1_000_000:06d}"
    left = []
    for n in range(5):
        with pytest.raises(GatewayRefused) as refused:
            till.deduct(member, 6_000, txn_id=f"T1-d-w{n}", member_code=wrong)
        left.append((refused.value.detail["outcome"], refused.value.detail["attempts_left"]))
    assert left == [("wrong_code", 4), ("wrong_code", 3), ("wrong_code", 2), ("wrong_code", 1), ("locked", 0)]
    with pytest.raises(GatewayRefused) as refused:
        till.deduct(member, 6_000, txn_id="T1-d-r", member_code=right)
    assert refused.value.detail["outcome"] == "locked"
    till.set_member_pin(member, MEMBER_PIN, MEMBER_PIN)
    with pytest.raises(GatewayRefused) as refused:                         # one lock for code and PIN
        till.deduct(member, 6_000, txn_id="T1-d-p", member_pin=MEMBER_PIN)
    assert refused.value.detail["outcome"] == "locked"
    assert till._request("GET", f"/accounts/{member}/profile")[1]["member_pin"]["locked"]
    assert shop.balance(member) == before
    till.reset_member_pin(member, supervisor_id=SUPERVISOR, supervisor_pin=SUPERVISOR_PIN)
    assert till.deduct(member, 6_000, txn_id="T1-d-r", member_code=right).applied


def test_the_secret_is_in_no_log_and_no_answer_but_the_enrolment(shop, redis_url):
    gw = GatewayProcess(redis_url, "--approval-above-minor", "1000000", "--log-level", "debug").start()
    try:
        till = make_client(gw, shop.tokens["T1"])
        assert till.open_account("M1", txn_id="T1-o-m1").applied
        assert till.credit("M1", 50_000, txn_id="T1-c-m1").applied
        secret = _enrol(till, "M1")
        profile = till._request("GET", "/accounts/M1/profile")[1]
        assert till.deduct("M1", 6_000, txn_id="T1-d-1", member_code=member_code_text(secret, "M1")).applied
        till.close()
    finally:
        gw.proc.send_signal(signal.SIGTERM)
        _, err = gw.proc.communicate(timeout=15)
    log = err.decode()
    assert "member code enrolled" in log
    assert secret not in log and secret not in str(profile)
