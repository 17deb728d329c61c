"""The till's client: no Redis client in the till process, core's types and exceptions,
several gateway URLs (the next one on failure), and no answer = LedgerUnavailable with
the txn id (the outbox's "being checked", retried with the same id)."""
from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from core import LedgerUnavailable, Result, Status
from gateway import wire
from gateway.client import GatewayLedger
from tests.gateway.conftest import ROOT, make_client
from tests.support.proxy import FaultyProxy
from tests.support.servers import free_port


def test_importing_the_client_loads_no_redis():
    """Nor the server's libraries: a till needs httpx and core's Redis-free modules only."""
    code = ("import sys, gateway.client, core; from core import Result, LedgerUnavailable, InvalidRequest; "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('redis', 'hiredis', 'starlette', 'uvicorn'));"
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={"PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("ours,theirs", [
    (wire.AccountInfo, "core.ledger:AccountInfo"), (wire.CloseResult, "core.members:CloseResult"),
    (wire.Card, "core.members:Card"), (wire.MemberMatch, "core.members:MemberMatch"),
    (wire.Promotion, "core.members:Promotion"), (wire.PastOperation, "core.history:PastOperation")])
def test_answers_are_cores_own_classes(ours, theirs):
    """The client decodes into core's classes (core/records.py, Redis-free): the same
    fields, defaults and methods (`refund_check` too) as core.Ledger's answers."""
    import importlib
    module, _, name = theirs.partition(":")
    core_cls = getattr(importlib.import_module(module), name)
    assert ours is core_cls
    assert [(f.name, f.default) for f in dataclasses.fields(ours)] == \
        [(f.name, f.default) for f in dataclasses.fields(core_cls)]


def test_result_round_trip():
    result = Result(Status.INSUFFICIENT_FUNDS, 12, True, "T1-d-1", "A1", "deduct", 500, "")
    assert wire.decode_result(wire.encode(result)) == result
    closed = wire.CloseResult(Status.APPLIED, 0, False, "T1-q-1", "A1", "close", 0, "1-0", 700, 30)
    assert wire.decode_result(wire.encode(closed)) == closed


def test_no_gateway_is_ledger_unavailable_with_the_txn_id(shop):
    client = GatewayLedger(urls=[f"http://127.0.0.1:{free_port()}"], token=shop.tokens["T1"], timeout_s=0.5,
                           session="s")
    with pytest.raises(LedgerUnavailable) as caught:
        client.deduct("A1", 100, txn_id="T1-d-404")
    assert caught.value.txn_id == "T1-d-404" and "T1-d-404" in str(caught.value)


def test_next_url_on_failure(gateway, shop, till):
    assert till.open_account("A1", txn_id="T1-o-1").applied
    dead = f"http://127.0.0.1:{free_port()}"
    client = make_client(gateway, shop.tokens["T1"], urls=[dead, gateway.url], timeout_s=1.0)
    assert client.credit("A1", 100, txn_id="T1-c-1").applied
    assert client.urls[client._current] == gateway.url                # the next call starts there


def test_dropped_reply_then_retry_gets_the_first_answer(gateway, shop, till):
    """The request reached the gateway and was applied; the reply never came back. The
    client says 'unknown' (LedgerUnavailable, txn id); the retry answers the first decision."""
    assert till.open_account("A1", txn_id="T1-o-1").applied
    assert till.credit("A1", 1_000, txn_id="T1-c-1").applied
    proxy = FaultyProxy(gateway.port, drop_reply_probability=1.0).start()
    try:
        client = make_client(gateway, shop.tokens["T1"], sign_in=None, urls=[f"http://127.0.0.1:{proxy.port}"])
        client.session = till.session
        with pytest.raises(LedgerUnavailable) as caught:
            client.deduct("A1", 300, txn_id="T1-d-1")
        assert caught.value.txn_id == "T1-d-1"
        assert shop.balance("A1") == 700                              # it did happen
        proxy.drop_reply_probability = 0.0
        again = client.deduct("A1", 300, txn_id="T1-d-1")
        assert again.replayed and again.balance_minor == 700 and shop.balance("A1") == 700
    finally:
        proxy.close()


@pytest.mark.slow
def test_redis_down_behind_the_gateway_is_ledger_unavailable(tmp_path):
    """Redis stops behind a running gateway: the till hears 'unavailable' (503, then
    LedgerUnavailable with the txn id), never a decline or a traceback; once Redis is back
    the retry decides it once."""
    from core import Ledger
    from core.cashiers import CashierRegistry
    from core.terminals import TerminalRegistry
    from tests.gateway.conftest import GatewayProcess
    from tests.support.servers import RedisServer
    server = RedisServer("--appendonly", "yes", "--appendfsync", "always").start()   # survives its restart
    try:
        ledger = Ledger.from_url(server.url)
        ledger.init()
        CashierRegistry(ledger.client).add("c1", "Li", "1234")
        token = TerminalRegistry(ledger.client).enroll("T1")
        assert ledger.open_account("A1", txn_id="o-1", initial_minor=1_000).applied
        gw = GatewayProcess(server.url).start()
        try:
            client = make_client(gw, token, sign_in=("c1", "1234"), timeout_s=5.0)
            server.stop()
            with pytest.raises(LedgerUnavailable) as caught:
                client.deduct("A1", 100, txn_id="T1-d-down")
            assert caught.value.txn_id == "T1-d-down"
            server.start()
            first = client.deduct("A1", 100, txn_id="T1-d-down")
            assert first.balance_minor == 900 and client.deduct("A1", 100, txn_id="T1-d-down").replayed
        finally:
            gw.stop()
    finally:
        server.cleanup()
