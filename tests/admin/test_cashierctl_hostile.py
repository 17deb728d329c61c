"""Hostile input through cashierctl (issue 8): random and hostile ids, amounts and txn
ids, unicode, huge numbers: every one refused with a message naming the field, exit
code 2, no traceback, and Redis exactly as it was. Which amounts are refused is judged by
an oracle written here from the documented format, not by the parser under test."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from admin.cashierctl import main
from core import Ledger

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               min_size=0, max_size=80)
MUST_REJECT = ["-0.01", "0", "0.00", "1.001", "1e5", "１２", "12,50", " ", "nan", "NaN", "inf",
               "0x10", "1_000", "+5", "٣", "1000000000.01", "99999999999999999999"]
HOSTILE_AMOUNTS = st.one_of(
    TEXT, st.integers(min_value=10 ** 9 + 1, max_value=10 ** 30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr), st.sampled_from(MUST_REJECT),
    # near the edges of the format and of the limit, so that both answers are exercised
    st.from_regex(r"\s?[0-9]{1,13}(\.[0-9]{0,3})?\s?", fullmatch=True),
    st.integers(min_value=0, max_value=10 ** 11 + 1).map(lambda m: f"{m // 100}.{m % 100:02d}"),
)
MAX_AMOUNT_MINOR = 100_000_000_000      # 1e11 minor units per operation (docs/ledger.md, Limits)


def oracle_minor(text: str) -> int | None:
    """The amount `text` means in minor units, or None when cashierctl must refuse it.

    Written from the documented format, independently of core.money: surrounding
    whitespace is ignored; then ASCII digits, optionally a point and one or two ASCII
    digits; more than zero and at most MAX_AMOUNT_MINOR. (No regex, no int() of the
    whole text: int() would take '١٢', '1_000' and '+5'.)"""
    body = text.strip()
    whole, point, cents = body.partition(".")
    ascii_digits = set("0123456789")
    if not whole or not set(whole) <= ascii_digits:
        return None
    if point and not (1 <= len(cents) <= 2 and set(cents) <= ascii_digits):
        return None
    minor = 0
    for c in whole + cents.ljust(2, "0"):
        minor = minor * 10 + "0123456789".index(c)
    return minor if 0 < minor <= MAX_AMOUNT_MINOR else None


HOSTILE_IDS = st.one_of(
    TEXT.filter(lambda t: not t or len(t) > 64 or any(
        c not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-" for c in t)),
    st.sampled_from(["A{1}", "A#1", "../../etc", "A 1", "Ａ-1", "a" * 65, "A\n1", "*"]),
)
HYPO = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def snapshot(client):
    return {k: (client.type(k), client.dump(k)) for k in client.scan_iter("*")}


@pytest.fixture
def shop(redis_url, capsys):
    import redis
    main(["--redis-url", redis_url, "init"])
    main(["--redis-url", redis_url, "open", "A-1", "--initial", "50"])
    capsys.readouterr()
    return redis_url, redis.Redis.from_url(redis_url)


def run(shop, capsys, *argv):
    url, client = shop
    before = snapshot(client)
    code = main(["--redis-url", url, *argv])
    _, err = capsys.readouterr()
    assert code == 2, (argv, err)
    assert "Traceback" not in err and err.startswith("cashierctl: ")
    assert snapshot(client) == before
    return err


@HYPO
@given(amount=HOSTILE_AMOUNTS)
def test_hostile_amounts(shop, capsys, amount):
    """Refused exactly when the oracle refuses; when it accepts, the top-up is exactly
    the oracle's amount."""
    expected = oracle_minor(amount)
    if amount.startswith("-"):
        amount = " " + amount          # argparse would read a leading '-' as an option
    if expected is None:
        err = run(shop, capsys, "topup", "A-1", amount)
        assert "amount:" in err
        return
    url, _ = shop
    ledger = Ledger.from_url(url)
    before = ledger.balance("A-1")
    code = main(["--redis-url", url, "topup", "A-1", amount])
    out, err = capsys.readouterr()
    assert code == 0, (amount, err)
    assert ledger.balance("A-1") == before + expected, (amount, out)
    ledger.close()


@pytest.mark.parametrize("amount,minor", [("12.5", 1250), ("12.50", 1250), (" 7 ", 700), ("0.01", 1),
                                          ("1000000000", MAX_AMOUNT_MINOR), ("1000000000.00", MAX_AMOUNT_MINOR),
                                          ("007.5", 750)])
def test_oracle_accepts_the_documented_format(amount, minor):
    assert oracle_minor(amount) == minor


@pytest.mark.parametrize("amount", MUST_REJECT)
def test_amounts_that_must_be_refused(shop, capsys, amount):
    assert oracle_minor(amount) is None
    run(shop, capsys, "topup", "A-1", " " + amount if amount.startswith("-") else amount)


@HYPO
@given(account=HOSTILE_IDS)
def test_hostile_account_ids(shop, capsys, account):
    if account.startswith("-"):
        account = "x" * 70
    err = run(shop, capsys, "topup", account, "1")
    assert "account_id:" in err


@HYPO
@given(txn=HOSTILE_IDS)
def test_hostile_txn_ids(shop, capsys, txn):
    if not txn:
        return                          # an empty --txn-id means "make one"
    err = run(shop, capsys, "topup", "A-1", "1", f"--txn-id={txn}")
    assert "txn_id:" in err
