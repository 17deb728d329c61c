"""Bad input, through the public API and straight into the Lua scripts: every one is
rejected with the field and the reason, and Redis is exactly as it was before."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import MAX_AMOUNT_MINOR, InvalidRequest, Ledger
from core.money import parse_minor

VALID_ID = st.from_regex(r"[A-Za-z0-9._:-]{1,64}", fullmatch=True)
BAD_IDS = st.one_of(
    st.just(""), st.none(), st.integers(), st.floats(allow_nan=True), st.booleans(),
    st.binary(max_size=8),
    st.text(min_size=65, max_size=80, alphabet="abc"),
    st.text(min_size=1, max_size=20).filter(lambda s: any(c not in
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-" for c in s)),
)
BAD_AMOUNTS = st.one_of(
    st.none(), st.booleans(), st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(allow_nan=True), st.text(max_size=6),
    st.integers(max_value=0), st.integers(min_value=MAX_AMOUNT_MINOR + 1),
    st.integers(min_value=1, max_value=100).map(str),
)

HYPO = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def state(ledger: Ledger) -> dict:
    c = ledger.client
    out = {}
    for key in c.scan_iter("*"):
        kind = c.type(key)
        out[key] = {"hash": c.hgetall, "stream": lambda k: c.xrange(k), "set": c.smembers,
                    "zset": lambda k: c.zrange(k, 0, -1, withscores=True),
                    "string": c.get}[kind](key)
    return out


@pytest.fixture
def seeded(ledger):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=1000)
    ledger.deduct("A-1", 100, txn_id="sale-1")
    return ledger


@HYPO
@given(amount=BAD_AMOUNTS)
def test_bad_amounts_are_rejected_and_change_nothing(seeded, amount):
    before = state(seeded)
    for op in (lambda: seeded.deduct("A-1", amount, txn_id="t-x"),
               lambda: seeded.credit("A-1", amount, txn_id="t-y"),
               lambda: seeded.refund("A-1", amount, txn_id="t-z", original_txn_id="sale-1")):
        with pytest.raises(InvalidRequest) as info:
            op()
        assert info.value.field == "amount_minor" and info.value.reason
    assert state(seeded) == before


@HYPO
@given(bad=BAD_IDS, field=st.sampled_from(["account_id", "txn_id", "terminal_id", "cashier_id",
                                            "original_txn_id"]))
def test_bad_ids_are_rejected_and_change_nothing(seeded, bad, field):
    if field in ("terminal_id", "cashier_id") and bad in ("", None):
        return                                   # optional fields
    args = dict(account_id="A-1", amount_minor=10, txn_id="t-1", terminal_id="T1",
                cashier_id="c1", original_txn_id="sale-1")
    args[field] = bad
    before = state(seeded)
    with pytest.raises(InvalidRequest) as info:
        seeded.refund(args.pop("account_id"), args.pop("amount_minor"), **args)
    assert info.value.field == field
    assert state(seeded) == before


@HYPO
@given(account=VALID_ID, txn=VALID_ID)
def test_any_valid_id_works(ledger, account, txn):
    ledger.client.flushdb()
    ledger._schema = None
    assert ledger.open_account(account, txn_id=txn, initial_minor=5).balance_minor == 5
    assert ledger.balance(account) == 5


# ----------------------------------------------------------------- hostile clients


def raw_deduct(ledger, keys, args):
    return ledger.scripts.call(ledger.client, "deduct", keys, args)


@pytest.mark.parametrize("argv3", ["-5", "0", "1.5", "1e3", "0x10", " 10", "10 ", "", "99999999999999999",
                                   "nan", "inf", "100000000001", "12\x00"])
def test_scripts_reject_hostile_amounts(seeded, argv3):
    part = seeded.schema.partition_of("A-1")
    before = state(seeded)
    reply = raw_deduct(seeded, [part.account("A-1"), part.txn("h-1"), part.journal],
                       ["h-1", "A-1", argv3, "3600", "T", "c"])
    assert reply[0] == "INVALID" and reply[3].startswith("amount_minor")
    assert state(seeded) == before


@pytest.mark.parametrize("keys, args, field", [
    # keys of another account than the one named in ARGV: refused
    (lambda p: [p.account("B-1"), p.txn("h-1"), p.journal], ["h-1", "A-1", "10", "3600", "", ""], "KEYS[1]"),
    (lambda p: [p.account("A-1"), p.txn("other"), p.journal], ["h-1", "A-1", "10", "3600", "", ""], "KEYS[2]"),
    (lambda p: [p.account("A-1"), p.txn("h-1"), p.accounts], ["h-1", "A-1", "10", "3600", "", ""], "KEYS[3]"),
    (lambda p: [p.account("A-1"), p.txn("h-1"), p.journal], ["h-1", "A-1", "10", "0", "", ""], "retention_s"),
    (lambda p: [p.account("A-1"), p.txn("h-1"), p.journal], ["h-1", "A-1", "10", "-1", "", ""], "retention_s"),
    (lambda p: [p.account("A-1"), p.txn("h|1"), p.journal], ["h|1", "A-1", "10", "3600", "", ""], "txn_id"),
    (lambda p: [p.account("A{1}"), p.txn("h-1"), p.journal], ["h-1", "A{1}", "10", "3600", "", ""], "account_id"),
    (lambda p: [p.account("A-1"), p.txn("h-1"), p.journal], ["h-1", "A-1", "10", "3600", "T\n1", ""], "terminal_id"),
])
def test_scripts_reject_hostile_keys_and_args(seeded, keys, args, field):
    part = seeded.schema.partition_of("A-1")
    before = state(seeded)
    reply = raw_deduct(seeded, keys(part), args)
    assert reply[0] == "INVALID" and reply[3].startswith(field)
    assert state(seeded) == before


def test_scripts_reject_missing_arguments(seeded):
    part = seeded.schema.partition_of("A-1")
    before = state(seeded)
    reply = raw_deduct(seeded, [part.account("A-1"), part.txn("h-1"), part.journal], ["h-1", "A-1"])
    assert reply[0] == "INVALID"
    assert state(seeded) == before


@pytest.mark.parametrize("text, minor", [("12.50", 1250), ("12.5", 1250), ("0.01", 1), ("7", 700),
                                         (" 3.10 ", 310), ("1000000000", 100000000000)])
def test_parse_minor_accepts(text, minor):
    assert parse_minor(text) == minor


@pytest.mark.parametrize("text, reason", [("12.505", "more than two decimals"), ("-1", "negative"),
                                          ("0", "greater than zero"), ("0.00", "greater than zero"),
                                          ("", "empty"), ("1000000000.01", "maximum"),
                                          ("1e3", "not an amount"), ("12,50", "not an amount"),
                                          ("１２", "not an amount")])
def test_parse_minor_rejects(text, reason):
    with pytest.raises(InvalidRequest) as info:
        parse_minor(text)
    assert info.value.field == "amount" and reason in info.value.reason
