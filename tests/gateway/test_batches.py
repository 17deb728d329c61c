"""POST /v1/ops/deduct_many through a real gateway process: a batch answers one item per
request in order, as core's `Ledger.deduct_many` does (a Result, or the error of an item
refused or not decided); a retry of the batch replays each item; a batch carries no
approval, so an item above the threshold is refused alone; a bad item, an internal id,
too many items or no session refuse the whole batch with nothing decided."""
from __future__ import annotations

import httpx
import pytest

from core import InvalidRequest, Result, Status, TxnConflict
from core.records import DeductRequest
from gateway.wire import MAX_BATCH_ITEMS, SESSION_HEADER, GatewayRefused
from tests.gateway.conftest import CASHIER, make_client

THRESHOLD = 1_000_000            # the fixture's --approval-above-minor


@pytest.fixture
def funded(till):
    for a in ("A1", "A2", "A3"):
        assert till.open_account(a, txn_id=f"T1-o-{a}").applied
        assert till.credit(a, 10_000, txn_id=f"T1-c-{a}").applied
    return till


def _batch(*items):
    return [DeductRequest(a, amount, txn) for a, amount, txn in items]


def test_a_batch_is_applied_in_order_with_the_session_and_credential(funded, shop):
    results = funded.deduct_many(_batch(("A1", 100, "T1-d-1"), ("A2", 200, "T1-d-2"), ("A1", 300, "T1-d-3"),
                                        ("A3", 400, "T1-d-4")))
    assert all(isinstance(r, Result) for r in results)
    assert [r.txn_id for r in results] == ["T1-d-1", "T1-d-2", "T1-d-3", "T1-d-4"]
    assert [r.status for r in results] == [Status.APPLIED] * 4
    assert [r.balance_minor for r in results] == [9_900, 9_800, 9_600, 9_600]
    assert all(r.kind == "deduct" and r.journal_id and not r.replayed for r in results)
    assert (shop.balance("A1"), shop.balance("A2"), shop.balance("A3")) == (9_600, 9_800, 9_600)
    for a in ("A1", "A2", "A3"):
        for entry in shop.journal(a, count=20):
            assert (entry.terminal_id, entry.cashier_id) == ("T1", CASHIER), entry
    assert funded.deduct_many([]) == []


def test_a_retry_of_the_batch_replays_each_item_and_a_reused_id_is_that_items_conflict(funded, shop):
    batch = _batch(("A1", 100, "T1-d-1"), ("A2", 200, "T1-d-2"))
    first = funded.deduct_many(batch)
    funded.credit("A1", 5, txn_id="T1-c-x")                          # the balance moves on
    again = funded.deduct_many(batch)
    assert [r.replayed for r in again] == [True, True]
    assert [(r.status, r.balance_minor) for r in again] == [(r.status, r.balance_minor) for r in first]
    mixed = funded.deduct_many(_batch(("A1", 101, "T1-d-1"), ("A2", 200, "T1-d-2"), ("A3", 50, "T1-d-5")))
    assert isinstance(mixed[0], TxnConflict) and mixed[0].txn_id == "T1-d-1"
    assert mixed[1].replayed and mixed[2].applied and not mixed[2].replayed
    assert (shop.balance("A1"), shop.balance("A2"), shop.balance("A3")) == (9_905, 9_800, 9_950)
    single = funded.deduct("A2", 200, txn_id="T1-d-2")                # a batch item is a deduct like any
    assert single.replayed and single.balance_minor == 9_800


def test_one_item_declined_the_others_applied(funded, shop):
    results = funded.deduct_many(_batch(("A1", 1_000, "T1-d-1"), ("A2", 10_001, "T1-d-2"), ("A3", 1, "T1-d-3"),
                                        ("NOPE", 1, "T1-d-4")))
    assert [r.status for r in results] == [Status.APPLIED, Status.INSUFFICIENT_FUNDS, Status.APPLIED,
                                           Status.ACCOUNT_NOT_FOUND]
    assert results[1].balance_minor == 10_000
    assert (shop.balance("A1"), shop.balance("A2"), shop.balance("A3")) == (9_000, 10_000, 9_999)
    assert funded.deduct_many(_batch(("A2", 10_001, "T1-d-2")))[0].replayed      # a decline is decided too


def test_an_item_above_the_approval_threshold_is_refused_alone(funded, shop):
    assert funded.credit("A1", 2 * THRESHOLD, txn_id="T1-c-big", supervisor_id="sup", supervisor_pin="9876").applied
    results = funded.deduct_many(_batch(("A1", 100, "T1-d-1"), ("A1", THRESHOLD + 1, "T1-d-big"),
                                        ("A1", THRESHOLD, "T1-d-edge")))
    assert results[0].applied and results[2].applied
    refused = results[1]
    assert isinstance(refused, GatewayRefused) and refused.code == "approval_required"
    assert shop.balance("A1") == 10_000 + 2 * THRESHOLD - 100 - THRESHOLD
    assert funded.load_operation("T1-d-edge").applied
    with pytest.raises(GatewayRefused):
        funded.load_operation("T1-d-big")                              # nothing decided for it
    # sent alone with the supervisor's PIN it is applied; a retry of the batch then replays it
    assert funded.deduct("A1", THRESHOLD + 1, txn_id="T1-d-big", supervisor_id="sup", supervisor_pin="9876").applied
    again = funded.deduct_many(_batch(("A1", 100, "T1-d-1"), ("A1", THRESHOLD + 1, "T1-d-big")))
    assert [r.replayed for r in again] == [True, True]


def _raw(gateway, shop, session: str | None, body) -> httpx.Response:
    headers = {"Authorization": f"Bearer {shop.tokens['T1']}"}
    if session:
        headers[SESSION_HEADER] = session
    return httpx.post(f"{gateway.url}/v1/ops/deduct_many", json=body, headers=headers, timeout=5)


@pytest.mark.parametrize("items,code,field,status", [
    ([{"txn_id": "T1-d-1", "account_id": "A1", "amount_minor": 1},
      {"txn_id": "@comp:x", "account_id": "A1", "amount_minor": 1}], "internal_txn_refused", "items[1].txn_id", 403),
    ([{"txn_id": "T1-d-1", "account_id": "@x", "amount_minor": 1}], "internal_txn_refused", "items[0].account_id",
     403),
    ([{"txn_id": "T1-d-1", "account_id": "A1", "amount_minor": "1"}], "wrong_type", "items[0].amount_minor", 400),
    ([{"txn_id": "T1-d-1", "account_id": "A1", "amount_minor": True}], "wrong_type", "items[0].amount_minor", 400),
    ([{"txn_id": "T1-d-1", "account_id": "A1", "amount_minor": 0}], "invalid_request", "items[0].amount_minor", 400),
    ([{"txn_id": "T1-d-1", "account_id": "A1"}], "missing_field", "items[0].amount_minor", 400),
    ([{"txn_id": "T1-d-1", "account_id": "A1", "amount_minor": 1, "terminal_id": "T2"}], "unknown_field",
     "items[0].terminal_id", 400),
    ([{"txn_id": "T1-d-1", "account_id": "A1", "amount_minor": 1,
       "approval": {"supervisor_id": "sup", "pin": "9876"}}], "unknown_field", "items[0].approval", 400),
    ([{"txn_id": "T1-d-1", "account_id": "A1", "amount_minor": 1}, "T1-d-2"], "wrong_type", "items[1]", 400),
    ({"txn_id": "T1-d-1"}, "wrong_type", "items", 400),
])
def test_a_bad_item_refuses_the_whole_batch(funded, shop, gateway, items, code, field, status):
    answer = _raw(gateway, shop, funded.session, {"items": items})
    assert answer.status_code == status, answer.text
    assert (answer.json()["error"], answer.json()["field"]) == (code, field)
    assert shop.balance("A1") == 10_000


def test_an_internal_id_through_the_client_and_claims_of_another_terminal(funded, shop, gateway):
    with pytest.raises(GatewayRefused) as refused:
        funded.deduct_many(_batch(("A1", 1, "T1-d-1"), ("A1", 1, "@expire:1")))
    assert (refused.value.code, refused.value.field) == ("internal_txn_refused", "items[1].txn_id")
    with pytest.raises(GatewayRefused) as refused:
        funded.deduct_many([DeductRequest("A1", 1, "T1-d-1", terminal_id="T2")])
    assert refused.value.code == "terminal_mismatch"
    with pytest.raises(InvalidRequest) as mixed:                       # one batch, one session: refused here
        funded.deduct_many([DeductRequest("A1", 1, "T1-d-1", cashier_id="sup")], cashier_id=CASHIER)
    assert mixed.value.field == "cashier_id"
    claim = _raw(gateway, shop, funded.session, {"items": [], "cashier_id": "sup"})
    assert (claim.status_code, claim.json()["error"]) == (403, "cashier_mismatch")
    top = _raw(gateway, shop, funded.session, {"items": [], "approval": {"supervisor_id": "sup", "pin": "9876"}})
    assert (top.status_code, top.json()["error"], top.json()["field"]) == (400, "unknown_field", "approval")
    assert shop.balance("A1") == 10_000


def test_too_many_items(funded, shop):
    batch = _batch(*((("A1", 1, f"T1-d-{i}") for i in range(MAX_BATCH_ITEMS + 1))))
    with pytest.raises(GatewayRefused) as refused:
        funded.deduct_many(batch)
    assert (refused.value.code, refused.value.field, refused.value.status_code) == ("too_many_items", "items", 413)
    assert refused.value.detail["max_items"] == MAX_BATCH_ITEMS
    assert shop.balance("A1") == 10_000
    assert all(r.applied for r in funded.deduct_many(batch[:MAX_BATCH_ITEMS]))
    assert shop.balance("A1") == 10_000 - MAX_BATCH_ITEMS


def test_no_session_refuses_the_batch_but_a_retry_of_decided_items_gets_their_answers(funded, shop, gateway):
    stranger = make_client(gateway, shop.tokens["T1"], sign_in=None)
    with pytest.raises(GatewayRefused) as refused:
        stranger.deduct_many(_batch(("A1", 1, "T1-d-1")))
    assert refused.value.code == "session_required"
    stranger.session = "not-a-session"
    with pytest.raises(GatewayRefused) as refused:
        stranger.deduct_many(_batch(("A1", 1, "T1-d-1")))
    assert refused.value.code == "session_invalid"
    with pytest.raises(GatewayRefused) as refused:
        stranger.deduct_many([])
    assert refused.value.code == "session_invalid"
    assert shop.balance("A1") == 10_000
    # the outbox rule: a batch decided, its answer lost, re-sent after the cashier signed out
    first = funded.deduct_many(_batch(("A1", 100, "T1-d-1"), ("A2", 20_000, "T1-d-2")))
    funded.sign_out()
    again = funded.deduct_many(_batch(("A1", 100, "T1-d-1"), ("A2", 20_000, "T1-d-2"), ("A3", 5, "T1-d-3")))
    assert again[0].replayed and again[0].balance_minor == first[0].balance_minor
    assert again[1].replayed and again[1].status is Status.INSUFFICIENT_FUNDS
    assert isinstance(again[2], GatewayRefused) and again[2].code == "session_required"
    assert (shop.balance("A1"), shop.balance("A2"), shop.balance("A3")) == (9_900, 10_000, 10_000)
    # another terminal's decided txn ids are not answered to this one
    other = make_client(gateway, shop.tokens["T2"], sign_in=None)
    with pytest.raises(GatewayRefused) as refused:
        other.deduct_many(_batch(("A1", 100, "T1-d-1")))
    assert refused.value.code == "session_required"
