"""`cashierctl capacity --ops-per-s N` (issue 33 item 1): the estimate from `core.capacity`'s
byte costs, the ledger's retention and the reconcile service's journal keep; bad input is
exit 2 naming the field; with Redis read (no --accounts) it counts the accounts and says
whether the planned maxmemory fits Redis's (exit 1 when it does not, 3 when Redis is away)."""
from __future__ import annotations

import json

import pytest

from admin.cashierctl import main
from core import Ledger, capacity
from core.ledger import DEFAULT_RETENTION_S
from reconcile_service.config import Settings
from tests.support.servers import RedisServer, free_port


def run_json(capsys, *args: str) -> tuple[int, dict]:
    code = main(["--json", *args])
    return code, json.loads(capsys.readouterr().out)


def test_offline_estimate_uses_the_installations_settings(capsys, monkeypatch):
    monkeypatch.delenv("CASHIER_RECONCILE_CONFIG", raising=False)
    code, out = run_json(capsys, "capacity", "--ops-per-s", "2", "--accounts", "5000")
    assert code == 0
    defaults = Settings()
    assert out["retention_s"] == DEFAULT_RETENTION_S
    assert out["journal_held_s"] == defaults.trim_keep_s + defaults.trim_interval_s
    assert out["records_held"] == 2 * DEFAULT_RETENTION_S
    assert out["record_bytes"] == 2 * DEFAULT_RETENTION_S * (capacity.RECORD_BYTES + capacity.KEYSPACE_BYTES_PER_KEY)
    assert out["total_bytes"] == capacity.estimate(2, accounts=5000, retention_s=DEFAULT_RETENTION_S,
                                                   journal_keep_s=defaults.trim_keep_s,
                                                   trim_interval_s=defaults.trim_interval_s).total_bytes
    assert out["fits"] is None and out["redis_maxmemory_bytes"] is None        # Redis not read
    assert main(["capacity", "--ops-per-s", "100", "--accounts", "250000"]) == 0
    text = capsys.readouterr().out
    assert "60,480,000 held (7 days retention)" in text and "plan maxmemory at least" in text and "GiB" in text


def test_the_reconcile_config_and_flags_change_the_journal_part(capsys, tmp_path):
    conf = tmp_path / "reconcile.toml"
    conf.write_text("trim_keep_s = 300\ntrim_interval_s = 30\n")
    code, out = run_json(capsys, "capacity", "--ops-per-s", "10", "--accounts", "0", "--reconcile-config", str(conf))
    assert code == 0 and out["journal_held_s"] == 330 and out["journal_entries_held"] == 3300
    code, out = run_json(capsys, "capacity", "--ops-per-s", "10", "--accounts", "0", "--retention-s", "86400",
                         "--journal-keep-s", "60", "--lag-s", "600")
    assert code == 0 and out["records_held"] == 864_000 and out["journal_held_s"] == 60 + 60 + 600


@pytest.mark.parametrize("args, field", [
    (["--ops-per-s", "-1"], "ops_per_s"), (["--ops-per-s", "abc"], "ops_per_s"), (["--ops-per-s", "0"], "ops_per_s"),
    (["--ops-per-s", "nan"], "ops_per_s"), (["--ops-per-s", "inf"], "ops_per_s"),
    (["--ops-per-s", "1", "--accounts", "-5"], "accounts"), (["--ops-per-s", "1", "--accounts", "1.5"], "accounts"),
    (["--ops-per-s", "1", "--accounts", "1", "--retention-s", "0"], "retention_s"),
    (["--ops-per-s", "1", "--accounts", "1", "--journal-keep-s", "x"], "journal_keep_s"),
    (["--ops-per-s", "1", "--accounts", "1", "--lag-s", "-1"], "lag_s"),
])
def test_bad_input_is_exit_2_naming_the_field(capsys, args, field):
    with pytest.raises(SystemExit) as exited:
        main(["capacity", *args])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert field in err and "Traceback" not in err


def test_missing_rate_and_a_wrong_config_file_are_bad_input(capsys, tmp_path):
    with pytest.raises(SystemExit) as exited:
        main(["capacity", "--accounts", "1"])
    assert exited.value.code == 2 and "--ops-per-s" in capsys.readouterr().err
    bad = tmp_path / "r.toml"
    bad.write_text("trim_keep_s = -3\n")
    assert main(["capacity", "--ops-per-s", "1", "--accounts", "1", "--reconcile-config", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "reconcile_config" in err and "trim_keep_s" in err
    assert main(["capacity", "--ops-per-s", "1", "--accounts", "1", "--reconcile-config",
                 str(tmp_path / "none.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_read_from_redis_counts_accounts_and_sets_the_estimate_against_maxmemory(capsys):
    with RedisServer("--maxmemory", "64mb", "--maxmemory-policy", "noeviction") as server:
        ledger = Ledger(server.client())
        ledger.init()
        for i in range(3):
            assert ledger.open_account(f"A-{i}", txn_id=f"open-{i}").applied
        code, out = run_json(capsys, "--redis-url", server.url, "capacity", "--ops-per-s", "0.01")
        assert code == 0 and out["accounts"] == 3 and out["fits"] is True
        assert out["redis_maxmemory_bytes"] == 64 * 1024 ** 2 and out["used_memory_bytes"] > 0
        assert main(["--redis-url", server.url, "capacity", "--ops-per-s", "100"]) == 1     # 13 GiB in 64 MiB
        assert "too small for this rate" in capsys.readouterr().out
        server.client().config_set("maxmemory", 0)
        assert main(["--redis-url", server.url, "capacity", "--ops-per-s", "1"]) == 1
        assert "no maxmemory set" in capsys.readouterr().out


def test_redis_away_is_exit_3_and_no_ledger_is_4(capsys):
    url = f"redis://127.0.0.1:{free_port()}/0"
    assert main(["--redis-url", url, "--retry-deadline-s", "0.3", "capacity", "--ops-per-s", "1"]) == 3
    assert "redis_url" in capsys.readouterr().err
    with RedisServer() as server:
        assert main(["--redis-url", server.url, "capacity", "--ops-per-s", "1"]) == 4
        assert "no ledger" in capsys.readouterr().err


def test_the_docs_worked_examples_are_the_commands_figures(capsys):
    """docs/operations.md's two examples are what `cashierctl capacity` prints (within 10 %)."""
    from pathlib import Path
    doc = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text(encoding="utf-8")
    for ops, accounts, figure in (("2", "5000", "**293 MiB**"), ("100", "250000", "**14.2 GiB**")):
        assert figure in doc, figure
        code, out = run_json(capsys, "capacity", "--ops-per-s", ops, "--accounts", accounts)
        value, unit = figure.strip("*").split()
        documented = float(value) * {"MiB": 2 ** 20, "GiB": 2 ** 30}[unit]
        assert code == 0 and abs(out["total_bytes"] - documented) <= 0.10 * documented
