"""Bad input to the gateway: internal kinds and '@' ids, malformed or oversize bodies,
wrong types, unknown fields, slow bodies. Each gets a clear error code and nothing is
decided: no traceback, nothing about the server, money unchanged."""
from __future__ import annotations

import json
import socket
import time

import httpx
import pytest

from tests.gateway.conftest import SUPERVISOR, SUPERVISOR_PIN


@pytest.fixture
def http(gateway, shop, till):
    assert till.open_account("A1", txn_id="T1-o-1").applied
    assert till.credit("A1", 5_000, txn_id="T1-c-1").applied
    headers = {"Authorization": f"Bearer {shop.tokens['T1']}", "X-Cashier-Session": till.session}
    with httpx.Client(base_url=f"{gateway.url}/v1", headers=headers, timeout=15) as client:
        yield client
    assert shop.balance("A1") == 5_000, "a refused request moved money"


def _send(http, path, raw: bytes, content_type="application/json"):
    return http.post(path, content=raw, headers={"Content-Type": content_type})


def _assert_clean(r, status: int, code: str, field: str | None = None):
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) >= {"error", "field", "message"} and body["error"] == code, body
    if field is not None:
        assert body["field"] == field, body
    for leak in ("Traceback", "File \"", "redis://", "6410", "/work/", ".py", "Error:"):
        assert leak not in r.text, r.text


DEDUCT = {"txn_id": "T1-d-1", "account_id": "A1", "amount_minor": 100}


@pytest.mark.parametrize("kind", ["compensate", "restore", "restore_account", "expire_holds", "setting",
                                  "freeze", "unfreeze", "shop_setting", "cashier_pin_attempt"])
def test_internal_and_admin_kinds_refused(http, kind):
    _assert_clean(http.post(f"/ops/{kind}", json=DEDUCT), 403, "kind_refused")


def test_deduct_many_takes_items_not_a_single_deduct(http):
    """deduct_many is a till's batch endpoint (tests/gateway/test_batches.py): a single
    deduct's body is refused cleanly, naming the first field it does not know."""
    _assert_clean(http.post("/ops/deduct_many", json=DEDUCT), 400, "unknown_field", "txn_id")


@pytest.mark.parametrize("field,value", [("txn_id", "@cmp:x:1"), ("account_id", "@rst:A1"),
                                         ("original_txn_id", "@hx:1")])
def test_at_ids_refused(http, field, value):
    body = {"txn_id": "T1-r-1", "account_id": "A1", "amount_minor": 100, "original_txn_id": "T1-c-1",
            "approval": {"supervisor_id": SUPERVISOR, "pin": SUPERVISOR_PIN}, field: value}
    _assert_clean(http.post("/ops/refund", json=body), 403, "internal_txn_refused", field)
    _assert_clean(http.post("/ops/credit", json={"txn_id": "@cmp:A1:1", "account_id": "A1", "amount_minor": 1}),
                  403, "internal_txn_refused", "txn_id")
    _assert_clean(http.get("/accounts/@rst:A1"), 403, "internal_txn_refused", "account_id")


@pytest.mark.parametrize("raw", [b"", b"{", b"[1,2]", b'"x"', b"null", b"\xff\xfe", b'{"txn_id": NaN}',
                                 b'{"a": Infinity}', b'{"txn_id":"T1-d-1","txn_id":"T1-d-2","account_id":"A1",'
                                 b'"amount_minor":1}', b"[" * 100_00 + b"]" * 100_00])
def test_malformed_json(http, raw):
    r = _send(http, "/ops/deduct", raw)
    assert r.status_code in (400, 413)
    _assert_clean(r, r.status_code, "malformed_json" if r.status_code == 400 else "body_too_large")


def test_oversize_body(http):
    big = json.dumps({**DEDUCT, "pad": "x" * 70_000}).encode()
    _assert_clean(_send(http, "/ops/deduct", big), 413, "body_too_large")

    def chunks():                                                    # no Content-Length: counted as it comes
        yield b'{"txn_id": "T1-d-1", "pad": "'
        for _ in range(100):
            yield b"x" * 1024
        yield b'"}'
    _assert_clean(http.post("/ops/deduct", content=chunks(), headers={"Content-Type": "application/json"}),
                  413, "body_too_large")


def test_wrong_content_type(http):
    _assert_clean(_send(http, "/ops/deduct", json.dumps(DEDUCT).encode(), "text/plain"), 415,
                  "unsupported_media_type")


@pytest.mark.parametrize("field,value", [("amount_minor", "100"), ("amount_minor", 1.0), ("amount_minor", True),
                                         ("amount_minor", None), ("amount_minor", [100]), ("txn_id", 5),
                                         ("account_id", {"a": 1})])
def test_wrong_types(http, field, value):
    _assert_clean(http.post("/ops/deduct", json={**DEDUCT, field: value}), 400, "wrong_type", field)


@pytest.mark.parametrize("field,value,code", [
    ("amount_minor", 0, "invalid_request"), ("amount_minor", -5, "invalid_request"),
    ("amount_minor", 10 ** 12, "invalid_request"), ("account_id", "a b", "invalid_request"),
    ("account_id", "x" * 65, "invalid_request"), ("txn_id", "{tag}", "invalid_request"),
    ("txn_id", "", "invalid_request")])
def test_values_checked_before_core(http, field, value, code):
    _assert_clean(http.post("/ops/deduct", json={**DEDUCT, field: value}), 400, code, field)


@pytest.mark.parametrize("extra", [{"kind": "compensate"}, {"balance_minor": 1}, {"ttl_s": 5}, {"approved_by": "sup"},
                                   {"approval": {"supervisor_id": SUPERVISOR, "pin": SUPERVISOR_PIN, "x": 1}}])
def test_unknown_fields(http, extra):
    r = http.post("/ops/deduct", json={**DEDUCT, **extra})
    _assert_clean(r, 400, "unknown_field")


def test_missing_fields_and_routes(http):
    _assert_clean(http.post("/ops/deduct", json={"txn_id": "T1-d-1"}), 400, "missing_field", "account_id")
    _assert_clean(http.get("/nothing-here"), 404, "not_found")
    _assert_clean(http.get("/ops/deduct"), 405, "method_not_allowed")
    _assert_clean(http.get("/members", params={"query": "x", "limit": "abc"}), 400, "wrong_type", "limit")
    _assert_clean(http.get("/accounts/A1", params={"debug": "1"}), 400, "unknown_field", "debug")


@pytest.mark.slow
def test_slow_body_cut_off(gateway, shop, till, http):
    """A client that sends its headers and then trickles (or stalls) the body is cut off after
    10 s with request_timeout; the gateway keeps serving others meanwhile."""
    head = (f"POST /v1/ops/deduct HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {shop.tokens['T1']}\r\n"
            f"X-Cashier-Session: {till.session}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{{")
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=20) as s:
        s.sendall(head.encode())
        started = time.monotonic()
        assert till.balances("A1") == (5_000, 5_000)                # others are served meanwhile
        reply = b""
        while b"request_timeout" not in reply:
            chunk = s.recv(65536)
            if not chunk:
                break
            reply += chunk
        reply = reply.decode()
        assert time.monotonic() - started < 18
    assert " 408 " in reply.split("\r\n")[0] and "request_timeout" in reply and "Traceback" not in reply
