"""Ledger.update_member (issue 29: a member's name and phone changed from the back office):
examples of each answer, and a property: whatever sequence of changes is sent, with
replies lost (a FaultyProxy drops them; the caller sends the same request again until
answered), the member ends with the last applied name and phone, the member index finds
the member by the current phone and name and never by a phone it gave up, no phone is
held by two members, and each applied change is journaled exactly once."""
from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core import InvalidRequest, Status
from tests.support.flaky_ledger import faulty_fixture, until_answered
from core.journal_codec import read_range

faulty = faulty_fixture(drop_reply_probability=0.3, seed=2929)
_runs = itertools.count(1000)          # each example its own members, txn ids and phones

def _entries(ledger, account_id: str) -> list[dict]:
    part = ledger.schema.partition_of(account_id)
    return [f for _, f in read_range(ledger.client, part.journal)
            if f.get("kind") == "member_update" and f.get("acct") == account_id]


def test_name_and_phone_change_and_the_index_follows(ledger):
    ledger.init()
    ledger.open_account("M1", txn_id="o-m1", initial_minor=500, holder_name="张三", phone="13800000001")
    r = ledger.update_member("M1", txn_id="u-1", holder_name="李四", phone="13900000002", cashier_id="boss")
    assert r.status is Status.APPLIED and r.balance_minor == 500
    assert ledger.account("M1").holder_name == "李四" and ledger.member_phone("M1") == "13900000002"
    assert [m.account_id for m in ledger.find_members("13900000002")] == ["M1"]
    assert ledger.find_members("13800000001") == []
    assert [m.account_id for m in ledger.find_members("ls")] == ["M1"]        # pinyin initials of 李四
    assert ledger.find_members("zs") == []
    # the old phone is free for another member now
    assert ledger.open_account("M2", txn_id="o-m2", phone="13800000001").applied
    # and the new one is taken
    assert ledger.update_member("M2", txn_id="u-2", phone="13900000002").status is Status.PHONE_TAKEN
    assert ledger.member_phone("M2") == "13800000001"
    # name only keeps the phone
    assert ledger.update_member("M1", txn_id="u-3", holder_name="王五").applied
    assert ledger.member_phone("M1") == "13900000002"
    [e1, e2] = _entries(ledger, "M1")
    assert (e1["name"], e1["ph"], e1["amt"], e1["cash"]) == ("李四", "13900000002", "0", "boss")
    assert (e2["name"], e2["ph"]) == ("王五", "13900000002")


def test_refusals(ledger):
    ledger.init()
    ledger.open_account("M1", txn_id="o-m1", holder_name="张三")
    assert ledger.update_member("NOPE", txn_id="u-1", holder_name="x").status is Status.ACCOUNT_NOT_FOUND
    with pytest.raises(InvalidRequest, match="holder_name"):
        ledger.update_member("M1", txn_id="u-2")
    with pytest.raises(InvalidRequest, match="phone"):
        ledger.update_member("M1", txn_id="u-3", phone="12")
    ledger.open_account("C1", txn_id="o-c1")
    ledger.issue_card("C1", "8800123", txn_id="c-1")
    assert ledger.update_member("M1", txn_id="u-4", phone="8800123").status is Status.PHONE_TAKEN   # a card no.
    ledger.close_account("C1", txn_id="x-c1")
    assert ledger.update_member("C1", txn_id="u-5", holder_name="x").status is Status.ACCOUNT_CLOSED
    assert _entries(ledger, "M1") == []


PHONES = ["13800000001", "13800000002", "13800000003"]
NAMES = ["张三", "李四", "Amy Li"]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.tuples(st.sampled_from(["M1", "M2"]), st.sampled_from(NAMES + [None]),
                                  st.sampled_from(PHONES + [None])).filter(lambda c: c[1] or c[2]),
                        min_size=1, max_size=8))
def test_changes_under_lost_replies_keep_the_index_true(faulty, ledger, changes):
    flaky, _ = faulty
    tag = str(next(_runs))
    members = {a: f"{a}-{tag}" for a in ("M1", "M2")}
    for a, acct in members.items():
        ledger.open_account(acct, txn_id=f"o-{acct}")
    expected = {acct: {"name": "", "phone": ""} for acct in members.values()}
    applied = {acct: 0 for acct in members.values()}
    for n, (a, name, phone) in enumerate(changes):
        acct = members[a]
        phone = phone and phone[:-5] + tag + phone[-1]       # this example's own phones
        result = until_answered(lambda: flaky.update_member(acct, txn_id=f"u-{tag}-{n}", holder_name=name,
                                                            phone=phone))
        other = next(x for x in expected if x != acct)
        if phone and expected[other]["phone"] == phone:
            assert result.status is Status.PHONE_TAKEN
            continue
        assert result.status is Status.APPLIED
        applied[acct] += 1
        expected[acct]["name"] = name or expected[acct]["name"]
        expected[acct]["phone"] = phone or expected[acct]["phone"]
    for acct, want in expected.items():
        assert ledger.account(acct).holder_name == want["name"]
        assert ledger.member_phone(acct) == want["phone"]
        assert len(_entries(ledger, acct)) == applied[acct]
        if want["phone"]:
            assert [m.account_id for m in ledger.find_members(want["phone"])] == [acct]
    for phone in {p[:-5] + tag + p[-1] for p in PHONES}:
        holders = [m.account_id for m in ledger.find_members(phone)]
        assert len(holders) <= 1
        assert all(expected[h]["phone"] == phone for h in holders)
