"""Dynamic member codes in core (issue 31 item 7): RFC 6238 codes checked at given times
(never by sleeping): valid during their own 30 s step and the next only (≤ 60 s), once
(a second use refused as code_used, except the retry of the same charge's txn id),
expired ones refused as code_expired, wrong ones counted towards the member's lockout
shared with the payment PIN, the secret answered once at enrolment."""
from __future__ import annotations

import time

import pyotp
import pytest

from core import InvalidRequest, Ledger
from core.member_codes import (STEP_S, MemberCodes, code_key, is_member_code, member_code_text, parse_member_code,
                               secret_of_uri, step_key)
from core.member_pins import MemberPins, lock_key


@pytest.fixture
def codes(redis_url):
    ledger = Ledger.from_url(redis_url)
    ledger.init()
    yield MemberCodes(ledger.client, pins=MemberPins(ledger.client))
    ledger.close()


def _step_start() -> float:
    """The start of the current 30 s step (checks then run at offsets from it)."""
    return (time.time() // STEP_S) * STEP_S


def test_enrol_answers_the_secret_once_as_an_otpauth_uri(codes):
    assert not codes.enrolled("A1")
    uri = codes.enrol("A1")
    assert uri.startswith("otpauth://totp/") and "issuer=Cashier" in uri
    secret = secret_of_uri(uri)
    assert len(secret) == 32 and codes.client.hget(code_key("A1"), "secret") == secret
    assert codes.enrolled("A1") and codes.client.ttl(code_key("A1")) == -1     # never expires
    second = secret_of_uri(codes.enrol("A1"))                   # enrolling again replaces it
    assert second != secret
    old = parse_member_code(member_code_text(secret, "A1"))
    assert codes.verify(old, "T1-d-old").outcome == "wrong_code"   # the old phone is cut off
    assert codes.remove("A1") and not codes.enrolled("A1")


def test_a_code_works_once_and_for_at_most_60_s(codes):
    secret = secret_of_uri(codes.enrol("A1"))
    t0 = _step_start()
    scanned = parse_member_code(member_code_text(secret, "A1", t0))
    assert scanned.account_id == "A1" and len(scanned.code) == 6
    assert codes.verify(scanned, "T1-d-1", now_s=t0 + 5).ok
    assert codes.verify(scanned, "T1-d-1", now_s=t0 + 6).ok            # the same charge's retry
    assert codes.verify(scanned, "T1-d-2", now_s=t0 + 7).outcome == "code_used"    # another charge
    # the next step's code works once; an earlier step's code is refused after it
    t1 = t0 + STEP_S
    nxt = parse_member_code(member_code_text(secret, "A1", t1))
    assert codes.verify(nxt, "T1-d-3", now_s=t1 + 1).ok
    assert codes.verify(scanned, "T1-d-1", now_s=t1 + 2).outcome == "code_used"
    # a fresh code, unused: valid in its own step and the next, expired after (≤ 60 s)
    t4 = t0 + 4 * STEP_S
    fresh = parse_member_code(member_code_text(secret, "A1", t4))
    assert codes.verify(fresh, "T1-d-4", now_s=t4 + 2 * STEP_S).outcome == "code_expired"
    assert codes.verify(fresh, "T1-d-4", now_s=t4 + 3 * STEP_S).outcome == "code_expired"
    assert codes.verify(fresh, "T1-d-4", now_s=t4 + 2 * STEP_S - 1).ok  # 59 s after its step began
    assert not codes.client.exists(lock_key("A1"))                    # used/expired are not guesses
    assert 0 < codes.client.pttl(step_key("A1")) <= 4 * STEP_S * 1000


def test_wrong_codes_lock_with_the_pin_and_a_reset_lifts_it(codes):
    secret = secret_of_uri(codes.enrol("A1"))
    right = parse_member_code(member_code_text(secret, "A1"))
    wrong = parse_member_code(f"MC1:A1:{(int(right.code) + 1) % 1_000_000:06d}")
    answers = [codes.verify(wrong, f"T1-d-w{n}") for n in range(5)]
    assert [(a.outcome, a.attempts_left) for a in answers] == [
        ("wrong_code", 4), ("wrong_code", 3), ("wrong_code", 2), ("wrong_code", 1), ("locked", 0)]
    assert codes.verify(right, "T1-d-r").outcome == "locked"            # the right code no longer opens it
    assert codes.pins.locked("A1")                                      # one lock for PIN and code
    codes.pins.reset("A1")
    assert codes.verify(right, "T1-d-r").ok
    assert codes.remove("A1")
    assert codes.verify(right, "T1-d-x").outcome == "not_enrolled"


def test_the_scanned_format_is_checked_and_names_the_field(codes):
    assert is_member_code("MC1:A1:123456") and not is_member_code("6222000011112222")
    assert parse_member_code(" MC1:A1:123456 ").code == "123456"
    for bad in ("", "MC1:A1", "MC2:A1:123456", "MC1:A1:12345", "MC1:A1:12345a", "MC1::123456",
                "MC1:A1:123456:9", "MC1:A 1:123456"):
        with pytest.raises(InvalidRequest) as refused:
            parse_member_code(bad)
        assert refused.value.field == "member_code", bad
    assert pyotp.TOTP(pyotp.random_base32()).interval == STEP_S       # the library's default step is ours
