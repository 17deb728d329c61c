"""`reconcile-service self-test`: checks an installation offline, with no Redis and no
database server. Proves that the service runs (from a source checkout, a wheel or the
PyInstaller bundle alike) and finds what it ships: the ledger's Lua scripts (through
`core.resources`), the Alembic migrations (by migrating a throw-away SQLite database in
a temp directory to the head revision) and the PostgreSQL driver psycopg. Prints one
line; exit 0 when all is well, 1 with the first problem (never a traceback: core.selftest,
shared with cashierctl and cashier-gateway).
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from core import selftest

# Scripts the service runs itself (restore, repairs, hold expiry) or that every
# deployment needs.
REQUIRED_SCRIPTS = ("deduct", "credit", "refund", "restore_account", "open_account",
                    "expire_holds")
REQUIRED_TABLES = {"accounts", "ledger_entries", "holds", "chain_heads"}


def check() -> str:
    """The summary line of a healthy installation; raises on the first problem."""
    scripts = selftest.check_scripts(REQUIRED_SCRIPTS)

    from sqlalchemy import inspect

    from .db import head_revision, make_engine, migrate
    head = head_revision()
    with tempfile.TemporaryDirectory(prefix="reconcile-self-test-") as tmp:
        engine = make_engine(f"sqlite:///{Path(tmp) / 'self-test.sqlite3'}")
        try:
            _, after = migrate(engine)
            tables = set(inspect(engine).get_table_names())
        finally:
            engine.dispose()
    if after != head:
        raise RuntimeError(f"migrated to {after}, the head revision is {head}")
    if not REQUIRED_TABLES <= tables:
        raise RuntimeError(f"migrations ran but did not create {sorted(REQUIRED_TABLES - tables)}")

    import psycopg
    return (f"{len(scripts)} Lua scripts, schema {head} migrated on SQLite, "
            f"psycopg {psycopg.pq.__impl__}, {selftest.origin()}")


def run_selftest() -> int:
    return selftest.run("reconcile-service", check)
