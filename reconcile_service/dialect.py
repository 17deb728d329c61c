"""What the book's writers need to say the same thing on PostgreSQL and SQLite: the
dialect's INSERT (with on_conflict_*), many rows in one statement (`bulk_insert`),
GREATEST / LEAST, and the book's instants (UTC datetimes, from journal milliseconds).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import func
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from . import bulk


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def ms_to_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def insert_for(conn: Connection, table):
    """The dialect's INSERT (with on_conflict_do_nothing / on_conflict_do_update)."""
    return (postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert)(table)


@dataclass
class BulkInsert:
    """Many rows inserted by ONE statement whose text does not depend on the row count.

    On PostgreSQL the rows are COPYed into a staging table first and the statement is an
    ``INSERT ... SELECT`` from it (`bulk.staged_insert`): psycopg formats COPY rows in C,
    where array parameters through ``unnest()`` were dumped in Python (60% of the drain's
    time). On SQLite the rows go as an executemany. `insert` takes on_conflict_* and
    returning() like any dialect insert.
    """
    insert: object
    rows: list[dict]
    postgres: bool

    def execute(self, conn: Connection, stmt):
        return conn.execute(stmt) if self.postgres else conn.execute(stmt, self.rows)


def bulk_insert(conn: Connection, model, rows: list[dict]) -> BulkInsert:
    if conn.dialect.name != "postgresql":
        return BulkInsert(sqlite.insert(model), rows, False)
    return BulkInsert(bulk.staged_insert(conn, model, rows), rows, True)


def greatest(conn: Connection, a, b):
    return (func.greatest if conn.dialect.name == "postgresql" else func.max)(a, b)


def least(conn: Connection, a, b):
    return (func.least if conn.dialect.name == "postgresql" else func.min)(a, b)
