"""The shop's servers as their own Redis ACL users (core.acl), on a private redis-server
with the default user switched off: the real gateway (`python -m gateway run`) logged in
as the ACL user gateway serves a till's day (ping with Redis's memory share, sign-in, a wrong
PIN, charges, a top-up, holds, a refund approved by a supervisor's PIN and one by a
grant, reads, sign-out, a revoked terminal), and the reconcile service (`python -m
reconcile_service run --once`) as the ACL user reconcile drains it all into its database.
Redis's ACL LOG must stay empty: a refused command the code swallows (the ping's INFO)
fails the test as surely as one that surfaces."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time

import pytest
import redis

from core import Ledger
from core.acl import apply_users, ledger_users
from core.cashiers import CashierRegistry
from core.terminals import TerminalRegistry
from gateway.wire import GatewayRefused, GatewayUnauthorized
from tests.gateway.conftest import ROOT, GatewayProcess, make_client
from tests.support.servers import RedisServer

PASSWORDS = dict(gateway_password="g-secret", reconcile_password="r-secret", admin_password="a-secret")


@pytest.fixture
def secured():
    """A private Redis (maxmemory set, so the ping's memory share is a number) holding a
    ledger, cashiers and two enrolled terminals, with the three users applied and the
    default user off; yields (server, admin client, terminal tokens)."""
    with RedisServer("--maxmemory", "256mb", "--maxmemory-policy", "noeviction") as server:
        setup = server.client()
        ledger = Ledger(setup)
        ledger.init()
        assert ledger.open_account("A1", txn_id="open-A1", initial_minor=10_000, holder_name="张三",
                                   phone="13800138000").applied
        assert ledger.add_promotion(10_000, 2_000, txn_id="promo-1").applied
        cashiers = CashierRegistry(setup)
        cashiers.add("c1", "Li Na", "1234", can_top_up=True)
        cashiers.add("sup", "Wang Wei", "9876", supervisor=True)
        terminals = TerminalRegistry(setup)
        tokens = {t: terminals.enroll(t) for t in ("T1", "T2")}
        apply_users(setup, ledger_users(**PASSWORDS))
        setup.execute_command("ACL", "SETUSER", "default", "off")
        setup.close()
        admin = redis.Redis(port=server.port, username="admin", password="a-secret", decode_responses=True)
        admin.acl_log_reset()
        yield server, admin, tokens
        admin.close()


def as_user(server, user: str, password: str) -> str:
    return f"redis://{user}:{password}@127.0.0.1:{server.port}/0"


def test_the_gateway_serves_a_till_as_cashier_gateway_and_reconcile_drains_it(secured, tmp_path):
    server, admin, tokens = secured
    gw = GatewayProcess(as_user(server, "gateway", "g-secret"), "--approval-above-minor", "50000").start()
    try:
        till = make_client(gw, tokens["T1"], sign_in=None)
        pong = till.ping()                                       # EXISTS cs:meta, the retention, INFO memory
        assert pong["status"] == "ok" and pong["retention_s"] > 0
        assert isinstance(pong["memory_share"], float) and 0 < pong["memory_share"] < 1
        wrong = till.sign_in("c1", "0000")                       # the PIN-attempt counter (cashier keys)
        assert not wrong.ok and wrong.attempts_left == 4
        assert till.sign_in("c1", "1234").ok                     # session record: MULTI HSET EXPIRE EXEC
        assert till.deduct("A1", 1_500, txn_id="T1-d-1").balance_minor == 8_500
        assert till.credit("A1", 10_000, txn_id="T1-c-1", bonus_minor=2_000).applied
        assert till.hold("A1", 700, txn_id="T1-h-1", ttl_s=600).applied
        assert till.hold_account("T1-h-1") == "A1"
        assert till.capture("T1-h-1", 500, txn_id="T1-k-1").applied
        assert till.hold("A1", 300, txn_id="T1-h-2", ttl_s=600).applied
        assert till.void("T1-h-2", txn_id="T1-v-1").applied
        assert till.deduct("A1", 6_000, txn_id="T1-d-2").applied
        with pytest.raises(GatewayRefused) as refused:           # a refund needs a supervisor
            till.refund("A1", 6_000, txn_id="T1-r-1", original_txn_id="T1-d-2")
        assert refused.value.code == "approval_required"
        refund = till.refund("A1", 6_000, txn_id="T1-r-1", original_txn_id="T1-d-2",
                             supervisor_id="sup", supervisor_pin="9876")
        assert refund.applied and till.last_approved_by == "sup"
        signin, grant = till.approve("sup", "9876", kind="refund")   # a grant: HSETNX, HGETALL on cs:approval:*
        assert signin.ok
        assert till.refund("A1", 500, txn_id="T1-r-2", original_txn_id="T1-d-1",
                           approval_grant=grant.grant).applied
        with pytest.raises(GatewayRefused):                      # used: refused, the grant record stays
            till.refund("A1", 100, txn_id="T1-r-3", original_txn_id="T1-d-1", approval_grant=grant.grant)
        assert till.issue_card("A1", "CARD-1", txn_id="T1-n-1").applied
        assert till.resolve_card("CARD-1").account_id == "A1"
        [match] = till.find_members("张")
        assert match.account_id == "A1"
        assert [p.bonus_minor for p in till.promotions()] == [2_000]
        assert till.load_operation("T1-r-1").kind == "refund"
        assert [op.txn_id for op in till.recent("A1", count=3)][0] == "T1-n-1"
        balance = 10_000 - 1_500 + 10_000 + 2_000 - 500 - 6_000 + 6_000 + 500
        assert till.account("A1").balance_minor == balance
        assert till.balances("A1") == (balance, balance)
        till.sign_out()                                          # DEL of its session record
        assert not admin.keys("cs:session:*")
        other = make_client(gw, tokens["T2"], sign_in=None)
        assert other.ping()["terminal_id"] == "T2"
        TerminalRegistry(admin).revoke("T2")                     # the enroll check (HMGET) refuses it
        other.close()
        late = make_client(gw, tokens["T2"], sign_in=None)
        with pytest.raises(GatewayUnauthorized) as revoked:
            for _ in range(60):                                  # the gateways' cache: at most 2 s
                late.ping()
                time.sleep(0.1)
        assert revoked.value.code == "unauthorized"
        late.close()
        till.close()
    finally:
        gw.stop()
    assert admin.acl_log() == [], "gateway was refused a command"

    database = tmp_path / "books.sqlite3"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CASHIER_REDIS_URL": as_user(server, "reconcile", "r-secret"),
           "CASHIER_DATABASE_URL": f"sqlite:///{database}"}
    done = subprocess.run([sys.executable, "-m", "reconcile_service", "run", "--once", "--metrics-port", "0",
                           "--log-format", "text"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    with sqlite3.connect(database) as books:
        txns = {row[0] for row in books.execute("SELECT txn_id FROM ledger_entries")}
    assert {"T1-d-1", "T1-c-1", "T1-k-1", "T1-v-1", "T1-r-1", "T1-r-2", "T1-n-1"} <= txns
    assert admin.acl_log() == [], "reconcile was refused a command"


def test_the_gateway_user_writes_ledger_keys_itself_and_nothing_else(secured):
    """Documented, not a hole: Redis checks a function's commands against its caller, so the
    gateway's password can write cs:* hashes directly (a trusted server holds it, no till
    does). It cannot DEL a balance, SET one, EVAL, load functions or touch other keys."""
    server, admin, _ = secured
    gateway = redis.Redis(port=server.port, username="gateway", password="g-secret", decode_responses=True)
    assert gateway.hset("cs:acl-test", "f", "1") == 1
    assert gateway.delete("cs:session:{x}:h") == 0              # its own records: DEL allowed
    for command in (("DEL", "cs:acl-test"), ("SET", "cs:acl-test", "1"), ("EVAL", "return 1", "0"),
                    ("HSET", "other:key", "f", "1"), ("FUNCTION", "FLUSH"), ("XTRIM", "cs:{p0.0}:j", "MAXLEN", "0"),
                    ("ACL", "SETUSER", "x"), ("CONFIG", "SET", "maxmemory-policy", "allkeys-lru")):
        with pytest.raises(redis.exceptions.NoPermissionError):
            gateway.execute_command(*command)
    assert admin.hget("cs:acl-test", "f") == "1"
    gateway.close()
