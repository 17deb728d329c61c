"""core.history: an operation loaded by its txn id from any terminal, with what is
refunded of it; an account's recent history; clear answers outside the window. Real
Redis throughout (db of the core folder)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import InvalidRequest
from core.history import History, OperationNotFound, RefundCheck


@pytest.fixture
def shop(ledger):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=10_000)
    return ledger


def test_load_a_charge_made_on_another_terminal(shop):
    shop.deduct("A-1", 1250, txn_id="T1-d-1", terminal_id="T1", cashier_id="c1")
    op = History(shop).load("T1-d-1")
    assert (op.kind, op.account_id, op.amount_minor, op.status) == ("deduct", "A-1", 1250, "APPLIED")
    assert (op.terminal_id, op.cashier_id, op.balance_after_minor) == ("T1", "c1", 8750)
    assert op.has_entry and op.occurred_ms > 0 and op.record_ttl_s > 0
    assert op.refund_check(now_ms=op.occurred_ms) is RefundCheck.REFUNDABLE
    assert op.refundable_minor == 1250


def test_partial_refunds_are_counted(shop):
    shop.deduct("A-1", 1000, txn_id="d-1")
    shop.refund("A-1", 300, txn_id="r-1", original_txn_id="d-1")
    op = History(shop).load("d-1")
    assert op.refunded_minor == 300 and op.refundable_minor == 700
    shop.refund("A-1", 700, txn_id="r-2", original_txn_id="d-1")
    op = History(shop).load("d-1")
    assert op.refundable_minor == 0
    assert op.refund_check(now_ms=op.occurred_ms) is RefundCheck.FULLY_REFUNDED
    refund = History(shop).load("r-2")
    assert refund.kind == "refund" and refund.original_txn_id == "d-1"
    assert refund.refund_check(now_ms=refund.occurred_ms) is RefundCheck.NOT_A_SALE


def test_declined_charge_is_not_refundable(shop):
    shop.deduct("A-1", 99_999, txn_id="d-big")
    op = History(shop).load("d-big")
    assert op.status == "INSUFFICIENT_FUNDS" and op.journal_id == "" and not op.has_entry
    assert op.refund_check(now_ms=0) is RefundCheck.NOT_APPLIED


def test_unknown_or_expired_receipt_number_says_what_to_do(shop):
    with pytest.raises(OperationNotFound) as info:
        History(shop).load("T9-d-nothing")
    assert "7 days" in str(info.value) and "back office" in str(info.value)
    shop.deduct("A-1", 100, txn_id="d-old")
    shop.client.delete(shop.schema.partition_of("A-1").txn("d-old"))   # what the TTL does after 7 days
    with pytest.raises(OperationNotFound):
        History(shop).load("d-old")


def test_malformed_receipt_number_names_the_field(shop):
    with pytest.raises(InvalidRequest) as info:
        History(shop).load("not a number{")
    assert info.value.field == "txn_id"


def test_shop_refund_window_shorter_than_retention(shop):
    shop.deduct("A-1", 100, txn_id="d-1")
    op = History(shop).load("d-1")
    assert op.refund_check(now_ms=op.occurred_ms + 3 * 86400_000, window_s=2 * 86400) is RefundCheck.OUTSIDE_WINDOW
    assert op.refund_check(now_ms=op.occurred_ms + 86400_000, window_s=2 * 86400) is RefundCheck.REFUNDABLE


def test_trimmed_journal_still_loads_from_the_record(shop):
    shop.deduct("A-1", 400, txn_id="d-1", terminal_id="T2")
    part = shop.schema.partition_of("A-1")
    shop.client.xtrim(part.journal, maxlen=0, approximate=False)    # what the reconcile service does
    op = History(shop).load("d-1")
    assert not op.has_entry and op.terminal_id == ""
    assert op.amount_minor == 400 and op.refundable_minor == 400 and op.occurred_ms > 0
    assert History(shop).recent("A-1") == []


def test_recent_history_all_terminals_newest_first_bounded(shop):
    shop.open_account("B-1", txn_id="open-B-1", initial_minor=5000)
    for i in range(6):
        shop.deduct("A-1", 100 + i, txn_id=f"T{i % 3}-d-{i}", terminal_id=f"T{i % 3}")
        shop.deduct("B-1", 1, txn_id=f"b-{i}")
    shop.refund("A-1", 50, txn_id="r-1", original_txn_id="T1-d-4")
    ops = History(shop).recent("A-1", count=4)
    assert [o.txn_id for o in ops] == ["r-1", "T2-d-5", "T1-d-4", "T0-d-3"]
    assert {o.terminal_id for o in History(shop).recent("A-1", count=10)} == {"T0", "T1", "T2", ""}
    assert ops[2].refunded_minor == 50 and ops[2].refundable_minor == 54
    assert all(o.account_id == "A-1" for o in ops)
    with pytest.raises(InvalidRequest) as info:
        History(shop).recent("A-1", count=0)
    assert info.value.field == "count"


# One step of a random day at the shop: (operation, amount, whether the reply is "lost"
# so the terminal retries with the same txn id, and which earlier charge a refund names).
_steps = st.lists(st.tuples(st.sampled_from(["deduct", "credit", "refund"]),
                            st.integers(1, 3000), st.booleans(), st.integers(0, 50)),
                  min_size=1, max_size=25)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=_steps, trim=st.booleans())
def test_property_history_agrees_with_what_was_applied(ledger, steps, trim):
    """Whatever the mix of charges, top-ups, partial refunds, retries (replays) and a
    trimmed journal: each charge loads with refunded = sum of its applied refunds,
    refundable never below 0, and recent() lists exactly the applied changes still in
    the journal, newest first."""
    ledger.client.flushdb()
    ledger._schema = None
    ledger.open_account("P-1", txn_id="open-P-1", initial_minor=20_000)
    charges: list[str] = []
    refunded: dict[str, int] = {}
    applied: list[str] = ["open-P-1"]
    for n, (kind, amount, lost_reply, pick) in enumerate(steps):
        txn = f"T{n % 2}-{kind[0]}-{n}"
        for _attempt in range(2 if lost_reply else 1):       # a lost reply: same id again
            if kind == "deduct":
                r = ledger.deduct("P-1", amount, txn_id=txn, terminal_id=f"T{n % 2}")
            elif kind == "credit":
                r = ledger.credit("P-1", amount, txn_id=txn, terminal_id=f"T{n % 2}")
            elif charges:
                orig = charges[pick % len(charges)]
                r = ledger.refund("P-1", amount, txn_id=txn, original_txn_id=orig)
            else:
                r = None
        if r is None or not r.applied:
            continue
        applied.append(txn)
        if kind == "deduct":
            charges.append(txn)
        elif kind == "refund":
            refunded[orig] = refunded.get(orig, 0) + amount
    if trim:
        ledger.client.xtrim(ledger.schema.partition_of("P-1").journal, maxlen=3, approximate=False)
    history = History(ledger)
    for txn in charges:
        op = history.load(txn)
        assert op.refunded_minor == refunded.get(txn, 0)
        assert 0 <= op.refundable_minor == op.amount_minor - refunded.get(txn, 0)
    recent = history.recent("P-1", count=200)
    expected = applied[::-1][:3] if trim else applied[::-1]
    assert [o.txn_id for o in recent] == expected
    assert recent and all(o.balance_after_minor >= 0 for o in recent)
    assert recent[0].balance_after_minor == ledger.balance("P-1")
