"""Hostile input through cashierctl (issue 8): random and hostile ids, amounts and txn
ids, unicode, huge numbers: every one refused with a message naming the field, exit
code 2, no traceback, and Redis exactly as it was."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from admin.cashierctl import main

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               min_size=0, max_size=80)
MUST_REJECT = ["-0.01", "0", "0.00", "1.001", "1e5", "１２", "12,50", " ", "nan", "NaN", "inf",
               "0x10", "1_000", "+5", "٣", "1000000000.01", "99999999999999999999"]
HOSTILE_AMOUNTS = st.one_of(
    TEXT, st.integers(min_value=10 ** 9 + 1, max_value=10 ** 30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr), st.sampled_from(MUST_REJECT),
)


def acceptable(text: str) -> bool:
    from core import InvalidRequest
    from core.money import parse_minor
    try:
        parse_minor(text)
        return True
    except InvalidRequest:
        return False
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
    if acceptable(amount):
        return                          # a real amount: not this test's business
    if amount.startswith("-"):
        amount = " " + amount          # argparse would read a leading '-' as an option
    err = run(shop, capsys, "topup", "A-1", amount)
    assert "amount:" in err


@pytest.mark.parametrize("amount", MUST_REJECT)
def test_amounts_that_must_be_refused(shop, capsys, amount):
    assert not acceptable(amount)
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
