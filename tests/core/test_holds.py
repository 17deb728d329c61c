"""Holds: pre-authorise, then capture or void, each resolving at most once; expired
holds stop counting at their expiry with nothing touching the account."""
from __future__ import annotations

import time

import pytest

from core import InvalidRequest, LedgerNotInitialized, Status


@pytest.fixture
def acct(ledger):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=10_000)
    return ledger


def test_hold_reduces_available_not_balance(acct):
    r = acct.hold("A-1", 3000, txn_id="h-1", ttl_s=600)
    assert r.applied and r.balance_minor == 7000
    assert acct.balance("A-1") == 10_000 and acct.available("A-1") == 7000
    assert acct.hold("A-1", 3000, txn_id="h-1", ttl_s=600).replayed


def test_deductions_and_holds_respect_active_holds(acct):
    acct.hold("A-1", 8000, txn_id="h-1", ttl_s=600)
    assert acct.deduct("A-1", 2001, txn_id="d-1").status is Status.INSUFFICIENT_FUNDS
    assert acct.hold("A-1", 2001, txn_id="h-2", ttl_s=600).status is Status.INSUFFICIENT_FUNDS
    assert acct.deduct("A-1", 2000, txn_id="d-2").applied
    assert acct.available("A-1") == 0


def test_partial_capture_releases_the_rest(acct):
    acct.hold("A-1", 3000, txn_id="h-1", ttl_s=600)
    r = acct.capture("h-1", 2500, txn_id="c-1")
    assert r.applied and r.balance_minor == 7500 and r.account_id == "A-1"
    assert acct.available("A-1") == 7500
    assert acct.capture("h-1", 2500, txn_id="c-1").replayed
    # a capture is refundable like a deduction
    assert acct.refund("A-1", 2500, txn_id="r-1", original_txn_id="c-1").balance_minor == 10_000


def test_a_hold_resolves_at_most_once(acct):
    acct.hold("A-1", 1000, txn_id="h-1", ttl_s=600)
    acct.hold("A-1", 1000, txn_id="h-2", ttl_s=600)
    assert acct.capture("h-1", 1001, txn_id="c-0").status is Status.CAPTURE_EXCEEDS_HOLD
    assert acct.capture("h-1", 1000, txn_id="c-1").applied
    assert acct.capture("h-1", 1000, txn_id="c-2").status is Status.HOLD_ALREADY_CAPTURED
    assert acct.void("h-1", txn_id="v-1").status is Status.HOLD_ALREADY_CAPTURED
    assert acct.void("h-2", txn_id="v-2").applied
    assert acct.capture("h-2", 1, txn_id="c-3").status is Status.HOLD_ALREADY_VOIDED
    assert acct.void("h-2", txn_id="v-3").status is Status.HOLD_ALREADY_VOIDED
    with pytest.raises(InvalidRequest) as err:         # no account, no hold: nothing decided
        acct.capture("nope", 1, txn_id="c-4")
    assert err.value.field == "hold_txn_id"
    assert acct.capture("d-x", 1, txn_id="c-5", account_id="A-1").status is Status.HOLD_NOT_FOUND
    assert acct.balance("A-1") == 9000 and acct.available("A-1") == 9000


def test_void_journals_its_release_once_with_the_balance(acct):
    acct.hold("A-1", 1000, txn_id="h-1", ttl_s=600)
    part = acct.schema.partition_of("A-1")
    expires = int(acct.client.zscore(part.hold_expiries("A-1"), "h-1"))
    r = acct.void("h-1", txn_id="v-1", account_id="A-1", terminal_id="T1", cashier_id="c1")
    assert r.applied and r.balance_minor == 10_000 and acct.void("h-1", txn_id="v-1").replayed
    e = acct.journal("A-1")[0]
    assert (e.txn_id, e.kind, e.amount_minor, e.balance_after_minor, e.original_txn_id, e.terminal_id,
            e.cashier_id) == ("v-1", "void", 0, 10_000, "h-1", "T1", "c1")
    h = acct.journal("A-1")[1]
    assert (h.txn_id, h.kind, h.amount_minor, h.balance_after_minor, h.hold_minor, h.expires_ms) == \
        ("h-1", "hold", 0, 10_000, 1000, expires)
    assert acct.client.hget(part.txn("h-1"), "hx") == str(expires)
    assert acct.client.hget(part.account("A-1"), "lj") == r.journal_id
    assert acct.client.hget(part.txn("h-1"), "hs") == "voided"
    assert not acct.client.hexists(part.holds("A-1"), "h-1") and acct.available("A-1") == 10_000


def test_hold_scripts_in_a_partition_that_lost_its_journal_write_nothing(acct):
    """hold, capture and void learn that the partition has no journal stream (a Redis that
    lost its data) from the journal append or the decline's check: NOT_INITIALIZED, and
    not one key changes."""
    acct.hold("A-1", 1000, txn_id="h-1", ttl_s=600)
    acct.hold("A-1", 1000, txn_id="h-2", ttl_s=600)
    part = acct.schema.partition_of("A-1")
    acct.client.delete(part.journal)
    before = {k: acct.client.dump(k) for k in acct.client.keys("*")}
    calls = [lambda: acct.void("h-1", txn_id="v-1", account_id="A-1"),
             lambda: acct.void("h-9", txn_id="v-2", account_id="A-1"),          # a decline
             lambda: acct.capture("h-2", 1000, txn_id="c-1", account_id="A-1"),
             lambda: acct.capture("h-2", 1001, txn_id="c-2", account_id="A-1"),  # a decline
             lambda: acct.hold("A-1", 1, txn_id="h-3", ttl_s=600)]
    for call in calls:
        with pytest.raises(LedgerNotInitialized):
            call()
    assert {k: acct.client.dump(k) for k in acct.client.keys("*")} == before


def test_the_hold_script_bounds_its_ttl_by_the_retention_exactly(acct):
    """hold.lua compares ttl_s with the call's retention by digit count, then by value."""
    part = acct.schema.partition_of("A-1")
    keys = [part.account("A-1"), None, part.journal, part.holds("A-1"), part.hold_expiries("A-1"),
            part.account_cards("A-1")]

    def hold(txn, retention, ttl):
        keys[1] = part.txn(txn)
        reply = acct.scripts.call(acct.client, "hold", keys, [txn, "A-1", "1", retention, "", "", ttl, ""])
        return reply.split("|") if isinstance(reply, str) else reply

    for txn, retention, ttl in (("h-1", "3600", "3601"), ("h-2", "3600", "10000"), ("h-3", "999", "1000"),
                                ("h-4", "3600", "03600"), ("h-5", "3600", "0")):
        reply = hold(txn, retention, ttl)
        assert reply[0] == "INVALID" and reply[3].startswith("ttl_s"), (txn, reply)
    for txn, retention, ttl in (("h-6", "3600", "3600"), ("h-7", "3600", "999"), ("h-8", "1000", "999")):
        assert hold(txn, retention, ttl)[0] == "APPLIED", txn
    assert acct.available("A-1") == 10_000 - 3


def test_expired_hold_stops_counting_by_itself(acct):
    acct.hold("A-1", 9000, txn_id="h-1", ttl_s=1)
    assert acct.available("A-1") == 1000
    time.sleep(1.1)
    assert acct.available("A-1") == 10_000                 # nothing touched the account
    assert acct.deduct("A-1", 10_000, txn_id="d-1").applied
    assert acct.capture("h-1", 1, txn_id="c-1").status is Status.HOLD_EXPIRED
    assert acct.void("h-1", txn_id="v-1").status is Status.HOLD_EXPIRED


def test_expire_holds_journals_each_release_once(acct):
    acct.hold("A-1", 100, txn_id="h-1", ttl_s=1)
    acct.hold("A-1", 100, txn_id="h-2", ttl_s=600)
    assert acct.expire_holds("A-1") == 0
    time.sleep(1.1)
    assert acct.expire_holds("A-1") == 1
    assert acct.expire_holds("A-1") == 0
    kinds = [(e.kind, e.original_txn_id) for e in acct.journal("A-1")]
    assert kinds[0] == ("hold_expire", "h-1")
    assert [k for k, _ in kinds].count("hold_expire") == 1
    hold_entry = next(e for e in acct.journal("A-1") if e.txn_id == "h-2")
    assert hold_entry.kind == "hold" and hold_entry.hold_minor == 100 and hold_entry.expires_ms > 0
    assert acct.capture("h-1", 1, txn_id="c-1").status is Status.HOLD_EXPIRED


def test_hold_validation(acct):
    with pytest.raises(InvalidRequest) as info:
        acct.hold("A-1", 100, txn_id="h-1", ttl_s=0)
    assert info.value.field == "ttl_s"
    with pytest.raises(InvalidRequest):
        acct.hold("A-1", 100, txn_id="h-1", ttl_s=acct.retention_s + 1)
    with pytest.raises(InvalidRequest) as info:
        acct.capture("h{1}", 100, txn_id="c-1")
    assert info.value.field == "hold_txn_id"
    assert acct.available("A-1") == 10_000


@pytest.mark.cluster
def test_holds_on_cluster(cluster_ledger):
    led = cluster_ledger
    for i in range(10):
        a = f"H-{i}"
        led.open_account(a, txn_id=f"o-{a}", initial_minor=1000)
        assert led.hold(a, 600, txn_id=f"h-{a}", ttl_s=60).balance_minor == 400
        assert led.deduct(a, 401, txn_id=f"d-{a}").status is Status.INSUFFICIENT_FUNDS
        assert led.capture(f"h-{a}", 600, txn_id=f"c-{a}").balance_minor == 400   # hold looked up
        assert led.available(a) == 400
