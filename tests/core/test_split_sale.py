"""Split-tender sales (issue 31) against a real Redis: one sale = the card leg and the
other tenders in ONE journal entry and one txn record (sale.lua); a declined card leg
records nothing; retries replay; refunds per tender (refund.lua for the card leg,
tender_refund.lua for the rest), partial and full, never past what a tender paid."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from core import InvalidRequest, Status, TxnConflict
from core.sales import decode_tenders, encode_tenders, refund_plan
from core.journal_codec import read_range


def opened(ledger, account="M-1", initial=3850, bonus=0):
    r = ledger.open_account(account, txn_id=f"open-{account}", initial_minor=initial, bonus_minor=bonus)
    assert r.applied
    return account


def entries(ledger, kind=None):
    """The journal's entries (of `kind`), oldest first, with every raw field as `.fields`."""
    out = []
    for part in ledger.partitions:
        for jid, raw in read_range(ledger.client, part.journal):
            f = {(k.decode() if isinstance(k, bytes) else k): (x.decode() if isinstance(x, bytes) else x)
                 for k, x in raw.items()}
            if kind is None or f["kind"] == kind:
                out.append(Entry(f["txn"], int(f["amt"]), int(f["bal"]), f.get("orig", ""), f))
    return out


@dataclass
class Entry:
    txn_id: str
    amount_minor: int
    balance_after_minor: int
    original_txn_id: str
    fields: dict


@pytest.mark.parametrize("method", ["cash", "wechat", "alipay", "bank_card", "other"])
def test_a_split_sale_with_each_tender_kind(ledger, method):
    member = opened(ledger)
    r = ledger.sale(member, 3850, {method: 1350}, txn_id="T1-s-1", total_minor=5200,
                    terminal_id="T1", cashier_id="c1")
    assert (r.status, r.balance_minor, r.kind, r.amount_minor) == (Status.APPLIED, 0, "sale", 3850)
    [e] = entries(ledger, "sale")
    assert (e.amount_minor, e.balance_after_minor, e.txn_id) == (-3850, 0, "T1-s-1")
    assert e.fields["tn"] == f"{method}:1350" and e.fields["tot"] == "5200"
    assert ledger.sale_tenders(member, "T1-s-1") == {"card": 3850, method: 1350}


def test_several_tenders_and_the_change_in_one_entry(ledger):
    member = opened(ledger)
    r = ledger.sale(member, 2000, {"wechat": 1000, "cash": 2200}, txn_id="s-1", total_minor=5200,
                    change_minor=800)
    assert r.applied and ledger.balance(member) == 1850
    [e] = entries(ledger, "sale")
    assert e.fields["tn"] == "cash:2200;wechat:1000" and e.fields["chg"] == "800"


@pytest.mark.parametrize("setup, status", [
    (lambda l, m: None, Status.INSUFFICIENT_FUNDS),
    (lambda l, m: l.freeze(m, txn_id="fz"), Status.ACCOUNT_FROZEN),
])
def test_a_declined_card_leg_records_no_tender(ledger, setup, status):
    member = opened(ledger)
    setup(ledger, member)
    before = len(entries(ledger))
    r = ledger.sale(member, 3851, {"cash": 1349}, txn_id="s-1", total_minor=5200) if status is \
        Status.INSUFFICIENT_FUNDS else ledger.sale(member, 100, {"cash": 5100}, txn_id="s-1", total_minor=5200)
    assert r.status is status and not r.applied
    assert len(entries(ledger)) == before and ledger.balance(member) == 3850
    assert ledger.sale_tenders(member, "s-1") is None
    # nothing to give back of a sale that never happened
    assert ledger.tender_refund(member, 1, txn_id="q-1", original_txn_id="s-1",
                                method="cash").status is Status.ORIGINAL_NOT_FOUND


def test_a_blocked_card_declines_the_whole_sale(ledger):
    member = opened(ledger)
    assert ledger.issue_card(member, "C-9", txn_id="ci").applied
    assert ledger.block_card("C-9", txn_id="cb", reason="lost").applied
    r = ledger.sale(member, 100, {"cash": 100}, txn_id="s-1", total_minor=200, card_no="C-9")
    assert r.status is Status.CARD_BLOCKED and entries(ledger, "sale") == []


def test_outcome_unknown_then_applied_replays_once(ledger):
    member = opened(ledger)
    first = ledger.sale(member, 3000, {"wechat": 2200}, txn_id="s-1", total_minor=5200)
    again = ledger.sale(member, 3000, {"wechat": 2200}, txn_id="s-1", total_minor=5200)
    assert first.applied and again.applied and again.replayed and not first.replayed
    assert again.balance_minor == first.balance_minor == 850 and again.journal_id == first.journal_id
    assert len(entries(ledger, "sale")) == 1


def test_outcome_unknown_then_declined_stays_declined(ledger):
    """A retry of a declined sale answers the decline even when the money is there now:
    the cashier was told what the customer still owes; no late half sale."""
    member = opened(ledger, initial=100)
    first = ledger.sale(member, 3000, {"cash": 2200}, txn_id="s-1", total_minor=5200)
    ledger.credit(member, 10_000, txn_id="top")
    again = ledger.sale(member, 3000, {"cash": 2200}, txn_id="s-1", total_minor=5200)
    assert first.status is again.status is Status.INSUFFICIENT_FUNDS and again.replayed
    assert ledger.balance(member) == 10_100 and entries(ledger, "sale") == []


def test_same_txn_id_other_tenders_conflicts(ledger):
    member = opened(ledger)
    ledger.sale(member, 3000, {"cash": 2200}, txn_id="s-1", total_minor=5200)
    with pytest.raises(TxnConflict):
        ledger.sale(member, 3000, {"wechat": 2200}, txn_id="s-1", total_minor=5200)
    with pytest.raises(TxnConflict):
        ledger.deduct(member, 3000, txn_id="s-1")
    assert len(entries(ledger, "sale")) == 1 and ledger.balance(member) == 850


@pytest.mark.parametrize("card, tenders, total, change, field", [
    (0, {"cash": 100}, 100, 0, "card_minor"),
    (100, {}, 100, 0, "tenders"),
    (100, {"cash": 0}, 100, 0, "tenders.cash"),
    (100, {"bitcoin": 5}, 105, 0, "tenders"),
    (100, {"cash": 50}, 151, 0, "total_minor"),
    (100, {"wechat": 50}, 150, 10, "change_minor"),
    (100, {"cash": 1.5}, 101, 0, "tenders.cash"),
])
def test_bad_input_names_the_field_and_changes_nothing(ledger, card, tenders, total, change, field):
    member = opened(ledger)
    with pytest.raises(InvalidRequest) as info:
        ledger.sale(member, card, tenders, txn_id="s-1", total_minor=total, change_minor=change)
    assert info.value.field == field
    assert entries(ledger, "sale") == [] and ledger.balance(member) == 3850


def test_the_script_checks_the_tenders_itself(ledger):
    """A caller that skips core's checks (a script call by hand) is refused by the script."""
    member = opened(ledger)
    part = ledger.schema.partition_of(member)
    for tenders, total, why in [("wechat:1;cash:1", "102", "tenders"), ("cash:1", "102", "total_minor"),
                                ("cash:01", "101", "tenders"), ("", "100", "tenders")]:
        reply = ledger.runner.call("sale", part.deduct_keys(member, "s-x"),
                                   ["s-x", member, 100, 86400, "", "", "", tenders, total, 0],
                                   txn_id="s-x", account_id=member)
        assert reply[0] == "INVALID" and reply[3].startswith(why), reply
    assert entries(ledger, "sale") == []


def test_refund_a_split_sale_in_full_each_tender_back(ledger):
    member = opened(ledger)
    ledger.sale(member, 3000, {"cash": 1200, "wechat": 1000}, txn_id="s-1", total_minor=5200)
    r = ledger.refund(member, 3000, txn_id="r-1", original_txn_id="s-1")
    assert r.applied and r.balance_minor == 3850
    for method, amount in (("cash", 1200), ("wechat", 1000)):
        q = ledger.tender_refund(member, amount, txn_id=f"q-{method}", original_txn_id="s-1", method=method)
        assert q.applied and q.balance_minor == 3850 and q.kind == "tender_refund"
    assert ledger.sale_tenders(member, "s-1") == {"card": 0, "cash": 0, "wechat": 0}
    [q1, q2] = entries(ledger, "tender_refund")
    assert (q1.amount_minor, q1.original_txn_id, q1.fields["m"], q1.fields["ta"]) == (0, "s-1", "cash", "1200")
    assert ledger.refund(member, 1, txn_id="r-2", original_txn_id="s-1").status is Status.REFUND_EXCEEDS_ORIGINAL
    assert ledger.tender_refund(member, 1, txn_id="q-3", original_txn_id="s-1",
                                method="cash").status is Status.REFUND_EXCEEDS_ORIGINAL


def test_partial_refunds_within_each_tender(ledger):
    member = opened(ledger)
    ledger.sale(member, 3000, {"cash": 1200}, txn_id="s-1", total_minor=4200, change_minor=800)
    assert ledger.tender_refund(member, 500, txn_id="q-1", original_txn_id="s-1", method="cash").applied
    assert ledger.tender_refund(member, 700, txn_id="q-2", original_txn_id="s-1", method="cash").applied
    assert ledger.tender_refund(member, 1, txn_id="q-3", original_txn_id="s-1",
                                method="cash").status is Status.REFUND_EXCEEDS_ORIGINAL
    assert ledger.tender_refund(member, 1, txn_id="q-4", original_txn_id="s-1",
                                method="wechat").status is Status.TENDER_NOT_IN_SALE
    # a replay of a tender refund is answered, not given twice
    again = ledger.tender_refund(member, 500, txn_id="q-1", original_txn_id="s-1", method="cash")
    assert again.applied and again.replayed
    assert ledger.refund(member, 1000, txn_id="r-1", original_txn_id="s-1").applied
    assert ledger.sale_tenders(member, "s-1") == {"card": 2000, "cash": 0}


def test_tender_refund_of_a_deduct_is_not_a_sale(ledger):
    member = opened(ledger)
    ledger.deduct(member, 100, txn_id="d-1")
    assert ledger.tender_refund(member, 1, txn_id="q-1", original_txn_id="d-1",
                                method="cash").status is Status.ORIGINAL_NOT_FOUND
    with pytest.raises(InvalidRequest) as info:
        ledger.tender_refund(member, 1, txn_id="q-2", original_txn_id="d-1", method="card")
    assert info.value.field == "method"


def test_the_card_leg_refund_follows_its_bucket_split(ledger):
    member = opened(ledger, initial=1000, bonus=1000)
    ledger.set_spend_order("proportional", txn_id="so")
    r = ledger.sale(member, 1000, {"cash": 500}, txn_id="s-1", total_minor=1500)
    assert r.applied
    [e] = entries(ledger, "sale")
    assert (e.fields["pd"], e.fields["bd"]) == ("-500", "-500")
    ledger.refund(member, 400, txn_id="r-1", original_txn_id="s-1")
    [rf] = entries(ledger, "refund")
    assert (rf.fields["pd"], rf.fields["bd"]) == ("200", "200")


def test_tenders_encoding_and_refund_plan():
    assert encode_tenders({"wechat": 2000, "cash": 1350}) == "cash:1350;wechat:2000"
    assert decode_tenders("cash:1350;wechat:2000") == {"cash": 1350, "wechat": 2000}
    assert refund_plan(3850, {"cash": 1350}, 5200) == {"card": 3850, "cash": 1350}
    plan = refund_plan(3000, {"cash": 1000, "wechat": 1000}, 2501)
    assert sum(plan.values()) == 2501 and plan["card"] == 1501
    assert refund_plan(3000, {"cash": 1000}, 1000, refunded={"card": 3000}) == {"cash": 1000}
    with pytest.raises(InvalidRequest):
        refund_plan(100, {"cash": 100}, 201)
