"""`reconcile-service self-test` of the PyInstaller bundle: proves offline, without
Redis or a database server, that the headless executable runs from its folder and
finds what it ships: the ledger's Lua scripts (through core.resources), the Alembic
migrations (migrating a throw-away SQLite database to the head revision) and the
PostgreSQL driver. Prints one line; exit 0 when all is well, 1 with the first problem.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

# Scripts the reconcile service runs itself (restore) or that every deployment needs.
REQUIRED_SCRIPTS = ("deduct", "credit", "refund", "restore_account", "open_account")


def check_reconcile() -> str:
    from core.resources import package_root
    from core.scripts import load_scripts
    scripts = load_scripts()
    missing = [name for name in REQUIRED_SCRIPTS if name not in scripts]
    if missing:
        raise RuntimeError(f"Lua scripts missing: {', '.join(missing)}")

    from sqlalchemy import inspect

    from reconcile_service.db import head_revision, make_engine, migrate
    head = head_revision()
    with tempfile.TemporaryDirectory(prefix="reconcile-self-test-") as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'self-test.sqlite3'}")
        try:
            migrate(engine)
            tables = set(inspect(engine).get_table_names())
        finally:
            engine.dispose()
    if not {"accounts", "ledger_entries"} <= tables:
        raise RuntimeError(f"migrations ran but created only {sorted(tables)}")

    import psycopg
    where = "bundle" if getattr(sys, "frozen", False) else "source"
    return (f"{len(scripts)} Lua scripts, schema {head} migrated on SQLite, "
            f"psycopg {psycopg.pq.__impl__}, from the {where} at {package_root()}")


def run_reconcile_selftest() -> int:
    try:
        summary = check_reconcile()
    except Exception as exc:   # one line saying what is wrong, never a traceback
        print(f"reconcile-service self-test: FAILED: {type(exc).__name__}: {exc}")
        return 1
    print(f"reconcile-service self-test: OK ({summary})")
    return 0
