"""The terminal's local outbox: every money operation is written here, with its txn
id, before it is sent to the central ledger, and stays 'pending' until the ledger
has answered.

SQLite in WAL mode with synchronous=FULL, so a row that was committed survives a
crash or power cut. A pending row is retried with the same txn id and the same
request until Redis answers (the ledger's scripts are idempotent, so a retry of a
charge that did run answers the first decision with replayed=True and takes no
money twice). The table is also the terminal's history: shifts and the operations
made in them. Holds (pre-authorised sales) are rows of kind 'hold' with their time
to live; the capture or void that resolves a hold names it in `original_txn_id`,
and `hold_state` derives what a hold is now (open, completed, released, expired)
from those rows. Member operations (open an account with its first card, replace a
card, close an account) and the shift's Z record (`shift_close`) go through the same
table, so each is idempotent by its txn id and a close made while Redis is away is
sent later; a row keeps its whole request (method and bonus of a top-up, card numbers,
the Z record's totals in `detail`), so every re-send is the same request, and the
bucket split the ledger answered (`principal_delta_minor`, `bonus_delta_minor`) for
the shift report. A pending row too old to re-send (older than the ledger's retention
minus an hour: desktop/engine.py) that a supervisor gives up is resolved as ABANDONED
(`abandon`: who decided is kept in `last_error`); it is never sent again and the shift
report counts it. The cash drawer's own movements (the shift's opening float, cash in /
cash out with their reason and approver, the drawer counted at close) are rows of the
`drawer` table: they move no member's money, so they never go to the ledger; the shift
report and its Z record add them up. Schema changes are migrated in place (PRAGMA user_version). One
connection, shared by the UI thread and the single operations worker under a lock;
every call is short.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from core import kinds

PENDING, RESOLVED = "pending", "resolved"
# statuses of resolved rows besides core.Status values: nothing changed in the ledger
INVALID, CONFLICT = "INVALID", "CONFLICT"
NOT_SENT = "NOT_SENT"   # never saved, so never sent (e.g. the local disk failed); not stored
ABANDONED = "ABANDONED"  # too old to re-send; a supervisor gave it up (not charged / handled by hand)
ABANDONED_NOTE = "abandoned by supervisor {supervisor}: too old to re-send (older than the retention minus 1 h)"
# The row kinds, from core.kinds (still importable from here). open: a member account
# (and its first card); card_replace: block a card and/or issue one; close: 退卡
# (amount_minor = the cash paid out, once answered); shift_close: the Z record.
MONEY_KINDS = kinds.MONEY_KINDS
MEMBER_KINDS = kinds.MEMBER_KINDS
KINDS = kinds.TILL_KINDS
HOLD_RESOLUTIONS = kinds.TILL_HOLD_RESOLUTIONS        # capture, void
# version 5: the split-tender kinds (sale, tender_refund: issue 31; their tenders ride in
# `detail`) and offline sales (the 'offline' kind and debt_minor: issue 27)
SCHEMA_VERSION = 5
# the drawer table's kinds: the opening float, cash put in / taken out (with a reason), the count
DRAWER_KINDS = ("float", "cash_in", "cash_out", "count")
# A hold is shown as open until created_ms + ttl + this grace: the terminal's clock and
# the moment Redis applied the hold differ a little, and the ledger decides anyway
# (a late completion is declined with HOLD_EXPIRED, in words).
HOLD_GRACE_MS = 60_000
# states of a hold, derived from the outbox (see hold_state)
HOLD_OPEN, HOLD_CHECKING, HOLD_CAPTURED, HOLD_RELEASED, HOLD_EXPIRED_STATE, HOLD_GONE = (
    "open", "checking", "captured", "released", "expired", "gone")

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
    kind                 TEXT    NOT NULL CHECK (kind IN (%(kinds)s)),
    account_id           TEXT    NOT NULL,
    amount_minor         INTEGER NOT NULL CHECK (amount_minor > 0 OR kind IN ('open', 'card_replace', 'close',
                                                                               'shift_close')),
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
    recovered            INTEGER NOT NULL DEFAULT 0,
    ttl_s                INTEGER NOT NULL DEFAULT 0,
    method               TEXT    NOT NULL DEFAULT '',
    bonus_minor          INTEGER NOT NULL DEFAULT 0,
    card_no              TEXT    NOT NULL DEFAULT '',
    detail               TEXT    NOT NULL DEFAULT '',
    principal_delta_minor INTEGER,
    bonus_delta_minor    INTEGER,
    debt_minor           INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS ops_state ON ops (state, created_ms);
CREATE INDEX IF NOT EXISTS ops_shift ON ops (shift_id, created_ms);
CREATE INDEX IF NOT EXISTS ops_original ON ops (original_txn_id);
CREATE INDEX IF NOT EXISTS ops_kind ON ops (kind, account_id, created_ms);
CREATE TABLE IF NOT EXISTS drawer (
    entry_id     INTEGER PRIMARY KEY AUTOINCREMENT,
    shift_id     INTEGER NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('float', 'cash_in', 'cash_out', 'count')),
    amount_minor INTEGER NOT NULL CHECK (amount_minor >= 0 AND (amount_minor > 0 OR kind IN ('float', 'count'))),
    reason       TEXT    NOT NULL DEFAULT '',
    note         TEXT    NOT NULL DEFAULT '',
    cashier_id   TEXT    NOT NULL,
    approved_by  TEXT    NOT NULL DEFAULT '',
    created_ms   INTEGER NOT NULL,
    detail       TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS drawer_shift ON drawer (shift_id, created_ms);
""" % {"kinds": ", ".join(f"'{k}'" for k in KINDS)}      # every till kind of core.kinds


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
    ttl_s: int = 0                       # holds: how long the amount is reserved
    method: str = ""                     # top-ups: cash, wechat, alipay, bank_card, other
    bonus_minor: int = 0                 # top-ups: the promotion's bonus booked with it
    card_no: str = ""                    # open / card_replace: the card issued
    detail: str = ""                     # JSON: the rest of the request (holder, phone, old card, Z totals)
    principal_delta_minor: int | None = None   # signed bucket changes the ledger answered
    bonus_delta_minor: int | None = None       # (None: not known, e.g. read failed)
    debt_minor: int = 0                  # offline sale: the debt it left; top-up: what paid a debt

    @property
    def details(self) -> dict:
        return json.loads(self.detail) if self.detail else {}

    @property
    def offline(self) -> bool:
        """A sale made while the till reached no gateway (settled on reconnect)."""
        return self.kind == "offline"

    @property
    def pending(self) -> bool:
        return self.state == PENDING

    @property
    def applied(self) -> bool:
        return self.state == RESOLVED and self.status == "APPLIED"

    @property
    def expires_ms(self) -> int:
        """Holds: the earliest moment the hold can lapse (Redis applied it at or after created_ms)."""
        return self.created_ms + self.ttl_s * 1000


@dataclass(frozen=True, slots=True)
class Shift:
    shift_id: int
    terminal_id: str
    opened_ms: int
    opened_by: str
    closed_ms: int | None
    closed_by: str | None


@dataclass(frozen=True, slots=True)
class DrawerEntry:
    """One movement of the cash drawer (no ledger operation): `kind` one of DRAWER_KINDS;
    `reason` and `note` for cash in / out; `detail` JSON (a count by denomination)."""
    entry_id: int
    shift_id: int
    kind: str
    amount_minor: int
    reason: str
    note: str
    cashier_id: str
    approved_by: str
    created_ms: int
    detail: str = ""


_DRAWER_COLUMNS = "entry_id, shift_id, kind, amount_minor, reason, note, cashier_id, approved_by, created_ms, detail"


_OP_COLUMNS = ("txn_id, kind, account_id, amount_minor, terminal_id, cashier_id, shift_id, created_ms, "
               "original_txn_id, approved_by, state, status, balance_after_minor, replayed, attempts, "
               "last_error, resolved_ms, recovered, ttl_s, method, bonus_minor, card_no, detail, "
               "principal_delta_minor, bonus_delta_minor, debt_minor")


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
        self._migrate()

    def _migrate(self) -> None:
        """Bring an outbox of an earlier version up to SCHEMA_VERSION, in one transaction.
        Version 1 (no user_version) allowed only deduct/refund/credit and had no ttl_s;
        version 2 had no member kinds, no top-up method/bonus and no bucket split; version
        3 had no drawer table (created here, empty); version 4 had no split-tender kinds (issue
        31), no 'offline' kind and no debt_minor (issue 27; 0 for every old row). SQLite
        cannot change a CHECK constraint, so the ops table is rebuilt, keeping every row."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        has_ops = self._db.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'ops'").fetchone()[0]
        if version >= SCHEMA_VERSION:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            if has_ops:
                old = {r[1] for r in self._db.execute("PRAGMA table_info(ops)")}
                self._db.execute("ALTER TABLE ops RENAME TO ops_old")
                for index in ("ops_state", "ops_shift", "ops_original", "ops_kind"):
                    self._db.execute(f"DROP INDEX IF EXISTS {index}")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self._db.execute(statement)
            if has_ops:
                columns = ", ".join(c for c in _OP_COLUMNS.split(", ") if c in old)
                self._db.execute(f"INSERT INTO ops ({columns}) SELECT {columns} FROM ops_old")
                self._db.execute("DROP TABLE ops_old")
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

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
            "created_ms, original_txn_id, approved_by, ttl_s, method, bonus_minor, card_no, detail) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (op.txn_id, op.kind, op.account_id, op.amount_minor, op.terminal_id, op.cashier_id,
             op.shift_id, op.created_ms, op.original_txn_id, op.approved_by, op.ttl_s, op.method,
             op.bonus_minor, op.card_no, op.detail))

    def note_attempt(self, txn_id: str, error: str = "") -> None:
        self._exec("UPDATE ops SET attempts = attempts + 1, last_error = ? WHERE txn_id = ?",
                   (error[:500], txn_id))

    def resolve(self, txn_id: str, status: str, balance_after_minor: int | None, *,
                replayed: bool = False, recovered: bool = False, error: str = "",
                split: tuple[int, int] | None = None, amount_minor: int | None = None,
                debt_minor: int = 0) -> Op:
        """Record the ledger's answer. A row is resolved once; a later call changes nothing.
        `split`: the (principal, bonus) deltas when the answer says them; `amount_minor`:
        a close's payout (the request has no amount; the ledger decides it); `debt_minor`:
        an offline sale's debt, or what a top-up paid of one."""
        pd, bd = split if split is not None else (None, None)
        self._exec(
            "UPDATE ops SET state = 'resolved', status = ?, balance_after_minor = ?, replayed = ?, "
            "recovered = ?, resolved_ms = ?, last_error = ?, attempts = attempts + 1, "
            "principal_delta_minor = coalesce(?, principal_delta_minor), "
            "bonus_delta_minor = coalesce(?, bonus_delta_minor), amount_minor = coalesce(?, amount_minor), "
            "debt_minor = ? WHERE txn_id = ? AND state = 'pending'",
            (status, balance_after_minor, int(replayed), int(recovered), now_ms(), error[:500], pd, bd,
             amount_minor, int(debt_minor), txn_id))
        return self.get(txn_id)

    def reopen(self, txn_id: str) -> Op | None:
        """A charge answered CONFIRMATION_REQUIRED (nothing applied, nothing stored by the
        ledger) made pending again, to be re-sent with the member's confirmation under the
        same txn id (desktop/engine_confirm.py); None for any other row."""
        changed = self._exec(
            "UPDATE ops SET state = 'pending', status = '', resolved_ms = NULL, last_error = '' "
            "WHERE txn_id = ? AND state = 'resolved' AND status = 'CONFIRMATION_REQUIRED'", (txn_id,)).rowcount
        return self.get(txn_id) if changed else None

    def abandon(self, txn_id: str, supervisor_id: str) -> Op | None:
        """A supervisor gives up a pending row that is too old to re-send: resolved as
        ABANDONED with who decided; a row already resolved is left as it is."""
        self._exec(
            "UPDATE ops SET state = 'resolved', status = ?, resolved_ms = ?, last_error = ? "
            "WHERE txn_id = ? AND state = 'pending'",
            (ABANDONED, now_ms(), ABANDONED_NOTE.format(supervisor=supervisor_id)[:500], txn_id))
        return self.get(txn_id)

    def note_split(self, txn_id: str, principal_delta_minor: int, bonus_delta_minor: int) -> Op | None:
        """Record what an applied operation took from (or gave to) each bucket, read
        after its answer (a deduction's split is decided inside the script)."""
        self._exec("UPDATE ops SET principal_delta_minor = ?, bonus_delta_minor = ? WHERE txn_id = ?",
                   (principal_delta_minor, bonus_delta_minor, txn_id))
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

    def offline_sales_since(self, since_ms: int) -> list[Op]:
        """This till's offline sales made at or after `since_ms` that applied or may still
        apply (pending, or settled APPLIED), oldest first: what its offline limits count."""
        return [_op(r) for r in self._all(
            f"SELECT {_OP_COLUMNS} FROM ops WHERE kind = 'offline' AND created_ms >= ? "
            "AND (state = 'pending' OR status = 'APPLIED') ORDER BY created_ms, rowid", (since_ms,))]

    def refunded_minor(self, original_txn_id: str) -> int:
        """Refunds of `original_txn_id` made here that applied or may still apply."""
        return self._all(
            "SELECT coalesce(sum(amount_minor), 0) FROM ops WHERE kind = 'refund' AND original_txn_id = ? "
            "AND (state = 'pending' OR status = 'APPLIED')", (original_txn_id,))[0][0]

    def split_refunded(self, original_txn_id: str) -> dict[str, int]:
        """What refunds made here of the split sale `original_txn_id` gave back (or may still
        give back: pending ones count), per tender: {'card': ..., 'cash': ...}."""
        out: dict[str, int] = {}
        for kind, amount_minor, detail in self._all(
                "SELECT kind, amount_minor, detail FROM ops WHERE kind IN ('refund', 'tender_refund') "
                "AND original_txn_id = ? AND (state = 'pending' OR status = 'APPLIED')", (original_txn_id,)):
            d = json.loads(detail) if detail else {}
            parts = {"card": amount_minor} if kind == "refund" else {"card": d.get("card_minor", 0),
                                                                    **d.get("tenders", {})}
            for tender, given in parts.items():
                out[tender] = out.get(tender, 0) + given
        return out

    # ---------------------------------------------------------------- holds

    def resolutions_of(self, hold_txn_id: str) -> list[Op]:
        """The captures and voids of one hold made here, oldest first."""
        return [_op(r) for r in self._all(
            f"SELECT {_OP_COLUMNS} FROM ops WHERE original_txn_id = ? "
            f"AND kind IN ({', '.join('?' * len(HOLD_RESOLUTIONS))}) ORDER BY created_ms, rowid",
            (hold_txn_id, *HOLD_RESOLUTIONS))]

    def hold_state(self, hold: Op, at_ms: int | None = None) -> str:
        return hold_state(hold, self.resolutions_of(hold.txn_id), now_ms() if at_ms is None else at_ms)

    def open_holds(self, account_id: str | None = None, at_ms: int | None = None) -> list[Op]:
        """Applied holds of this terminal (any shift) that may still be completed or
        released, newest first; `account_id` narrows them to one account."""
        at_ms = now_ms() if at_ms is None else at_ms
        sql = (f"SELECT {_OP_COLUMNS} FROM ops WHERE kind = 'hold' AND state = 'resolved' "
               "AND status = 'APPLIED' AND created_ms + ttl_s * 1000 + ? > ?")
        params: tuple = (HOLD_GRACE_MS, at_ms)
        if account_id is not None:
            sql += " AND account_id = ?"
            params += (account_id,)
        holds = [_op(r) for r in self._all(sql + " ORDER BY created_ms DESC, rowid DESC", params)]
        return [h for h in holds if self.hold_state(h, at_ms) in (HOLD_OPEN, HOLD_CHECKING)]

    # ---------------------------------------------------------------- the cash drawer

    def add_drawer(self, shift_id: int, kind: str, amount_minor: int, cashier_id: str, *, reason: str = "",
                   note: str = "", approved_by: str = "", detail: str = "") -> DrawerEntry:
        """Record a drawer movement of `shift_id` (committed before this returns). A shift
        has one opening float: a second one raises ValueError; a later count replaces an
        earlier one in the report (the cashier counted again)."""
        if kind not in DRAWER_KINDS:
            raise ValueError(f"drawer kind {kind!r}")
        if isinstance(amount_minor, bool) or not isinstance(amount_minor, int) or amount_minor < 0:
            raise ValueError("amount_minor must be a whole number of minor units")
        with self._lock:
            if kind == "float" and self._db.execute(
                    "SELECT count(*) FROM drawer WHERE shift_id = ? AND kind = 'float'", (shift_id,)).fetchone()[0]:
                raise ValueError(f"shift {shift_id} has its opening float already")
            cur = self._db.execute(
                "INSERT INTO drawer (shift_id, kind, amount_minor, reason, note, cashier_id, approved_by, "
                "created_ms, detail) VALUES (?,?,?,?,?,?,?,?,?)",
                (shift_id, kind, amount_minor, reason, note[:200], cashier_id, approved_by, now_ms(), detail))
            row = self._db.execute(f"SELECT {_DRAWER_COLUMNS} FROM drawer WHERE entry_id = ?",
                                   (cur.lastrowid,)).fetchone()
        return DrawerEntry(*row)

    def drawer_of_shift(self, shift_id: int) -> list[DrawerEntry]:
        return [DrawerEntry(*r) for r in self._all(
            f"SELECT {_DRAWER_COLUMNS} FROM drawer WHERE shift_id = ? ORDER BY created_ms, entry_id", (shift_id,))]

    def has_float(self, shift_id: int) -> bool:
        return bool(self._all("SELECT count(*) FROM drawer WHERE shift_id = ? AND kind = 'float'", (shift_id,))[0][0])

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


def hold_state(hold: Op, resolutions: list[Op], at_ms: int) -> str:
    """What an applied hold is now, from the captures/voids of it made here: checking
    (one is being sent), captured, released, expired, gone (the ledger no longer knows
    it) or open. Only the ledger decides; this is the terminal's view for the screen."""
    for op in resolutions:
        if op.pending:
            return HOLD_CHECKING
    for op in resolutions:
        if op.applied:
            captured = kinds.HOLD_RESOLUTIONS.get(op.kind) == "captured"    # else voided
            return HOLD_CAPTURED if captured else HOLD_RELEASED
        final = {"HOLD_ALREADY_CAPTURED": HOLD_CAPTURED, "HOLD_ALREADY_VOIDED": HOLD_RELEASED,
                 "HOLD_EXPIRED": HOLD_EXPIRED_STATE, "HOLD_NOT_FOUND": HOLD_GONE}.get(op.status)
        if final:
            return final
    if at_ms >= hold.expires_ms + HOLD_GRACE_MS:
        return HOLD_EXPIRED_STATE
    return HOLD_OPEN
