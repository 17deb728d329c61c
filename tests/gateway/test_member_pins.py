"""Member payment PINs through the gateway (issue 31 items 6 and 8): the member sets a
6-digit PIN entered twice; a charge (deduct, hold) above the shop's threshold of a member
who has one is CONFIRMATION_REQUIRED without it (nothing applied, nothing stored), applied
with it; 5 wrong lock it (the answer says how many are left, then locked) until a
supervisor resets it; a retry of a confirmed charge needs no second PIN; the PIN and its
hash are in no answer and no log line."""
from __future__ import annotations

import json
import signal

import pytest

from core import InvalidRequest
from core.member_pins import hash_key
from core.records import DeductRequest
from core.result import Status
from gateway.wire import GatewayRefused
from tests.gateway.conftest import PLAIN, PLAIN_PIN, SUPERVISOR, SUPERVISOR_PIN, GatewayProcess, make_client

THRESHOLD = 5_000
MEMBER_PIN, OTHER_PIN = "246810", "135791"


@pytest.fixture
def member(till, shop):
    assert till.open_account("M1", txn_id="T1-o-m1").applied
    assert till.credit("M1", 50_000, txn_id="T1-c-m1").applied
    assert shop.set_member_pin_threshold(THRESHOLD, txn_id="adm-mpin-1").applied
    return "M1"


def test_the_pin_is_set_twice_and_format_and_mismatch_are_refused(gateway, shop, member, till):
    with pytest.raises(InvalidRequest) as bad:
        till.set_member_pin(member, MEMBER_PIN, OTHER_PIN)
    assert bad.value.field == "pin_again"
    for wrong in ("12345", "1234567", "12a456"):
        with pytest.raises(InvalidRequest) as bad:
            till.set_member_pin(member, wrong, wrong)
        assert bad.value.field == "pin" and "6 digits" in bad.value.reason
    with pytest.raises(InvalidRequest) as bad:
        till.set_member_pin("NOPE", MEMBER_PIN, MEMBER_PIN)
    assert bad.value.field == "account_id"
    assert till._request("GET", f"/accounts/{member}/profile")[1]["member_pin"] == {"set": False, "locked": False}
    answer = till.set_member_pin(member, MEMBER_PIN, MEMBER_PIN)
    assert answer == {"outcome": "ok", "account_id": member, "member_pin_set": True}
    with pytest.raises(GatewayRefused) as refused:           # changing it needs the old one
        till.set_member_pin(member, OTHER_PIN, OTHER_PIN)
    assert refused.value.code == "member_pin_refused" and refused.value.detail["outcome"] == "old_pin_required"
    with pytest.raises(GatewayRefused) as refused:
        till.set_member_pin(member, OTHER_PIN, OTHER_PIN, old_pin="000000")
    assert refused.value.detail == {"outcome": "wrong_pin", "attempts_left": 4}
    till.set_member_pin(member, OTHER_PIN, OTHER_PIN, old_pin=MEMBER_PIN)
    assert till.deduct(member, 6_000, txn_id="T1-d-chg", member_pin=OTHER_PIN).applied


def test_a_charge_above_the_threshold_needs_the_members_pin(gateway, shop, member, till):
    assert till.deduct(member, 9_000, txn_id="T1-d-nopin").applied        # no PIN set: none needed
    till.set_member_pin(member, MEMBER_PIN, MEMBER_PIN)
    before = shop.balance(member)
    for kind, call in (("deduct", lambda **kw: till.deduct(member, 6_000, txn_id="T1-d-1", **kw)),
                       ("hold", lambda **kw: till.hold(member, 6_000, txn_id="T1-h-1", ttl_s=600, **kw))):
        b0, a0 = shop.balance(member), shop.available(member)
        r = call()
        assert r.status is Status.CONFIRMATION_REQUIRED and not r.applied and not r.replayed and r.kind == kind
        assert (shop.balance(member), shop.available(member)) == (b0, a0)
        r = call()                                   # still not stored: asked again, the same answer
        assert r.status is Status.CONFIRMATION_REQUIRED
        r = call(member_pin=MEMBER_PIN)              # the same txn id with the PIN: decided now
        assert r.applied and not r.replayed
        again = call()                               # a retry of the confirmed charge: no second PIN
        assert again.applied and again.replayed and again.balance_minor == r.balance_minor
    assert shop.balance(member) == before - 6_000 and shop.available(member) == before - 12_000
    assert till.deduct(member, THRESHOLD, txn_id="T1-d-at").applied       # at the threshold: no PIN
    assert shop.set_member_pin_threshold(0, txn_id="adm-mpin-0").applied  # 0: every charge
    assert till.deduct(member, 1, txn_id="T1-d-one").status is Status.CONFIRMATION_REQUIRED
    with pytest.raises(InvalidRequest) as bad:       # a malformed PIN is a field error, not a guess
        till.deduct(member, 1, txn_id="T1-d-one", member_pin="12")
    assert bad.value.field == "member_pin"
    assert till.deduct(member, 1, txn_id="T1-d-one", member_pin=MEMBER_PIN).applied


def test_five_wrong_lock_it_and_a_supervisor_resets_it(gateway, shop, member, till):
    till.set_member_pin(member, MEMBER_PIN, MEMBER_PIN)
    before = shop.balance(member)
    left = []
    for n in range(5):
        with pytest.raises(GatewayRefused) as refused:
            till.deduct(member, 6_000, txn_id=f"T1-d-w{n}", member_pin=OTHER_PIN)
        assert refused.value.code == "member_pin_refused" and refused.value.field == "member_pin"
        left.append((refused.value.detail["outcome"], refused.value.detail["attempts_left"]))
    assert left == [("wrong_pin", 4), ("wrong_pin", 3), ("wrong_pin", 2), ("wrong_pin", 1), ("locked", 0)]
    with pytest.raises(GatewayRefused) as refused:           # the right PIN no longer opens it
        till.deduct(member, 6_000, txn_id="T1-d-w9", member_pin=MEMBER_PIN)
    assert refused.value.detail["outcome"] == "locked"
    r = till.deduct(member, 6_000, txn_id="T1-d-w9")
    assert r.status is Status.CONFIRMATION_REQUIRED
    assert till._request("GET", f"/accounts/{member}/profile")[1]["member_pin"] == {"set": True, "locked": True}
    assert shop.balance(member) == before
    # the reset needs a supervisor: none, a wrong PIN, the cashier themselves are refused
    with pytest.raises(InvalidRequest) as bad:
        till.reset_member_pin(member)
    assert bad.value.field == "approval"
    with pytest.raises(GatewayRefused) as refused:
        till.reset_member_pin(member, supervisor_id=SUPERVISOR, supervisor_pin="0000")
    assert refused.value.code == "approval_refused"
    with pytest.raises(GatewayRefused) as refused:
        till.reset_member_pin(member, supervisor_id=PLAIN, supervisor_pin=PLAIN_PIN)
    assert refused.value.code == "approval_refused" and refused.value.detail["outcome"] == "not_supervisor"
    signin, grant = till.approve(SUPERVISOR, SUPERVISOR_PIN, kind="member_pin_reset")
    assert signin.ok
    answer = till.reset_member_pin(member, approval_grant=grant.grant)
    assert answer == {"outcome": "ok", "account_id": member, "had_pin": True, "approved_by": SUPERVISOR}
    _, refund_grant = till.approve(SUPERVISOR, SUPERVISOR_PIN, kind="refund")
    with pytest.raises(GatewayRefused) as refused:           # a grant for another kind
        till.reset_member_pin(member, approval_grant=refund_grant.grant)
    assert refused.value.detail["outcome"] == "other_operation"
    assert till.deduct(member, 6_000, txn_id="T1-d-after").applied         # no PIN now
    till.set_member_pin(member, OTHER_PIN, OTHER_PIN)                       # the member sets a new one
    assert till.deduct(member, 6_000, txn_id="T1-d-new", member_pin=OTHER_PIN).applied
    assert till.reset_member_pin(member, supervisor_id=SUPERVISOR, supervisor_pin=SUPERVISOR_PIN)["had_pin"]


def test_a_batch_answers_confirmation_required_at_the_item(gateway, shop, member, till):
    assert till.open_account("M2", txn_id="T1-o-m2").applied
    assert till.credit("M2", 50_000, txn_id="T1-c-m2").applied
    till.set_member_pin(member, MEMBER_PIN, MEMBER_PIN)
    answers = till.deduct_many([DeductRequest(member, 6_000, "T1-b-1", None, None),
                                DeductRequest(member, 100, "T1-b-2", None, None),
                                DeductRequest("M2", 6_000, "T1-b-3", None, None)])
    assert [a.status for a in answers] == [Status.CONFIRMATION_REQUIRED, Status.APPLIED, Status.APPLIED]
    assert shop.balance(member) == 50_000 - 100 and shop.balance("M2") == 44_000
    with pytest.raises(InvalidRequest) as bad:               # a batch item carries no member PIN
        till._request("POST", "/ops/deduct_many", body={"items": [
            {"txn_id": "T1-b-4", "account_id": member, "amount_minor": 6_000, "member_pin": MEMBER_PIN}]})
    assert bad.value.field == "items[0].member_pin"


def test_the_pin_and_its_hash_are_in_no_answer_and_no_log(shop, redis_url):
    gw = GatewayProcess(redis_url, "--approval-above-minor", "1000000", "--log-level", "debug").start()
    answers = []
    try:
        till = make_client(gw, shop.tokens["T1"])
        assert till.open_account("M1", txn_id="T1-o-m1").applied
        assert till.credit("M1", 50_000, txn_id="T1-c-m1").applied
        assert shop.set_member_pin_threshold(THRESHOLD, txn_id="adm-mpin-1").applied
        answers.append(till.set_member_pin("M1", MEMBER_PIN, MEMBER_PIN))
        stored = shop.client.hget(hash_key("M1"), "pin")
        assert stored.startswith("scrypt$")
        for n, pin in enumerate((OTHER_PIN, OTHER_PIN, MEMBER_PIN)):
            try:
                answers.append(till.deduct("M1", 6_000, txn_id=f"T1-d-{n}", member_pin=pin))
            except GatewayRefused as exc:
                answers.append((exc.code, exc.field, exc.reason, exc.detail))
        answers.append(till._request("GET", "/accounts/M1/profile")[1])
        answers.append(till.set_member_pin("M1", OTHER_PIN, OTHER_PIN, old_pin=MEMBER_PIN))
        _, grant = till.approve(SUPERVISOR, SUPERVISOR_PIN, kind="member_pin_reset")
        answers.append(till.reset_member_pin("M1", approval_grant=grant.grant))
        till.close()
    finally:
        gw.proc.send_signal(signal.SIGTERM)
        _, err = gw.proc.communicate(timeout=15)
    log = err.decode()
    assert "payment PIN" in log and "wrong_pin" in log          # the log did see these requests
    text = json.dumps([a if isinstance(a, (dict, tuple)) else repr(a) for a in answers], default=str)
    for secret in (stored, stored.split("$")[-1], stored.split("$")[-2], MEMBER_PIN, OTHER_PIN):
        assert secret not in log and secret not in text
