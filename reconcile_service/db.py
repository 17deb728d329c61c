"""Opening the database of record and migrating its schema.

PostgreSQL through psycopg 3 is the production database; SQLite is the embedded
default. Migrations run in code (an Alembic `Config` built here, pointing at the
package's own `migrations/` folder, found through `core.resources.resource_path`) so they work from a wheel or a PyInstaller bundle
without an alembic.ini on disk.
"""
from __future__ import annotations

import logging
from pathlib import Path

import re

from sqlalchemy import create_engine, event, inspect, text
from sqlalchemy.exc import IntegrityError, ProgrammingError
from sqlalchemy.exc import OperationalError as SAOperationalError
from sqlalchemy.engine import Engine, make_url

from core.resources import resource_path

from .config import ConfigError

log = logging.getLogger(__name__)

# Shipped files are found through core.resources, the one helper that knows where they
# live in a checkout, a wheel and a PyInstaller bundle.
MIGRATIONS_DIR = resource_path("reconcile_service", "migrations")
SQLITE_BUSY_TIMEOUT_MS = 30_000
MIGRATION_LOCK_KEY = 0x636173686D6967  # any constant shared by every instance


class SchemaNotCurrent(Exception):
    """The database has not been migrated to this version of the service."""


def make_engine(url: str, *, create: bool = True) -> Engine:
    """An engine for `url`; for SQLite the directory is created and WAL switched on.

    create=False is for readers (`status`): an SQLite file that does not exist is a
    ConfigError naming it, and neither the file nor its directory is created."""
    try:
        parsed = make_url(url)
    except Exception as exc:  # sqlalchemy raises ArgumentError with a terse message
        raise ConfigError(f"database_url: cannot be parsed ({exc})") from None
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:" and not create:
            path = Path(parsed.database).expanduser()
            if not path.is_file():
                raise ConfigError(f"database_url: {path} does not exist (no reconcile service has written "
                                  "there yet: check --database-url, or create it with "
                                  "`reconcile-service migrate`)")
        elif parsed.database and parsed.database != ":memory:":
            try:
                Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(f"database_url: cannot create the directory of {parsed.database} ({exc})") from None
        engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):
            # WAL lets status/reconcile read while the daemon writes; synchronous=FULL
            # because an acknowledged entry must survive a power cut.
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            cur.close()
        return engine
    if parsed.get_backend_name() != "postgresql":
        raise ConfigError(f"database_url: backend {parsed.get_backend_name()!r} is not supported "
                          "(use postgresql+psycopg or sqlite)")
    # pool_pre_ping: after a database restart, stale pooled connections are replaced
    # instead of failing the first batch.
    return create_engine(url, pool_pre_ping=True, pool_size=2, max_overflow=2,
                         connect_args={"connect_timeout": 5})


def _alembic_config(connection):
    from alembic.config import Config
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["connection"] = connection
    return cfg


def alembic_head_revision() -> str:
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    return ScriptDirectory.from_config(cfg).get_current_head()


_REVISION_RE = re.compile(r"^(down_revision|revision) = ['\"]?(\w+)['\"]?\s*$", re.MULTILINE)


def head_revision() -> str:
    """The newest migration's revision, read from the migration files' `revision` and
    `down_revision` lines: the one no other names as its parent. Reading alembic's
    script directory for this costs a report ~0.2 s of imports (a test checks both
    agree); anything unusual (branches, merges) is left to alembic."""
    revisions, parents = set(), set()
    for path in (Path(MIGRATIONS_DIR) / "versions").glob("*.py"):
        for name, value in _REVISION_RE.findall(path.read_text(encoding="utf-8")):
            (revisions if name == "revision" else parents).add(value)
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else alembic_head_revision()


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def stored_revision(engine: Engine) -> str | None:
    """The revision recorded in the database (alembic_version), None when it has none;
    read with plain SQL, for the commands that only check the schema."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        versions = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    return versions[0] if len(versions) == 1 else (None if not versions else ",".join(sorted(versions)))


def migrate(engine: Engine) -> tuple[str | None, str]:
    """Upgrade to the newest schema; answers (revision before, revision after)."""
    before = current_revision(engine)
    for attempt in range(3):
        try:
            with engine.begin() as conn:
                if conn.dialect.name == "postgresql":
                    # Several instances may start at once: one migrates, the others wait
                    # here and then find nothing left to do.
                    conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
                from alembic import command
                command.upgrade(_alembic_config(conn), "head")
            break
        except (IntegrityError, ProgrammingError, SAOperationalError) as exc:
            # SQLite has no advisory lock: a concurrent first migration makes one of
            # them fail on "already exists"; running it again finds the tables there.
            if attempt == 2 or "already exists" not in str(exc):
                raise
    after = current_revision(engine)
    if before != after:
        log.info("database migrated", extra={"from_revision": before, "to_revision": after})
    return before, after


def require_current_schema(engine: Engine) -> None:
    """Refuse to work on a database whose schema is not this version's."""
    current, head = stored_revision(engine), head_revision()
    if current != head:
        if current is None and not inspect(engine).get_table_names():
            raise SchemaNotCurrent("the database has no tables yet: run `reconcile-service migrate`")
        raise SchemaNotCurrent(f"the database schema is at revision {current}, this version needs "
                               f"{head}: run `reconcile-service migrate`")
