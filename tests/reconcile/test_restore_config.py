"""Restore after Redis lost data (only after the journal is drained, never overwriting),
the SQLite default database, and configuration mistakes answered without tracebacks."""
from __future__ import annotations

import os
import subprocess
import sys

from sqlalchemy import create_engine, select

from core import Ledger, LedgerNotInitialized
from core.keys import META_KEY
from reconcile_service.config import ConfigError, load_settings
from reconcile_service.models import LedgerEntry
import pytest

from tests.reconcile.conftest import ROOT, assert_books_agree, open_accounts, redis_accounts, run_cli, workload


def test_flushed_redis_restore_brings_back_every_balance(redis_url, pg_url, db):
    ledger = Ledger.from_url(redis_url, partitions=3)
    ledger.init(partitions=3)
    accounts = open_accounts(ledger, 60)
    workload(ledger, accounts, 1500, seed=6)
    ledger.freeze(accounts[7], txn_id="freeze-7")
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    before = {a: (i.balance_minor, i.status) for a, i in redis_accounts(ledger).items()}
    assert before[accounts[7]][1] == "frozen"

    ledger.client.flushdb()                               # Redis restarted without persistence
    terminal = Ledger.from_url(redis_url, auto_init=False)
    with pytest.raises(LedgerNotInitialized):
        terminal.balance(accounts[0])

    assert run_cli("restore", redis_url=redis_url, database_url=pg_url) == 0
    assert ledger.client.hget(META_KEY, "partitions") == "3"   # partition count from the database
    after = {a: (i.balance_minor, i.status) for a, i in redis_accounts(Ledger.from_url(redis_url)).items()}
    assert after == before
    # a restore entry per account is journaled; draining it keeps the books exact
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert_books_agree(Ledger.from_url(redis_url), db)
    with db.connect() as conn:
        assert len(conn.execute(select(LedgerEntry.id).where(LedgerEntry.kind == "restore")).all()) == 60
    # restoring again never overwrites (nothing lost now)
    terminal = Ledger.from_url(redis_url, auto_init=False)
    terminal.deduct(accounts[0], 5, txn_id="after-restore")
    assert run_cli("restore", redis_url=redis_url, database_url=pg_url) == 0
    assert terminal.balance(accounts[0]) == before[accounts[0]][0] - 5


def test_restore_drains_the_journal_first(redis_url, pg_url, db, ledger):
    """An account lost from Redis whose last entries are still only in the journal must
    come back with those entries counted: restore drains before it restores."""
    accounts = open_accounts(ledger, 4)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    ledger.deduct(accounts[1], 1234, txn_id="late")      # journaled, not yet in the database
    expected = ledger.balance(accounts[1])
    part = ledger.schema.partition_of(accounts[1])
    ledger.client.delete(part.account(accounts[1]))       # that account is lost
    ledger.client.srem(part.accounts, accounts[1])
    untouched = ledger.balance(accounts[2])
    ledger.client.hset(part.account(accounts[2]), "bal", untouched + 1)   # exists: must not be overwritten
    assert run_cli("restore", redis_url=redis_url, database_url=pg_url) == 0
    assert ledger.balance(accounts[1]) == expected == 100_000 - 1234
    assert ledger.balance(accounts[2]) == untouched + 1


def test_holder_names_reach_the_database_and_come_back_with_restore(redis_url, pg_url, db, ledger):
    from sqlalchemy import text
    ledger.open_account("N-1", txn_id="open-N-1", initial_minor=500, holder_name="张三")
    ledger.open_account("N-2", txn_id="open-N-2", initial_minor=500)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    with db.connect() as conn:
        names = dict(conn.execute(text("select account_id, holder_name from accounts")).all())
    assert names == {"N-1": "张三", "N-2": None}
    ledger.client.flushdb()
    assert run_cli("restore", redis_url=redis_url, database_url=pg_url) == 0
    restored = Ledger.from_url(redis_url)
    assert restored.account("N-1").holder_name == "张三" and restored.account("N-2").holder_name == ""
    assert restored.balance("N-1") == 500


def test_restore_on_an_empty_redis_with_an_empty_database_is_refused(redis_url, pg_url, capsys):
    assert run_cli("restore", redis_url=redis_url, database_url=pg_url) == 4
    err = capsys.readouterr().err
    assert "nothing to restore" in err and "Traceback" not in err


def test_daemon_start_restores_a_flushed_redis(redis_url, pg_url, db, ledger):
    accounts = open_accounts(ledger, 5, initial_minor=777)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    ledger.client.flushdb()
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert {i.balance_minor for i in redis_accounts(Ledger.from_url(redis_url)).values()} == {777}
    assert_books_agree(Ledger.from_url(redis_url), db)


def test_sqlite_default_database_basic_flow(redis_url, tmp_path):
    ledger = Ledger.from_url(redis_url)
    accounts = open_accounts(ledger, 8)
    applied = len(accounts) + workload(ledger, accounts, 400, seed=7)
    env = dict(os.environ, CASHIER_REDIS_URL=redis_url, XDG_DATA_HOME=str(tmp_path / "data"),
               HOME=str(tmp_path))
    env.pop("CASHIER_DATABASE_URL", None)
    proc = subprocess.run([sys.executable, "-m", "reconcile_service", "run", "--once", "--metrics-port", "0"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    files = list((tmp_path / "data").rglob("reconcile.sqlite3"))
    assert len(files) == 1                               # the platform's data directory
    engine = create_engine(f"sqlite:///{files[0]}")
    assert_books_agree(ledger, engine, expected_entries=applied)
    proc = subprocess.run([sys.executable, "-m", "reconcile_service", "status", "--json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and '"open_discrepancies": 0' in proc.stdout
    engine.dispose()


def test_config_precedence_flags_over_env_over_toml(tmp_path):
    toml = tmp_path / "rs.toml"
    toml.write_text('redis_url = "redis://toml:1/0"\ndatabase_url = "sqlite:///toml.db"\n'
                    'batch_size = 77\n[reconcile_service]\nmetrics_port = 0\n')
    s = load_settings({}, config_path=str(toml), environ={})
    assert (s.redis_url, s.database_url, s.batch_size, s.metrics_port) == \
        ("redis://toml:1/0", "sqlite:///toml.db", 77, 0)
    env = {"CASHIER_REDIS_URL": "redis://env:2/0", "CASHIER_DATABASE_URL": "sqlite:///env.db"}
    s = load_settings({}, config_path=str(toml), environ=env)
    assert (s.redis_url, s.database_url) == ("redis://env:2/0", "sqlite:///env.db")
    s = load_settings({"redis_url": "redis://flag:3/0", "batch_size": 5}, config_path=str(toml), environ=env)
    assert (s.redis_url, s.database_url, s.batch_size) == ("redis://flag:3/0", "sqlite:///env.db", 5)
    assert load_settings({}, environ={}).resolved_database_url().endswith("reconcile.sqlite3")


@pytest.mark.parametrize("content, words", [
    ("batch_size = 'many'", ["batch_size", "number"]),
    ("batch_size = 0", ["batch_size", "at least 1"]),
    ("bacth_size = 10", ["unknown setting", "bacth_size"]),
    ("redis_url = 'http://x'", ["redis_url", "scheme"]),
    ("database_url = 'postgresql://u@h/db'", ["database_url", "psycopg"]),
    ("this is not toml", ["not valid TOML"]),
])
def test_config_mistakes_exit_2_with_a_clear_message(tmp_path, content, words):
    toml = tmp_path / "bad.toml"
    toml.write_text(content)
    env = dict(os.environ)
    env.pop("CASHIER_REDIS_URL", None)
    env.pop("CASHIER_DATABASE_URL", None)
    proc = subprocess.run([sys.executable, "-m", "reconcile_service", "status", "--config", str(toml)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    for w in words:
        assert w in proc.stderr
    with pytest.raises(ConfigError):
        load_settings({}, config_path=str(toml), environ={})


def test_unreachable_servers_exit_3_with_the_server_named(tmp_path, pg_url):
    from tests.support.servers import free_port
    port = free_port()
    proc = subprocess.run([sys.executable, "-m", "reconcile_service", "reconcile", "--retry-deadline-s", "1",
                           "--redis-url", f"redis://:secret@127.0.0.1:{port}/0", "--database-url", pg_url],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3, proc.stderr
    assert "redis" in proc.stderr and "Traceback" not in proc.stderr and "secret" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "reconcile_service", "migrate", "--retry-deadline-s", "1",
                           "--database-url", f"postgresql+psycopg://postgres@127.0.0.1:{port}/x"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3 and "database" in proc.stderr and "Traceback" not in proc.stderr


def test_migrate_is_idempotent_and_status_requires_it(redis_url, pg_url, capsys):
    assert run_cli("status", redis_url=redis_url, database_url=pg_url) == 4
    assert "reconcile-service migrate" in capsys.readouterr().err
    assert run_cli("migrate", redis_url=redis_url, database_url=pg_url) == 0
    assert run_cli("migrate", redis_url=redis_url, database_url=pg_url) == 0
    assert "already at" in capsys.readouterr().out
    # contract columns other tools read
    engine = create_engine(pg_url)
    from sqlalchemy import inspect
    cols = {c["name"] for c in inspect(engine).get_columns("ledger_entries")}
    assert {"txn_id", "account_id", "kind", "amount_minor", "balance_after_minor", "terminal_id", "cashier_id",
            "original_txn_id", "occurred_at", "journal_partition", "journal_id"} <= cols
    assert {"account_id", "balance_minor", "status", "created_at", "updated_at"} <= \
        {c["name"] for c in inspect(engine).get_columns("accounts")}
    engine.dispose()


def test_self_test_and_version_need_no_server(capsys):
    """Offline check of the installation: Lua scripts, migrations on a scratch SQLite
    database in a temp dir, psycopg; a broken migrations folder fails with one line."""
    assert run_cli("self-test", redis_url="redis://127.0.0.1:1/0", database_url=None) == 0
    out = capsys.readouterr().out
    assert out.startswith("reconcile-service self-test: OK") and "migrated on SQLite" in out
    assert len(out.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as exit_:
        run_cli("--version", redis_url="redis://127.0.0.1:1/0", database_url=None)
    assert exit_.value.code == 0 and capsys.readouterr().out.startswith("reconcile-service ")


def test_self_test_reports_a_missing_migration_folder(monkeypatch, tmp_path, capsys):
    from reconcile_service import db as db_module
    monkeypatch.setattr(db_module, "MIGRATIONS_DIR", tmp_path / "nowhere")
    assert run_cli("self-test", redis_url="redis://127.0.0.1:1/0", database_url=None) == 1
    out = capsys.readouterr().out
    assert out.startswith("reconcile-service self-test: FAILED") and "Traceback" not in out
