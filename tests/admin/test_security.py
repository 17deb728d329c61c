"""Least privilege and transport security against real redis-servers the tests start:
the terminal ACL user runs the ledger and nothing else, scripts reach Redis after a
restart through the reconcile/admin user, TLS with a generated CA and client cert,
and `cashierctl doctor` findings."""
from __future__ import annotations

import subprocess

import pytest
import redis
from redis.exceptions import NoPermissionError

from admin.cashierctl import main
from core import Ledger, LedgerUnavailable
from core.acl import FORBIDDEN_FOR_TERMINAL, apply_users, ledger_users
from tests.support.servers import RedisServer, free_port

PASSWORDS = dict(terminal_password="t-secret", reconcile_password="r-secret", admin_password="a-secret")


@pytest.fixture
def secured():
    """A private Redis with the three ledger users and the default user switched off."""
    with RedisServer() as server:
        admin_client = server.client()
        Ledger(admin_client).init()
        Ledger(admin_client).open_account("A-1", txn_id="open-A-1", initial_minor=1000)
        apply_users(admin_client, ledger_users(**PASSWORDS))
        admin_client.execute_command("ACL", "SETUSER", "default", "off")
        yield server


def url(server, user, password):
    return f"redis://{user}:{password}@127.0.0.1:{server.port}/0"


def test_terminal_user_runs_the_ledger(secured):
    terminal = Ledger.from_url(url(secured, "cashier-terminal", "t-secret"), auto_init=False)
    assert terminal.deduct("A-1", 100, txn_id="t-1").balance_minor == 900
    assert terminal.hold("A-1", 100, txn_id="h-1", ttl_s=60).applied
    assert terminal.capture("h-1", 50, txn_id="c-1").applied
    assert terminal.refund("A-1", 50, txn_id="r-1", original_txn_id="t-1").applied
    assert terminal.balance("A-1") == 900 and terminal.available("A-1") == 900
    assert terminal.journal("A-1")[0].kind == "refund"


def test_terminal_user_signs_cashiers_in_and_locks_them(secured):
    from core.cashiers import CashierRegistry
    admin = redis.Redis(port=secured.port, username="cashier-admin", password="a-secret",
                        decode_responses=True)
    CashierRegistry(admin).add("c7", "Li Na", "4321")
    terminal = redis.Redis(port=secured.port, username="cashier-terminal", password="t-secret",
                           decode_responses=True)
    registry = CashierRegistry(terminal, max_failures=2)
    assert registry.verify("c7", "4321").ok
    assert not registry.verify("c7", "0000").ok
    assert not registry.verify("c7", "0000").ok
    assert not registry.verify("c7", "4321").ok            # locked after repeated failures
    with pytest.raises(NoPermissionError):                 # the string rights stop at cashier keys
        terminal.set("cs:{p0.0}:a:A-1", "1")


@pytest.mark.parametrize("command", [
    ("SET", "cs:x", "1"), ("DEL", "cs:{p0.0}:a:A-1"), ("EVAL", "return 1", "0"),
    ("SCRIPT", "LOAD", "return 1"), ("SCRIPT", "FLUSH"), ("FLUSHALL",), ("FLUSHDB",),
    ("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"), ("CONFIG", "GET", "*"), ("KEYS", "*"),
    ("XDEL", "cs:{p0.0}:j", "0-1"), ("XTRIM", "cs:{p0.0}:j", "MAXLEN", "0"),
    ("HSET", "other:key", "f", "1"), ("FUNCTION", "LOAD", "x"), ("ACL", "SETUSER", "x"),
    ("SHUTDOWN",),
])
def test_terminal_user_is_refused_everything_else(secured, command):
    client = redis.Redis(port=secured.port, username="cashier-terminal", password="t-secret")
    with pytest.raises(NoPermissionError):
        client.execute_command(*command)
    assert redis.Redis(port=secured.port, username="cashier-admin", password="a-secret").dbsize() > 0


def test_the_forbidden_list_is_not_granted():
    terminal = ledger_users(**PASSWORDS)[0]
    granted = {c.lstrip("+") for c in terminal.rule_args() if c.startswith("+")}
    assert not granted & set(FORBIDDEN_FOR_TERMINAL)
    # selectors grant string commands on cashier keys only
    assert all(sel.startswith("(~cs:cashier:* ") for sel in terminal.selectors)


def test_scripts_after_restart_come_from_the_admin_side(secured):
    admin = redis.Redis(port=secured.port, username="cashier-admin", password="a-secret")
    admin.function_flush()                                  # what a restart without persistence does
    terminal = Ledger.from_url(url(secured, "cashier-terminal", "t-secret"), auto_init=False)
    with pytest.raises(LedgerUnavailable) as info:
        terminal.deduct("A-1", 1, txn_id="t-1")
    assert "cashierctl scripts load" in str(info.value)
    assert main(["--redis-url", url(secured, "cashier-reconcile", "r-secret"), "scripts", "load"]) == 0
    assert terminal.deduct("A-1", 1, txn_id="t-1").balance_minor == 999


def test_acl_command_prints_one_line_per_user(capsys):
    assert main(["acl"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [l.split()[2] for l in lines] == ["cashier-terminal", "cashier-reconcile", "cashier-admin"]
    assert all(l.startswith("ACL SETUSER ") for l in lines) and "<terminal-password>" in lines[0]


def test_acl_apply_needs_passwords(redis_url, capsys):
    assert main(["--redis-url", redis_url, "acl", "--apply"]) == 2
    assert "password" in capsys.readouterr().err


def test_doctor_finds_what_is_wrong_and_what_is_right(capsys):
    with RedisServer("--maxmemory-policy", "allkeys-lru") as server:
        Ledger(server.client(), allow_evicting_policy=True).init()
        assert main(["--redis-url", server.url, "doctor"]) == 1
        out = capsys.readouterr().out
        assert "[FAIL] eviction" in out and "allkeys-lru" in out
        assert "[FAIL] persistence" in out and "[FAIL] acl" in out and "[  ok] scripts" in out
    with RedisServer("--appendonly", "yes", "--appendfsync", "always") as server:
        Ledger(server.client()).init()
        apply_users(server.client(), ledger_users(**PASSWORDS))
        server.client().execute_command("ACL", "SETUSER", "default", "off")
        admin_url = url(server, "cashier-admin", "a-secret")
        assert main(["--redis-url", admin_url, "doctor"]) == 0
        out = capsys.readouterr().out
        assert "FAIL" not in out and "appendfsync always" in out


# ----------------------------------------------------------------- TLS

def make_certs(directory):
    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=directory)
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=cashier-test-ca",
        "-keyout", "ca.key", "-out", "ca.pem")
    for name in ("server", "client"):
        run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", f"{name}.key",
            "-out", f"{name}.csr")
        (directory / f"{name}.ext").write_text("subjectAltName=IP:127.0.0.1\n")
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", f"{name}.pem", "-extfile", f"{name}.ext")


def test_tls_with_ca_and_client_certificate(tmp_path):
    make_certs(tmp_path)
    tls_port = free_port()
    server = RedisServer("--tls-port", str(tls_port), "--tls-cert-file", str(tmp_path / "server.pem"),
                         "--tls-key-file", str(tmp_path / "server.key"),
                         "--tls-ca-cert-file", str(tmp_path / "ca.pem"), "--tls-auth-clients", "yes")
    with server:
        tls_url = (f"rediss://127.0.0.1:{tls_port}/0?ssl_ca_certs={tmp_path / 'ca.pem'}"
                   f"&ssl_certfile={tmp_path / 'client.pem'}&ssl_keyfile={tmp_path / 'client.key'}")
        ledger = Ledger.from_url(tls_url)
        ledger.open_account("A-1", txn_id="o", initial_minor=10)
        assert ledger.deduct("A-1", 3, txn_id="d").balance_minor == 7
        # without the client certificate the server refuses the connection
        no_cert = Ledger.from_url(f"rediss://127.0.0.1:{tls_port}/0?ssl_ca_certs={tmp_path / 'ca.pem'}")
        no_cert.retry = type(no_cert.retry)(deadline_s=0.5)
        with pytest.raises(LedgerUnavailable):
            no_cert.balance("A-1")
