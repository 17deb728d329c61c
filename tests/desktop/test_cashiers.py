"""The cashier registry and `cashierctl cashier ...` against the real Redis."""
from __future__ import annotations

import argparse
import io

import pytest

from admin import cashier_commands
from core import InvalidRequest
from core.cashiers import CashierRegistry, fails_key, hash_key, lock_key
from core.connection import connect


@pytest.fixture
def client(redis_url):
    c = connect(redis_url)
    yield c
    c.close()


def test_pin_is_stored_only_as_a_salted_scrypt_hash(client):
    reg = CashierRegistry(client)
    reg.add("a1", "Ann", "4711")
    reg.add("a2", "Bob", "4711")
    h1, h2 = client.hget(hash_key("a1"), "pin"), client.hget(hash_key("a2"), "pin")
    assert h1.startswith("scrypt$16384$8$1$") and "4711" not in h1
    assert h1 != h2                                     # salted
    assert reg.verify("a1", "4711").ok
    assert reg.verify("a1", "4712").outcome == "wrong_pin"
    assert reg.verify("zz", "4711").outcome == "unknown"


def test_repeated_failures_lock_the_cashier(client):
    reg = CashierRegistry(client, max_failures=3, lock_s=60)
    reg.add("a1", "Ann", "4711")
    assert reg.verify("a1", "0000").attempts_left == 2
    assert reg.verify("a1", "0000").attempts_left == 1
    locked = reg.verify("a1", "0000")
    assert locked.outcome == "locked" and 55 <= locked.locked_s <= 60
    assert reg.verify("a1", "4711").outcome == "locked"      # even the right PIN, while locked
    assert 0 < client.pttl(lock_key("a1")) <= 60_000
    reg.reset_pin("a1", "5555")                              # the back office lifts the lock
    assert reg.verify("a1", "4711").outcome == "wrong_pin"
    assert reg.verify("a1", "5555").ok
    assert client.get(fails_key("a1")) is None               # a success clears the count


def test_failures_are_counted_atomically_across_terminals(client):
    from concurrent.futures import ThreadPoolExecutor
    reg = CashierRegistry(client, max_failures=5)
    reg.add("a1", "Ann", "4711")
    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(lambda _: reg.verify("a1", "0000").outcome, range(8)))
    assert outcomes.count("locked") >= 4 and outcomes.count("wrong_pin") == 4


def test_disabled_cashier_and_bad_input(client):
    reg = CashierRegistry(client)
    reg.add("a1", "Ann", "4711")
    reg.set_disabled("a1", True)
    assert reg.verify("a1", "4711").outcome == "disabled"
    reg.set_disabled("a1", False)
    assert reg.verify("a1", "4711").ok
    for bad in ("77", "abcd", "9876543210987", "١٢٣٤"):
        with pytest.raises(InvalidRequest) as info:
            reg.add("b1", "B", bad)
        assert info.value.field == "pin" and bad not in str(info.value)
    with pytest.raises(InvalidRequest):
        reg.add("a1", "Again", "1234")
    with pytest.raises(InvalidRequest):
        reg.add("bad id", "X", "1234")


def test_supervisor_approval_is_good_for_one_action(client):
    reg = CashierRegistry(client)
    reg.add("s1", "Sue", "9999", supervisor=True)
    reg.add("c1", "Cal", "1111")
    signin, approval = reg.approve("c1", "1111")
    assert approval is None and signin.outcome == "not_supervisor"
    signin, approval = reg.approve("s1", "9998")
    assert approval is None and signin.outcome == "wrong_pin"
    signin, approval = reg.approve("s1", "9999")
    assert approval.use() == "s1"
    with pytest.raises(InvalidRequest):
        approval.use()


def _cli(redis_url, *argv, stdin=""):
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis-url", default=redis_url)
    cashier_commands.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return args


def test_cashierctl_commands(redis_url, client, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("2468\n"))
    args = _cli(redis_url, "cashier", "add", "c9", "--name", "Zhang San", "--can-top-up", "--pin-stdin")
    assert args.func(args) == 0
    assert "c9\tZhang San\tenabled\tcan-top-up" in capsys.readouterr().out
    reg = CashierRegistry(client)
    assert reg.verify("c9", "2468").ok and reg.get("c9").can_top_up and not reg.get("c9").supervisor
    args = _cli(redis_url, "cashier", "disable", "c9")
    assert args.func(args) == 0 and reg.get("c9").disabled
    args = _cli(redis_url, "cashier", "enable", "c9")
    assert args.func(args) == 0 and not reg.get("c9").disabled
    monkeypatch.setattr("sys.stdin", io.StringIO("1357\n"))
    args = _cli(redis_url, "cashier", "reset-pin", "c9", "--pin-stdin")
    assert args.func(args) == 0 and reg.verify("c9", "1357").ok
    capsys.readouterr()
    args = _cli(redis_url, "cashier", "list")
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "c9" in out and "1357" not in out and "scrypt" not in out
    monkeypatch.setattr("sys.stdin", io.StringIO("12\n"))
    args = _cli(redis_url, "cashier", "add", "c8", "--name", "X", "--pin-stdin")
    assert args.func(args) == 2
    assert "pin: must be 4 to 12 digits" in capsys.readouterr().err
    args = _cli(redis_url, "cashier", "disable", "nobody")
    assert args.func(args) == 2
    args = _cli("redis://127.0.0.1:1/0", "cashier", "list")
    assert args.func(args) == 3
