"""Member payment PINs in core (issue 31 item 6): 6 digits, entered twice, a scrypt hash
only, 5 wrong lock it until a reset; the shop's threshold is a journaled setting whose
refused values name the field."""
from __future__ import annotations

import pytest

from core import InvalidRequest, Ledger
from core.member_pins import MemberPins, fails_key, hash_key, lock_key
from core.result import Status


@pytest.fixture
def pins(redis_url):
    ledger = Ledger.from_url(redis_url)
    ledger.init()
    yield MemberPins(ledger.client)
    ledger.close()


def test_set_twice_verify_and_lock_after_five_wrong(pins):
    with pytest.raises(InvalidRequest) as bad:
        pins.set_pin("A1", "123456", "123457")
    assert bad.value.field == "pin_again" and not pins.has_pin("A1")
    for wrong_format in ("12345", "1234567", "12345a", "", "１２３４５６"):
        with pytest.raises(InvalidRequest) as bad:
            pins.set_pin("A1", wrong_format, wrong_format)
        assert bad.value.field == "pin" and "6 digits" in bad.value.reason or bad.value.reason == "must not be empty"
    pins.set_pin("A1", "123456", "123456")
    stored = pins.client.hget(hash_key("A1"), "pin")
    assert stored.startswith("scrypt$") and "123456" not in stored
    with pytest.raises(InvalidRequest) as bad:                  # a second set needs the old PIN
        pins.set_pin("A1", "654321", "654321")
    assert bad.value.field == "old_pin"
    assert pins.verify("A1", "123456").ok
    answers = [pins.verify("A1", "000000") for _ in range(5)]
    assert [a.attempts_left for a in answers[:4]] == [4, 3, 2, 1] and answers[4].outcome == "locked"
    assert pins.verify("A1", "123456").outcome == "locked"     # the right PIN no longer opens it
    assert pins.reset("A1") and not pins.has_pin("A1")
    assert not pins.client.exists(fails_key("A1"), lock_key("A1"))
    assert pins.verify("A1", "123456").outcome == "no_pin"
    pins.set_pin("A1", "111111", "111111")
    assert pins.verify("A1", "111111").ok


def test_the_threshold_setting_is_checked_and_journaled(redis_url):
    ledger = Ledger.from_url(redis_url)
    ledger.init()
    assert ledger.shop_settings().member_pin_above_minor == 0
    for bad_value in (-1, 1.5, True, "100"):
        with pytest.raises(InvalidRequest) as bad:
            ledger.set_member_pin_threshold(bad_value, txn_id="s-bad")
        assert bad.value.field == "member_pin_above_minor"
    with pytest.raises(InvalidRequest) as bad:                  # the script refuses it too
        ledger._setting("member_pin_above", "1x", txn_id="s-bad-2", every_partition=False, terminal_id=None,
                        cashier_id=None)
    assert bad.value.field == "member_pin_above_minor"
    r = ledger.set_member_pin_threshold(20_000, txn_id="s-1")
    assert r.status is Status.APPLIED and ledger.shop_settings().member_pin_above_minor == 20_000
    assert ledger.set_member_pin_threshold(20_000, txn_id="s-1").replayed
    assert ledger.set_member_pin_threshold(0, txn_id="s-2").applied
    assert ledger.shop_settings().member_pin_above_minor == 0
    ledger.close()
