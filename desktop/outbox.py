"""The terminal's local outbox: every money operation is written here, with its txn
id, before it is sent to the central ledger, and stays 'pending' until the ledger
has answered.

SQLite in WAL mode with synchronous=FULL, so a row that was committed survives a
crash or power cut. A pending row is retried with the same txn id and the same
request until Redis answers (the ledger's scripts are idempotent, so a retry of a
charge that did run answers the first decision with replayed=True and takes no
money twice). The table is also the terminal's history: shifts and the operations
made in them. One connection, shared by the UI thread and the single operations
worker under a lock; every call is short.
"""
from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PENDING, RESOLVED = "pending", "resolved"
# statuses of resolved rows besides core.Status values: nothing changed in the ledger
INVALID, CONFLICT = "INVALID", "CONFLICT"
NOT_SENT = "NOT_SENT"   # never saved, so never sent (e.g. the local disk failed); not stored
KINDS = ("deduct", "refund", "credit")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS shifts (
    shift_id     INTEGER PRIMARY KEY AUTOINCREMENT,
    terminal_id  TEXT    NOT NULL,
    opened_ms    INTEGER NOT NULL,
    opened_by    TEXT    NOT NULL,
    closed_ms    INTEGER,
    closed_by    TEXT
);
CREATE TABLE IF NOT EXISTS ops (
    txn_id               TEXT    PRIMARY KEY,
    kind                 TEXT    NOT NULL CHECK (kind IN ('deduct', 'refund', 'credit')),
    account_id           TEXT    NOT NULL,
    amount_minor         INTEGER NOT NULL CHECK (amount_minor > 0),
    original_txn_id      TEXT    NOT NULL DEFAULT '',
    terminal_id          TEXT    NOT NULL,
    cashier_id           TEXT    NOT NULL,
    approved_by          TEXT    NOT NULL DEFAULT '',
    shift_id             INTEGER,
    created_ms           INTEGER NOT NULL,
    state                TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'resolved')),
    status               TEXT    NOT NULL DEFAULT '',
    balance_after_minor  INTEGER,
    replayed             INTEGER NOT NULL DEFAULT 0,
    attempts             INTEGER NOT NULL DEFAULT 0,
    last_error           TEXT    NOT NULL DEFAULT '',
    resolved_ms          INTEGER,
    recovered            INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS ops_state ON ops (state, created_ms);
CREATE INDEX IF NOT EXISTS ops_shift ON ops (shift_id, created_ms);
CREATE INDEX IF NOT EXISTS ops_original ON ops (original_txn_id);
"""


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True, slots=True)
class Op:
    """One money operation of this terminal, as the outbox holds it."""
    txn_id: str
    kind: str
    account_id: str
    amount_minor: int
    terminal_id: str
    cashier_id: str
    shift_id: int | None
    created_ms: int
    original_txn_id: str = ""
    approved_by: str = ""
    state: str = PENDING
    status: str = ""
    balance_after_minor: int | None = None
    replayed: bool = False
    attempts: int = 0
    last_error: str = ""
    resolved_ms: int | None = None
    recovered: bool = False

    @property
    def pending(self) -> bool:
        return self.state == PENDING

    @property
    def applied(self) -> bool:
        return self.state == RESOLVED and self.status == "APPLIED"


@dataclass(frozen=True, slots=True)
class Shift:
    shift_id: int
    terminal_id: str
    opened_ms: int
    opened_by: str
    closed_ms: int | None
    closed_by: str | None


_OP_COLUMNS = ("txn_id, kind, account_id, amount_minor, terminal_id, cashier_id, shift_id, created_ms, "
               "original_txn_id, approved_by, state, status, balance_after_minor, replayed, attempts, "
               "last_error, resolved_ms, recovered")


def _op(row) -> Op:
    values = list(row)
    values[13] = bool(values[13])
    values[17] = bool(values[17])
    return Op(*values)


class Outbox:
    """The SQLite outbox at `path` (created with its folder if missing)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None,
                                   timeout=10.0)
        mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise RuntimeError(f"the outbox at {self.path} cannot use WAL (got {mode})")
        self._db.execute("PRAGMA synchronous=FULL")   # a committed txn id survives a power cut
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _exec(self, sql: str, params=()) -> sqlite3.Cursor:
        with self._lock:
            return self._db.execute(sql, params)

    def _all(self, sql: str, params=()) -> list:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    # ---------------------------------------------------------------- operations

    def add(self, op: Op) -> None:
        """Save a new operation (state pending). Committed before this returns."""
        if op.kind not in KINDS:
            raise ValueError(f"kind {op.kind!r}")
        self._exec(
            "INSERT INTO ops (txn_id, kind, account_id, amount_minor, terminal_id, cashier_id, shift_id, "
            "created_ms, original_txn_id, approved_by) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (op.txn_id, op.kind, op.account_id, op.amount_minor, op.terminal_id, op.cashier_id,
             op.shift_id, op.created_ms, op.original_txn_id, op.approved_by))

    def note_attempt(self, txn_id: str, error: str = "") -> None:
        self._exec("UPDATE ops SET attempts = attempts + 1, last_error = ? WHERE txn_id = ?",
                   (error[:500], txn_id))

    def resolve(self, txn_id: str, status: str, balance_after_minor: int | None, *,
                replayed: bool = False, recovered: bool = False, error: str = "") -> Op:
        """Record the ledger's answer. A row is resolved once; a later call changes nothing."""
        self._exec(
            "UPDATE ops SET state = 'resolved', status = ?, balance_after_minor = ?, replayed = ?, "
            "recovered = ?, resolved_ms = ?, last_error = ?, attempts = attempts + 1 "
            "WHERE txn_id = ? AND state = 'pending'",
            (status, balance_after_minor, int(replayed), int(recovered), now_ms(), error[:500], txn_id))
        return self.get(txn_id)

    def get(self, txn_id: str) -> Op | None:
        rows = self._all(f"SELECT {_OP_COLUMNS} FROM ops WHERE txn_id = ?", (txn_id,))
        return _op(rows[0]) if rows else None

    def pending(self) -> list[Op]:
        return [_op(r) for r in self._all(
            f"SELECT {_OP_COLUMNS} FROM ops WHERE state = 'pending' ORDER BY created_ms, rowid")]

    def pending_count(self) -> int:
        return self._all("SELECT count(*) FROM ops WHERE state = 'pending'")[0][0]

    def ops_of_shift(self, shift_id: int) -> list[Op]:
        return [_op(r) for r in self._all(
            f"SELECT {_OP_COLUMNS} FROM ops WHERE shift_id = ? ORDER BY created_ms, rowid", (shift_id,))]

    def refunded_minor(self, original_txn_id: str) -> int:
        """Refunds of `original_txn_id` made here that applied or may still apply."""
        return self._all(
            "SELECT coalesce(sum(amount_minor), 0) FROM ops WHERE kind = 'refund' AND original_txn_id = ? "
            "AND (state = 'pending' OR status = 'APPLIED')", (original_txn_id,))[0][0]

    # ---------------------------------------------------------------- shifts

    def open_shift(self, terminal_id: str, cashier_id: str) -> Shift:
        """The open shift of this terminal, opened now by `cashier_id` if there is none."""
        current = self.current_shift()
        if current:
            return current
        self._exec("INSERT INTO shifts (terminal_id, opened_ms, opened_by) VALUES (?,?,?)",
                   (terminal_id, now_ms(), cashier_id))
        return self.current_shift()

    def current_shift(self) -> Shift | None:
        rows = self._all("SELECT shift_id, terminal_id, opened_ms, opened_by, closed_ms, closed_by "
                         "FROM shifts WHERE closed_ms IS NULL ORDER BY shift_id DESC LIMIT 1")
        return Shift(*rows[0]) if rows else None

    def shift(self, shift_id: int) -> Shift | None:
        rows = self._all("SELECT shift_id, terminal_id, opened_ms, opened_by, closed_ms, closed_by "
                         "FROM shifts WHERE shift_id = ?", (shift_id,))
        return Shift(*rows[0]) if rows else None

    def close_shift(self, shift_id: int, cashier_id: str) -> Shift:
        self._exec("UPDATE shifts SET closed_ms = ?, closed_by = ? WHERE shift_id = ? AND closed_ms IS NULL",
                   (now_ms(), cashier_id, shift_id))
        return self.shift(shift_id)
