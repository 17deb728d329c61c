"""`reconcile-service self-test`: checks an installation offline, with no Redis and no
database server. Proves that the service runs (from a source checkout, a wheel or the
PyInstaller bundle alike) and finds what it ships: the ledger's Lua scripts (through
`core.resources`), the Alembic migrations (by migrating a throw-away SQLite database in
a temp directory to the head revision) and the PostgreSQL driver psycopg. Prints one
line; exit 0 when all is well, 1 with the first problem (never a traceback).
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

EXIT_OK, EXIT_FAILED = 0, 1
# Scripts the service runs itself (restore, repairs, hold expiry) or that every
# deployment needs.
REQUIRED_SCRIPTS = ("deduct", "credit", "refund", "restore_account", "open_account",
                    "expire_holds")
REQUIRED_TABLES = {"accounts", "ledger_entries", "holds", "chain_heads"}


def check() -> str:
    """The summary line of a healthy installation; raises on the first problem."""
    from core.resources import package_root
    from core.scripts import load_scripts
    scripts = load_scripts()
    missing = [name for name in REQUIRED_SCRIPTS if name not in scripts]
    if missing:
        raise RuntimeError(f"Lua scripts missing: {', '.join(missing)}")

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
    where = "bundle" if getattr(sys, "frozen", False) else "source"
    return (f"{len(scripts)} Lua scripts, schema {head} migrated on SQLite, "
            f"psycopg {psycopg.pq.__impl__}, from the {where} at {package_root()}")


def run_selftest() -> int:
    try:
        summary = check()
    except Exception as exc:   # one line saying what is wrong, never a traceback
        print(f"reconcile-service self-test: FAILED: {type(exc).__name__}: {exc}")
        return EXIT_FAILED
    print(f"reconcile-service self-test: OK ({summary})")
    return EXIT_OK
