"""Who may ask: the terminal comes from its credential, the cashier from a session opened
on that terminal with a PIN checked (and locked out) on the server; supervisor approvals
are checked for the one operation; a revoked terminal is refused within 5 s."""
from __future__ import annotations

import time

import httpx
import pytest

from core import LedgerUnavailable, Result
from core.cashiers import lock_key
from gateway.wire import GatewayRefused, GatewayUnauthorized
from gateway.client import GatewayLedger
from tests.gateway.conftest import CASHIER, CASHIER_PIN, SUPERVISOR, SUPERVISOR_PIN, make_client


def _post(gateway, path, body, token=None, session=None):
    headers = {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if session:
        headers["X-Cashier-Session"] = session
    return httpx.post(f"{gateway.url}/v1{path}", json=body, headers=headers, timeout=5)


@pytest.fixture
def account(till, shop):
    assert till.open_account("A1", txn_id="T1-o-1").applied
    assert till.credit("A1", 5_000, txn_id="T1-c-1").applied
    return "A1"


@pytest.mark.parametrize("token", [None, "", "garbage", "T1.wrong-secret", "T9.x", "Bearer", "a" * 500])
def test_missing_or_wrong_token_refused(gateway, shop, account, till, token):
    r = _post(gateway, "/ops/deduct", {"txn_id": "T1-d-x", "account_id": "A1", "amount_minor": 1},
              token=token, session=till.session)
    assert r.status_code == 401 and r.json()["error"] == "unauthorized"
    r = _post(gateway, "/sessions", {"cashier_id": CASHIER, "pin": CASHIER_PIN}, token=token)
    assert r.status_code == 401 and r.json()["error"] == "unauthorized"
    assert shop.balance("A1") == 5_000


def test_the_server_keeps_only_the_tokens_hash(shop):
    stored = shop.client.hgetall("cs:terminal:{T1}:h")
    assert shop.tokens["T1"] not in str(stored) and len(stored["sha256"]) == 64


def test_revoked_terminal_refused_within_5_s(gateway, shop, account, till):
    assert till.deduct("A1", 1, txn_id="T1-d-1").applied
    shop.terminals.revoke("T1")
    revoked_at = time.monotonic()
    while True:
        try:
            till.deduct("A1", 1, txn_id=f"T1-d-{time.monotonic_ns()}")
        except GatewayUnauthorized as exc:      # outcome unknown to the till: kept in its outbox
            assert exc.code == "unauthorized" and isinstance(exc, LedgerUnavailable)
            break
        assert time.monotonic() - revoked_at < 5.0, "still accepted 5 s after revocation"
        time.sleep(0.2)
    assert time.monotonic() - revoked_at < 5.0
    with pytest.raises(GatewayUnauthorized):
        make_client(gateway, shop.tokens["T1"])                     # no new sign-in either
    listed = {t.terminal_id: t for t in shop.terminals.list()}
    assert listed["T1"].revoked and not listed["T2"].revoked and listed["T1"].last_seen_ms > 0
    assert listed["T1"].version.startswith("cashier-till/")


def test_body_naming_another_terminal_or_cashier_refused(gateway, shop, account, till):
    for field, value, code in (("terminal_id", "T2", "terminal_mismatch"),
                               ("cashier_id", SUPERVISOR, "cashier_mismatch")):
        r = _post(gateway, "/ops/deduct", {"txn_id": "T1-d-y", "account_id": "A1", "amount_minor": 100, field: value},
                  token=shop.tokens["T1"], session=till.session)
        assert r.status_code == 403 and r.json()["error"] == code
    with pytest.raises(GatewayRefused):
        till.deduct("A1", 100, txn_id="T1-d-y", terminal_id="T2")
    # naming itself is fine, and the journal says who it really was
    assert till.deduct("A1", 100, txn_id="T1-d-y", terminal_id="T1", cashier_id=CASHIER).applied
    assert shop.balance("A1") == 4_900
    r = _post(gateway, "/sessions", {"cashier_id": CASHIER, "pin": CASHIER_PIN, "terminal_id": "T2"},
              token=shop.tokens["T1"])
    assert r.status_code == 403 and r.json()["error"] == "terminal_mismatch"


def test_another_terminals_session_refused(gateway, shop, account, till):
    t2 = make_client(gateway, shop.tokens["T2"], sign_in=None)
    t2.session = till.session                                       # captured from T1
    with pytest.raises(GatewayRefused) as refused:
        t2.deduct("A1", 100, txn_id="T2-d-1")
    assert refused.value.code == "session_other_terminal"
    with pytest.raises(GatewayRefused) as refused:
        t2.account("A1")
    assert refused.value.code == "session_other_terminal"
    assert shop.balance("A1") == 5_000


def test_no_session_no_money_and_sign_out_ends_it(gateway, shop, account, till):
    anonymous = make_client(gateway, shop.tokens["T1"], sign_in=None)
    with pytest.raises(GatewayRefused) as refused:
        anonymous.deduct("A1", 1, txn_id="T1-d-2")
    assert refused.value.code == "session_required"
    anonymous.session = "made-up-session"
    with pytest.raises(GatewayRefused) as refused:
        anonymous.deduct("A1", 1, txn_id="T1-d-2")
    assert refused.value.code == "session_invalid"
    old = till.session
    till.sign_out()
    anonymous.session = old
    with pytest.raises(GatewayRefused) as refused:
        anonymous.deduct("A1", 1, txn_id="T1-d-2")
    assert refused.value.code == "session_invalid"
    assert shop.balance("A1") == 5_000
    keys = shop.client.keys("cs:session:*")
    assert old not in "".join(keys)                                  # only hashes of tokens as keys


def test_sign_in_answer_never_carries_a_hash(gateway, shop):
    r = _post(gateway, "/sessions", {"cashier_id": CASHIER, "pin": CASHIER_PIN}, token=shop.tokens["T1"])
    assert r.status_code == 200 and "scrypt" not in r.text
    assert set(r.json()["cashier"]) == {"cashier_id", "name", "supervisor", "can_top_up"}


def test_pin_lockout_after_5_wrong_counted_on_the_server(gateway, shop):
    t1 = make_client(gateway, shop.tokens["T1"], sign_in=None)
    t2 = make_client(gateway, shop.tokens["T2"], sign_in=None)
    outcomes = [(t1 if i % 2 else t2).sign_in(CASHIER, "0000").outcome for i in range(5)]   # two tills, one count
    assert outcomes == ["wrong_pin"] * 4 + ["locked"]
    locked = t1.sign_in(CASHIER, CASHIER_PIN)                       # the right PIN, while locked
    assert locked.outcome == "locked" and locked.locked_s > 0 and not t1.session
    assert shop.client.exists(lock_key(CASHIER))
    assert t1.sign_in("nobody", "1234").outcome == "wrong_pin"     # unknown ids look alike


def test_supervisor_approval_checked_for_one_operation(gateway, shop, account, till):
    assert till.deduct("A1", 1_000, txn_id="T1-d-5").applied
    with pytest.raises(GatewayRefused) as refused:
        till.refund("A1", 1_000, txn_id="T1-r-5", original_txn_id="T1-d-5")
    assert refused.value.code == "approval_required"
    with pytest.raises(GatewayRefused) as refused:                   # a cashier cannot approve their own refund
        till.refund("A1", 1_000, txn_id="T1-r-5", original_txn_id="T1-d-5", supervisor_id=CASHIER,
                    supervisor_pin=CASHIER_PIN)
    assert refused.value.code == "self_approval"
    with pytest.raises(GatewayRefused) as refused:                   # not a supervisor
        till.refund("A1", 1_000, txn_id="T1-r-5", original_txn_id="T1-d-5", supervisor_id="c2",
                    supervisor_pin="2345")
    assert refused.value.code == "approval_refused" and refused.value.detail["outcome"] == "not_supervisor"
    assert shop.balance("A1") == 4_000
    ok = till.refund("A1", 1_000, txn_id="T1-r-5", original_txn_id="T1-d-5", supervisor_id=SUPERVISOR,
                     supervisor_pin=SUPERVISOR_PIN)
    assert isinstance(ok, Result) and ok.applied and shop.balance("A1") == 5_000
    # a supervisor signed in cannot approve their own refund either
    boss = make_client(gateway, shop.tokens["T2"], sign_in=(SUPERVISOR, SUPERVISOR_PIN))
    assert boss.deduct("A1", 10, txn_id="T2-d-6").applied
    with pytest.raises(GatewayRefused) as refused:
        boss.refund("A1", 10, txn_id="T2-r-6", original_txn_id="T2-d-6", supervisor_id=SUPERVISOR,
                    supervisor_pin=SUPERVISOR_PIN)
    assert refused.value.code == "self_approval"


def test_session_ended_on_one_gateway_refused_on_another_within_5_s(gateway, shop, redis_url, till):
    from tests.gateway.conftest import GatewayProcess
    assert till.open_account("A1", txn_id="T1-o-1").applied
    other = GatewayProcess(redis_url).start()
    try:
        second = make_client(other, shop.tokens["T1"], sign_in=None)
        second.session = till.session
        assert second.balances("A1") == (0, 0)                         # cached there now
        till.sign_out()                                                 # on the first gateway
        ended_at = time.monotonic()
        while True:
            try:
                second.balances("A1")
            except GatewayRefused as exc:
                assert exc.code == "session_invalid"
                break
            assert time.monotonic() - ended_at < 5.0
            time.sleep(0.2)
    finally:
        other.stop()


def test_expired_session_refused(gateway, shop, till):
    assert till.open_account("A1", txn_id="T1-o-1").applied
    for key in shop.client.keys("cs:session:*"):
        shop.client.pexpire(key, 1)
    time.sleep(2.5)                                                     # past the gateway's 2 s cache
    with pytest.raises(GatewayRefused) as refused:
        till.deduct("A1", 1, txn_id="T1-d-exp")
    assert refused.value.code == "session_invalid"


def test_tls(shop, redis_url, tmp_path):
    import subprocess

    from core import LedgerUnavailable
    from tests.gateway.conftest import GatewayProcess
    cert, key = tmp_path / "gw.crt", tmp_path / "gw.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    gw = GatewayProcess(redis_url, "--tls-cert", str(cert), "--tls-key", str(key), verify=str(cert)).start()
    try:
        assert gw.url.startswith("https://")
        client = GatewayLedger(urls=[gw.url], token=shop.tokens["T1"], verify=str(cert))
        assert client.sign_in(CASHIER, CASHIER_PIN).ok
        assert client.open_account("A1", txn_id="T1-o-tls").applied
        client.close()
        stranger = GatewayLedger(urls=[gw.url], token=shop.tokens["T1"], session="x")   # system CAs only
        with pytest.raises(LedgerUnavailable):
            stranger.deduct("A1", 1, txn_id="T1-d-tls")
        stranger.close()
    finally:
        gw.stop()


def test_retry_of_a_decided_request_answers_it_after_the_session_ended(gateway, shop, till):
    """The reply of a charge was lost; the cashier signed out (or the session expired) before
    the outbox re-sent it. The retry gets the first decision, not "nothing changed"."""
    assert till.open_account("A1", txn_id="T1-o-1").applied
    assert till.credit("A1", 1_000, txn_id="T1-c-1").applied
    first = till.deduct("A1", 300, txn_id="T1-d-lost")
    assert till.refund("A1", 100, txn_id="T1-r-lost", original_txn_id="T1-d-lost", supervisor_id=SUPERVISOR,
                       supervisor_pin=SUPERVISOR_PIN).applied
    declined = till.deduct("A1", 99_999, txn_id="T1-d-declined")
    session = till.session
    till.sign_out()
    till.session = session                                          # the outbox still holds the old one
    again = till.deduct("A1", 300, txn_id="T1-d-lost")
    assert again.replayed and again.balance_minor == first.balance_minor
    assert till.deduct("A1", 99_999, txn_id="T1-d-declined").status is declined.status
    shop.client.hset("cs:cashier:{sup}:h", "supervisor", 0)         # the approval would no longer hold
    refund = till.refund("A1", 100, txn_id="T1-r-lost", original_txn_id="T1-d-lost", supervisor_id=SUPERVISOR,
                         supervisor_pin=SUPERVISOR_PIN)
    assert refund.replayed and shop.balance("A1") == 800
    with pytest.raises(GatewayRefused) as refused:                  # naming another terminal: still refused
        till.deduct("A1", 300, txn_id="T1-d-lost", terminal_id="T2")
    assert refused.value.code == "terminal_mismatch"
    with pytest.raises(GatewayRefused) as refused:                  # anything not decided is refused
        till.deduct("A1", 300, txn_id="T1-d-new")
    assert refused.value.code == "session_invalid"
    t2 = make_client(gateway, shop.tokens["T2"], sign_in=None)      # another till cannot read it so
    with pytest.raises(GatewayRefused):
        t2.deduct("A1", 300, txn_id="T1-d-lost")
    assert shop.balance("A1") == 800
