"""cashierctl against the real Redis: every command, exit codes, no tracebacks."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from admin.cashierctl import main


@pytest.fixture
def ctl(redis_url, capsys):
    def run(*argv):
        code = main(["--redis-url", redis_url, *argv])
        out, err = capsys.readouterr()
        return code, out, err
    return run


def test_a_new_redis_must_be_initialised_first(ctl):
    code, _, err = ctl("open", "A-1")
    assert code == 4 and "cashierctl init" in err       # refused: Redis holds no ledger
    assert ctl("init")[0] == 0


def test_open_topup_freeze_balance_journal(ctl):
    ctl("init")
    assert ctl("open", "A-1", "--initial", "50", "--txn-id", "o-1", "--holder", "张三")[0] == 0
    code, out, _ = ctl("open", "A-1", "--initial", "50", "--txn-id", "o-1")
    assert code == 0 and "already done" in out
    assert ctl("open", "A-1", "--initial", "50")[0] == 1          # ACCOUNT_EXISTS
    code, out, _ = ctl("topup", "A-1", "12.5")
    assert code == 0 and "62.50" in out
    assert ctl("freeze", "A-1")[0] == 0
    assert ctl("topup", "A-1", "1")[0] == 1                        # frozen
    assert ctl("unfreeze", "A-1")[0] == 0
    code, out, _ = ctl("--json", "balance", "A-1")
    assert code == 0 and json.loads(out) == {"account_id": "A-1", "balance_minor": 6250, "status": "active",
                                             "holder_name": "张三"}
    code, out, _ = ctl("--json", "journal", "A-1")
    kinds = [e["kind"] for e in json.loads(out)]
    assert kinds == ["unfreeze", "freeze", "credit", "open"]


@pytest.mark.parametrize("argv, field", [
    (["topup", "A-1", "12.505"], "amount"),
    (["topup", "A-1", "-1"], "amount"),
    (["topup", "A-1", "0"], "amount"),
    (["topup", "A-1", "abc"], "amount"),
    (["topup", "A{x}", "1"], "account_id"),
    (["balance", "nobody"], "account_id"),
    (["topup", "A-1", "1", "--txn-id", "x" * 65], "txn_id"),
])
def test_bad_input_names_the_field_and_exits_2(ctl, argv, field):
    ctl("init")
    ctl("open", "A-1", "--initial", "50")
    code, out, err = ctl(*argv)
    assert code == 2 and err.startswith(f"cashierctl: {field}:") and "Traceback" not in err
    assert json.loads(ctl("--json", "balance", "A-1")[1])["balance_minor"] == 5000


def test_conflicting_txn_id_exits_4(ctl):
    ctl("init")
    ctl("open", "A-1", "--initial", "50")
    ctl("topup", "A-1", "1", "--txn-id", "t-1")
    code, _, err = ctl("topup", "A-1", "2", "--txn-id", "t-1")
    assert code == 4 and "t-1" in err


def test_unreachable_redis_is_a_message_not_a_traceback():
    proc = subprocess.run([sys.executable, "-m", "admin.cashierctl", "--redis-url",
                           "redis://127.0.0.1:1/0", "balance", "A-1"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3
    assert "did not answer" in proc.stderr and "Traceback" not in proc.stderr
