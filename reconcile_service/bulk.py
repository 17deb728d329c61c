"""Many rows into PostgreSQL in one go: COPY, straight into a table or into a staging table
that one set-based statement then reads.

The drain writes thousands of rows per batch. Sent as parameters they cost more than
the database's work: psycopg dumps array parameters in Python (profiling the drain with
``unnest()`` arrays: 60% of its time in ``ListDumper``), while `COPY ... FROM STDIN`
formats each row in psycopg's C code and streams it, so PostgreSQL parses rows while
Python still builds the next ones. `copy_rows` is that COPY; `staged_insert` COPYs the
rows into a per-session temporary table (created on first use, emptied by PostgreSQL
at every COMMIT) and answers an ``INSERT ... SELECT`` from it, to which the caller adds
its ``ON CONFLICT`` clause, so every upsert stays one statement whatever the row count.
Everything runs on the caller's connection, inside its transaction. PostgreSQL only;
SQLite takes an executemany (see `dialect.BulkInsert`).
"""
from __future__ import annotations

import hashlib
import weakref
from operator import itemgetter
from typing import Iterable, Sequence

from sqlalchemy import BigInteger, Boolean, Column, Date, DateTime, Integer, MetaData, String, Table, Text, select, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

_STAGE_METADATA = MetaData()
_stages: dict[tuple[str, tuple[str, ...]], Table] = {}
# staging tables already filled in a transaction: a second use in the same one empties it first
_filled: "weakref.WeakKeyDictionary[object, set[str]]" = weakref.WeakKeyDictionary()


def copy_type(sa_type) -> str:
    """The PostgreSQL type a binary COPY sends for a column of this SQLAlchemy type."""
    if isinstance(sa_type, BigInteger):
        return "int8"
    if isinstance(sa_type, Integer):
        return "int4"
    if isinstance(sa_type, Boolean):
        return "bool"
    if isinstance(sa_type, DateTime):
        return "timestamptz" if sa_type.timezone else "timestamp"
    if isinstance(sa_type, Date):
        return "date"
    if isinstance(sa_type, (String, Text)):
        return "text"          # also right for varchar: the same bytes on the wire
    raise TypeError(f"no binary COPY type for {sa_type!r}")


def row_getter(names: Sequence[str]):
    """A function from a row dict to the tuple of its `names`, in that order."""
    get = itemgetter(*names)
    return get if len(names) > 1 else (lambda row: (get(row),))


def copy_rows(conn: Connection, table: Table, names: Sequence[str], rows: Iterable) -> None:
    """COPY `rows` (dicts with `names`, or sequences in that order) into `table`, in
    binary (psycopg formats ints and timestamps in C, PostgreSQL skips parsing them: 5x
    less client CPU than text COPY). An error (a unique violation, say) is raised by
    psycopg when the COPY ends and leaves the transaction aborted: the caller rolls it back."""
    cursor = conn.connection.dbapi_connection.cursor()
    get = row_getter(names)
    try:
        with cursor.copy(f"COPY {table.name} ({', '.join(names)}) FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types([copy_type(table.c[n].type) for n in names])
            write = copy.write_row
            for row in rows:
                write(get(row) if isinstance(row, dict) else row)
    finally:
        cursor.close()


def _stage(conn: Connection, target: Table, names: tuple[str, ...]) -> Table:
    stage = _stages.get((target.name, names))
    if stage is None:
        digest = hashlib.sha1(",".join(names).encode()).hexdigest()[:8]
        stage = Table(f"stage_{target.name}_{digest}", _STAGE_METADATA,
                      *[Column(n, target.c[n].type) for n in names])
        _stages[(target.name, names)] = stage
    # IF NOT EXISTS every time (a catalog look-up, far below the COPY's cost): a temporary
    # table lives as long as the session, and a rolled-back first use takes it away again
    conn.execute(text(f"CREATE TEMPORARY TABLE IF NOT EXISTS {stage.name} ON COMMIT DELETE ROWS AS "
                      f"SELECT {', '.join(names)} FROM {target.name} WITH NO DATA"))
    filled = _filled.setdefault(conn.get_transaction(), set())
    if stage.name in filled:
        conn.execute(text(f"DELETE FROM {stage.name}"))
    filled.add(stage.name)
    return stage


def staged_insert(conn: Connection, model, rows: list[dict]):
    """COPY `rows` into the staging table of `model` and answer
    ``INSERT INTO model (columns) SELECT columns FROM staging``, a PostgreSQL insert that
    takes on_conflict_* and returning()."""
    target = model.__table__
    names = tuple(rows[0])
    stage = _stage(conn, target, names)
    copy_rows(conn, stage, names, rows)
    return postgresql.insert(model).from_select(list(names), select(*stage.c))
