"""cashierctl's member commands against the real Redis: open with a phone, cards
(issue, block, list, show), promotions, close (退卡), member find / reindex and the shop
settings; exit codes 0 done, 1 declined, 2 bad input, 4 conflict; never a traceback."""
from __future__ import annotations

import json

import pytest

from admin.cashierctl import main


@pytest.fixture
def ctl(redis_url, capsys):
    def run(*argv):
        code = main(["--redis-url", redis_url, *argv])
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
        return code, out, err
    assert main(["--redis-url", redis_url, "init"]) == 0
    capsys.readouterr()
    return run


def test_member_card_lifecycle_and_close(ctl):
    assert ctl("open", "M-1", "--holder", "张三", "--phone", "138 0013 8000", "--initial", "100.00")[0] == 0
    code, out, _ = ctl("--json", "member", "find", "zs")
    assert code == 0 and json.loads(out)[0]["account_id"] == "M-1" and json.loads(out)[0]["phone"] == "13800138000"
    assert ctl("member", "find", "13800138000")[1].startswith("M-1")
    assert ctl("member", "find", "nobody")[0] == 1
    assert ctl("card", "issue", "M-1", "CARD-1", "--txn-id", "ci-1")[0] == 0
    code, out, _ = ctl("card", "issue", "M-1", "CARD-1", "--txn-id", "ci-1")
    assert code == 0 and "already done" in out
    assert ctl("card", "issue", "M-1", "CARD-2", "--txn-id", "ci-1")[0] == 4          # txn id reused
    assert ctl("card", "issue", "M-1", "CARD-1")[0] == 1                               # CARD_IN_USE
    assert ctl("card", "block", "CARD-1", "--reason", "lost")[0] == 0
    code, out, _ = ctl("card", "show", "CARD-1")
    assert code == 1 and "CARD_BLOCKED" in out and "M-1" in out
    assert ctl("card", "issue", "M-1", "CARD-2")[0] == 0
    code, out, _ = ctl("--json", "card", "list", "M-1")
    assert [(c["card_no"], c["status"]) for c in json.loads(out)] == [("CARD-1", "CARD_BLOCKED"),
                                                                      ("CARD-2", "CARD_ACTIVE")]
    code, out, _ = ctl("close", "M-1", "--txn-id", "close-1")
    assert code == 0 and "pay out 100.00 in cash" in out
    code, out, _ = ctl("--json", "close", "M-1", "--txn-id", "close-1")
    assert json.loads(out)["payout_minor"] == 10_000 and json.loads(out)["replayed"] is True
    code, out, _ = ctl("close", "M-1")
    assert code == 1 and "ACCOUNT_CLOSED" in out
    assert ctl("topup", "M-1", "1.00")[0] == 1
    assert ctl("member", "reindex")[0] == 0


def test_promotions_and_settings(ctl):
    code, out, _ = ctl("promo", "add", "--min", "100.00", "--bonus", "20.00")
    assert code == 0 and "min10000-bonus2000" in out
    assert ctl("promo", "add", "--min", "300", "--bonus", "80", "--id", "autumn")[0] == 0
    code, out, _ = ctl("--json", "promo", "list")
    assert [p["promo_id"] for p in json.loads(out)] == ["min10000-bonus2000", "autumn"]
    assert ctl("promo", "remove", "autumn")[0] == 0
    assert ctl("promo", "remove", "autumn")[0] == 1                    # SETTING_NOT_FOUND
    assert ctl("settings", "spend-order", "bonus_first")[0] == 0
    assert "bonus_first" in ctl("settings", "spend-order")[1]
    assert ctl("settings", "balance-cap", "5000.00")[0] == 0
    code, out, _ = ctl("--json", "settings", "balance-cap")
    assert json.loads(out) == {"spend_order": "bonus_first", "balance_cap_minor": 500_000,
                               "member_pin_above_minor": 0}
    assert ctl("settings", "balance-cap", "off")[0] == 0
    assert ctl("open", "M-1", "--holder", "张三")[0] == 0
    code, out, _ = ctl("topup", "M-1", "150.00", "--method", "wechat", "--promo")
    assert code == 0 and "170.00" in out                                  # 150 + the 100-rule's 20
    code, out, _ = ctl("topup", "M-1", "10.00", "--bonus", "1.00", "--txn-id", "tp-2")
    assert code == 0 and "181.00" in out
    assert ctl("topup", "M-1", "10.00", "--bonus", "2.00", "--txn-id", "tp-2")[0] == 4     # same id, other bonus


@pytest.mark.parametrize("argv, field", [
    (("open", "M-9", "--phone", "12ab"), "phone"),
    (("card", "issue", "M-9", "bad card"), "card_no"),
    (("promo", "add", "--min", "abc", "--bonus", "1"), "min"),
    (("promo", "add", "--min", "10"), "--min/--bonus"),
    (("promo", "add", "--min", "10", "--bonus", "0"), "bonus"),
    (("promo", "remove"), "promo_id"),
    (("member", "find", "zs", "--limit", "99"), "limit"),
    (("member", "find"), "query"),
    (("settings", "balance-cap", "-5"), "balance_cap"),
    (("close", "M 9"), "account_id"),
])
def test_bad_input_exits_2_naming_the_field(ctl, argv, field):
    code, _, err = ctl(*argv)
    assert code == 2 and f"cashierctl: {field}:" in err


def test_argparse_refusals_are_usage_errors_not_tracebacks(ctl):
    for argv in (("card", "block", "C-1", "--reason", "bored"), ("settings", "spend-order", "random"),
                 ("card",), ("promo", "frobnicate")):
        with pytest.raises(SystemExit) as info:
            ctl(*argv)
        assert info.value.code == 2


def test_member_pin_reset_and_the_threshold_setting(ctl, redis_url):
    from core import Ledger
    from core.member_pins import MemberPins
    ledger = Ledger.from_url(redis_url)
    pins = MemberPins(ledger.client)
    pins.set_pin("M-9", "123456", "123456")
    for _ in range(5):
        pins.verify("M-9", "000000")
    assert pins.locked("M-9")
    code, out, _ = ctl("--json", "member", "pin-reset", "M-9")
    assert code == 0 and json.loads(out) == {"account_id": "M-9", "had_pin": True}
    assert not pins.has_pin("M-9") and not pins.locked("M-9")
    assert "was not set" in ctl("member", "pin-reset", "M-9")[1]
    assert ctl("settings", "member-pin-above", "200.00")[0] == 0
    assert ledger.shop_settings().member_pin_above_minor == 20_000
    assert "member PIN needed above 200.00" in ctl("settings", "member-pin-above")[1]
    code, _, err = ctl("settings", "member-pin-above", "-1")
    assert code == 2 and "member_pin_above" in err
    assert ctl("settings", "member-pin-above", "0")[0] == 0
    assert ledger.shop_settings().member_pin_above_minor == 0
    ledger.close()


def test_member_code_enrol_prints_the_uri_and_a_qr_once(ctl, redis_url):
    from core import Ledger
    from core.member_codes import MemberCodes, member_code_text, parse_member_code, secret_of_uri
    ledger = Ledger.from_url(redis_url)
    assert ledger.open_account("M-8", txn_id="open-M-8").applied
    code, out, _ = ctl("member", "code-enrol", "M-8")
    assert code == 0 and "otpauth://totp/" in out and any(c in out for c in "█▀▄")   # the URI and a terminal QR
    code, out, _ = ctl("--json", "member", "code-enrol", "M-8")                  # again: a new secret
    secret = secret_of_uri(json.loads(out)["otpauth_uri"])
    codes = MemberCodes(ledger.client)
    assert codes.verify(parse_member_code(member_code_text(secret, "M-8")), "T1-d-1").ok
    assert ctl("member", "code-enrol", "NOPE")[0] == 2                           # unknown member: bad input
