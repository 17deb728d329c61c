"""Least privilege and transport security against real redis-servers the tests start:
the gateway's ACL user runs the ledger and nothing else, scripts reach Redis after a
restart through the reconcile/admin user, `cashierctl acl --apply` deletes the till user
of earlier versions and warns about other writers, `cashierctl doctor` names every user
that can write the ledger's keys, TLS with a generated CA and client cert.
(tests/gateway/test_acl_users.py runs the gateway and the reconcile service as their users.)"""
from __future__ import annotations

import subprocess

import pytest
import redis
from redis.exceptions import NoPermissionError

from admin.cashierctl import main
from core import Ledger, LedgerUnavailable
from core.acl import FORBIDDEN_FOR_GATEWAY, apply_users, ledger_users
from tests.support.servers import RedisServer, free_port

PASSWORDS = dict(gateway_password="g-secret", reconcile_password="r-secret", admin_password="a-secret")
APPLY = ["acl", "--apply", "--gateway-password", "g-secret", "--reconcile-password", "r-secret",
         "--admin-password", "a-secret"]


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


def test_gateway_user_runs_the_ledger(secured):
    terminal = Ledger.from_url(url(secured, "gateway", "g-secret"), auto_init=False)
    assert terminal.deduct("A-1", 100, txn_id="t-1").balance_minor == 900
    assert terminal.hold("A-1", 100, txn_id="h-1", ttl_s=60).applied
    assert terminal.capture("h-1", 50, txn_id="c-1").applied
    assert terminal.refund("A-1", 50, txn_id="r-1", original_txn_id="t-1").applied
    assert terminal.balance("A-1") == 900 and terminal.available("A-1") == 900
    assert terminal.journal("A-1")[0].kind == "refund"


def test_gateway_user_signs_cashiers_in_and_locks_them(secured):
    from core.cashiers import CashierRegistry
    admin = redis.Redis(port=secured.port, username="admin", password="a-secret",
                        decode_responses=True)
    CashierRegistry(admin).add("c7", "Li Na", "4321")
    terminal = redis.Redis(port=secured.port, username="gateway", password="g-secret",
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
    ("SHUTDOWN",), ("DEL", "cs:{p0.0}:j"), ("ACL", "DELUSER", "admin"), ("ACL", "USERS"),
])
def test_gateway_user_is_refused_everything_else(secured, command):
    client = redis.Redis(port=secured.port, username="gateway", password="g-secret")
    with pytest.raises(NoPermissionError):
        client.execute_command(*command)
    assert redis.Redis(port=secured.port, username="admin", password="a-secret").dbsize() > 0


def test_the_forbidden_list_is_not_granted():
    gateway = ledger_users(**PASSWORDS)[0]
    assert gateway.name == "gateway"
    granted = {c.lstrip("+") for c in gateway.rule_args() if c.startswith("+")}
    assert not granted & set(FORBIDDEN_FOR_GATEWAY)
    # selectors grant string commands on cashier and member PIN keys, DEL on its sessions and
    # grants, only
    assert gateway.selectors == ("(~cs:cashier:* +get +set +del +incr +pttl +pexpire)",
                                 "(~cs:mpin:* +get +set +del +incr +pttl +pexpire)",
                                 "(~cs:session:* ~cs:approval:* +del)")


def test_the_gateway_user_keeps_member_pins(secured):
    from core.member_pins import MemberPins
    gw = redis.Redis(port=secured.port, username="gateway", password="g-secret", decode_responses=True)
    pins = MemberPins(gw)
    pins.set_pin("A-sec", "123456", "123456")
    assert [pins.verify("A-sec", "000000").outcome for _ in range(5)][-1] == "locked"
    assert pins.reset("A-sec") and not pins.has_pin("A-sec") and not pins.locked("A-sec")


def test_the_gateway_user_keeps_member_codes(secured):
    """Member codes live beside the member PIN's keys (cs:mpin:*): the gateway's ACL needs
    nothing more to enrol, use a code once, count a wrong one and remove it."""
    from core.member_codes import MemberCodes, member_code_text, parse_member_code, secret_of_uri
    gw = redis.Redis(port=secured.port, username="gateway", password="g-secret", decode_responses=True)
    codes = MemberCodes(gw)
    secret = secret_of_uri(codes.enrol("A-sec"))
    scanned = parse_member_code(member_code_text(secret, "A-sec"))
    assert codes.verify(scanned, "T1-d-1").ok and codes.verify(scanned, "T1-d-2").outcome == "code_used"
    wrong = parse_member_code(f"MC1:A-sec:{(int(scanned.code) + 1) % 1_000_000:06d}")
    assert codes.verify(wrong, "T1-d-3").outcome == "wrong_code"
    assert codes.remove("A-sec") and not codes.enrolled("A-sec")


def test_scripts_after_restart_come_from_the_admin_side(secured):
    admin = redis.Redis(port=secured.port, username="admin", password="a-secret")
    admin.function_flush()                                  # what a restart without persistence does
    terminal = Ledger.from_url(url(secured, "gateway", "g-secret"), auto_init=False)
    with pytest.raises(LedgerUnavailable) as info:
        terminal.deduct("A-1", 1, txn_id="t-1")
    assert "cashierctl scripts load" in str(info.value)
    assert main(["--redis-url", url(secured, "reconcile", "r-secret"), "scripts", "load"]) == 0
    assert terminal.deduct("A-1", 1, txn_id="t-1").balance_minor == 999


def test_acl_command_prints_one_line_per_user(capsys):
    assert main(["acl"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [l.split()[2] for l in lines] == ["gateway", "reconcile", "admin"]
    assert all(l.startswith("ACL SETUSER ") for l in lines) and "<gateway-password>" in lines[0]


def test_acl_apply_needs_passwords(redis_url, capsys):
    assert main(["--redis-url", redis_url, "acl", "--apply"]) == 2
    assert "password" in capsys.readouterr().err


def test_the_old_terminal_password_is_refused_with_the_reason(redis_url, capsys):
    assert main(["--redis-url", redis_url, "acl", "--terminal-password", "t", "--apply"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cashierctl: terminal_password: there is no till user any more") and "--gateway-password" in err
    assert "Traceback" not in err


OLD_TERMINAL_RULES = ("on", ">t-old", "~cs:*", "-@all", "+fcall", "+fcall_ro", "+hgetall", "+hset", "+hincrby",
                      "+xadd", "+incrby", "+wait", "+ping", "+hello", "+info", "+auth")


def test_acl_apply_deletes_the_old_till_users_and_warns_about_other_writers(capsys):
    """A shop upgraded from the version whose tills held a Redis login: its shared
    cashier-terminal user (and a per-till one) is deleted, a till still connected with it
    is cut off; a stranger that can write cs:* is left and warned about, users that
    cannot write (replication) are left silently; a second run changes nothing."""
    with RedisServer() as server:
        setup = server.client()
        Ledger(setup).init()
        for old in ("cashier-terminal", "cashier-terminal-T3"):
            setup.execute_command("ACL", "SETUSER", old, *OLD_TERMINAL_RULES)
        # the former name of the reconcile service's user (before issue 24 named them gateway, reconcile, admin)
        setup.execute_command("ACL", "SETUSER", "cashier-reconcile", "on", ">r-old", "~cs:*", "+@all")
        setup.execute_command("ACL", "SETUSER", "stray", "on", ">s", "~cs:*", "+hset")
        setup.execute_command("ACL", "SETUSER", "cashier-replication", "on", ">p", "+psync", "+replconf", "+ping")
        old_till = redis.Redis(port=server.port, username="cashier-terminal", password="t-old")
        assert old_till.ping()
        assert main(["--redis-url", server.url, *APPLY]) == 0
        captured = capsys.readouterr()
        assert "applied 3 users (gateway, reconcile, admin) on redis" in captured.out
        assert ("deleted the old till user cashier-terminal on redis (1 open connection(s) closed: a till "
                "still talking to Redis directly must use the gateway now)") in captured.out
        assert "deleted the old till user cashier-terminal-T3 on redis\n" in captured.out
        assert "deleted the former user cashier-reconcile (now reconcile) on redis\n" in captured.out
        warnings = captured.err.strip().splitlines()
        assert [w.split()[3] for w in warnings] == ["default", "stray"], warnings
        assert "user stray can write the ledger's keys (HSET on cs:*)" in warnings[1]
        assert "ACL DELUSER stray" in warnings[1] and "ACL SETUSER default off" in warnings[0]
        assert sorted(setup.acl_users()) == ["admin", "cashier-replication", "default", "gateway", "reconcile",
                                             "stray"]
        with pytest.raises(redis.exceptions.ConnectionError):     # its connection was closed
            old_till.ping()
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(port=server.port, username="cashier-terminal", password="t-old").ping()
        assert main(["--redis-url", server.url, *APPLY]) == 0
        assert "deleted" not in capsys.readouterr().out


def acl_findings(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("[") and line[7:19].strip() == "acl"]


def test_doctor_names_every_other_writer_and_none_after_apply(capsys):
    with RedisServer("--appendonly", "yes", "--appendfsync", "always") as server:
        setup = server.client()
        Ledger(setup).init()
        # what an earlier version left: its three users (the till's shared) and the default off
        setup.execute_command("ACL", "SETUSER", "cashier-terminal", *OLD_TERMINAL_RULES)
        apply_users(setup, ledger_users(**PASSWORDS)[1:])
        setup.execute_command("ACL", "SETUSER", "default", "off")
        admin_url = url(server, "admin", "a-secret")
        assert main(["--redis-url", admin_url, "doctor"]) == 0            # a warning, not a failure
        acl = acl_findings(capsys.readouterr().out)
        assert acl == ["[warn] acl          user cashier-terminal, the till user of an earlier version, can "
                       "still run HSET, HINCRBY, XADD, FCALL on cs:*: tills hold no Redis login now"], acl
        assert main(["--redis-url", admin_url, *APPLY]) == 0
        capsys.readouterr()
        assert main(["--redis-url", admin_url, "doctor"]) == 0
        out = capsys.readouterr().out
        assert "[  ok] acl          users: admin, default, gateway, reconcile; none but " \
               "gateway, reconcile, admin can write cs:*" in out, out
        assert "warn] acl" not in out and "FAIL" not in out
        # a stranger with the run of cs:*, and the default user given a password (requirepass)
        admin = redis.Redis(port=server.port, username="admin", password="a-secret")
        admin.execute_command("ACL", "SETUSER", "backup-tool", "on", ">b", "~*", "+@all")
        admin.execute_command("ACL", "SETUSER", "default", "on", ">shared", "~*", "+@all")
        admin.execute_command("ACL", "SETUSER", "reader", "on", ">r", "~cs:*", "+hgetall")   # reads only: fine
        assert main(["--redis-url", admin_url, "doctor"]) == 0
        out = capsys.readouterr().out
        acl = acl_findings(out)
        assert len(acl) == 2 and "user backup-tool can run HSET, HINCRBY, SET, DEL, XADD, FCALL, EVAL, " \
            "FLUSHALL on cs:* and is not one of the ledger's users" in acl[0], out
        assert "fix: if nothing needs it: ACL DELUSER backup-tool" in out
        assert acl[1].startswith("[warn] acl          the default user (requirepass) can run HSET"), acl
        assert "fix: every program has its own user (cashierctl acl --apply): ACL SETUSER default off" in out
        assert "reader" not in "".join(acl)


def test_doctor_as_a_restricted_user_says_it_could_not_check_the_acl(secured, capsys):
    main(["--redis-url", url(secured, "gateway", "g-secret"), "doctor"])
    captured = capsys.readouterr()
    assert "[warn] acl          could not check the ACL users: this user may not read them" in captured.out
    assert "fix: run doctor with the admin user's URL" in captured.out
    assert "Traceback" not in captured.err


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
        admin_url = url(server, "admin", "a-secret")
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
