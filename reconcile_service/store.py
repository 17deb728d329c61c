"""Writing journal entries into the database of record, one transaction per batch.

`apply_batch` writes a batch of one partition's stream entries. On PostgreSQL it first
COPYs the new rows, chained (`chain`: chain_seq and row_hash) after the partition's
head, which the batch locks first, straight into ledger_entries (`bulk.copy_rows`); a
row already there (a redelivery, a txn id that Redis applied twice) fails the COPY on a
unique index and the batch is redone the careful way, which SQLite always takes: which
txn ids are stored first, then one ``INSERT ... ON CONFLICT DO NOTHING`` of the new ones
(see `BulkInsert`). So a redelivered entry changes nothing, a txn id applied twice is
refused by the unique `txn_id` and recorded as a duplicate, and two consumers' batches
of one partition are chained one after the other. It then adds each account's net
change with one multi-row upsert per table (increments and maxima, so batches of one
partition committed out of order by two consumers still add up). Nothing here talks to
Redis: the caller acknowledges the entries only after this function's COMMIT returned.
"""
from __future__ import annotations

import json
import logging
import os
import re
from collections import defaultdict
from collections import namedtuple
from dataclasses import MISSING, dataclass, field, fields as dataclass_fields
from datetime import date, datetime, timedelta, timezone
from typing import Iterable, Sequence

from sqlalchemy import ARRAY, bindparam, case, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine

from core import JournalEntry
from core.keys import KeySchema

from . import bulk, chain
from .members import NON_BALANCE_KINDS, apply_member_entries
from .models import (METHOD_LEN, Account, ChainHead, DailyTotal, Discrepancy, DuplicateEntry, Hold, JournalProgress,
                     LedgerEntry, LedgerSetting, QuarantinedEntry, ShiftClose, SubBalance, journal_pos)

log = logging.getLogger(__name__)

# Kinds that set the account's status; every other kind leaves it as it is.
STATUS_BY_KIND = {"open": "active", "freeze": "frozen", "unfreeze": "active", "close": "closed"}
# Kinds that resolve a hold (orig = the hold's txn id), and the hold status each sets.
HOLD_RESOLUTIONS = {"capture": "captured", "void": "voided", "hold_expire": "expired"}
# Internal transfers between sub-balances of a split account: they move money inside one
# account, so an account's total (`accounts`) leaves them out; its sub-balances count them.
TRANSFER_KINDS = ("xfer_out", "xfer_in")
# Kinds that record something other than an account's money (a terminal's Z record): in
# ledger_entries and the chain, never in accounts / sub_balances.
BOOK_ONLY_KINDS = ("shift_close",)
_INT_RE = re.compile(r"-?[0-9]{1,19}")
# the totals of a Z record (core.shifts), each a whole number
_EPOCH_DAY = date(1970, 1, 1)
SHIFT_TOTALS = ("sales_count", "sales_minor", "refunds_count", "refunds_minor", "topups_count", "topups_minor")


def _book_entry_fields():
    """A named tuple of core.JournalEntry's fields (same names, order and defaults) and
    the book's own (see BookEntry)."""
    core = dataclass_fields(JournalEntry)
    names = [f.name for f in core] + ["principal_delta_minor", "bonus_delta_minor", "method", "shift", "pos"]
    defaults = [f.default for f in core if f.default is not MISSING] + [0, 0, "", None, ""]
    return namedtuple("BookEntryFields", names, defaults=defaults), len(core)


_BookEntryFields, _CORE_FIELDS = _book_entry_fields()
_core_from_fields = JournalEntry.from_fields.__func__
_AMOUNT_AT, _KIND_AT = _BookEntryFields._fields.index("amount_minor"), _BookEntryFields._fields.index("kind")


def _args_tuple(*values):
    """What from_fields builds when given this as its class: the core fields as a plain
    tuple, so BookEntry.parse makes one tuple per entry instead of two."""
    return values


class BookEntry(_BookEntryFields):
    """A journal entry with what the book of record adds: the bucket deltas and payment
    method (journal fields `pd`, `bd`, `m`; absent: pd = amt, bd = 0, no method), for
    a `shift_close` the Z record, and `pos`, the sortable journal position.

    It has every field of core.JournalEntry, read from the stream fields by core's own
    `JournalEntry.from_fields` (which builds whatever it is called on from those fields:
    here a plain tuple of them),
    but is a named tuple rather than a frozen dataclass: building one costs a quarter
    (a frozen dataclass sets its 23 fields one object.__setattr__ at a time), and the
    drain builds one per entry (profiling: 20% of its time went into that)."""
    __slots__ = ()

    @property
    def account_root(self) -> str:
        return JournalEntry.account_root.fget(self)

    @classmethod
    def parse(cls, journal_id: str, partition: int, f: dict[str, str]) -> "BookEntry":
        core = _core_from_fields(_args_tuple, journal_id, partition, f)    # the core fields, in order
        if len(core) != _CORE_FIELDS:
            raise RuntimeError("JournalEntry.from_fields must pass every field")  # a bug, never data
        amt = core[_AMOUNT_AT]
        pd = _int_field(f, "pd") if "pd" in f else amt
        bd = _int_field(f, "bd") if "bd" in f else 0
        if pd + bd != amt:
            raise ValueError(f"pd {pd} + bd {bd} != amt {amt}")
        method = f.get("m") or ""
        if len(method) > METHOD_LEN:
            raise ValueError(f"payment method {method[:20]!r} longer than {METHOD_LEN}")
        shift = _parse_shift(f) if core[_KIND_AT] == "shift_close" else None
        return tuple.__new__(cls, core + (pd, bd, method, shift, journal_pos(journal_id)))


def _int_field(f: dict, name: str) -> int:
    value = f[name]
    if not isinstance(value, str) or not _INT_RE.fullmatch(value):
        raise ValueError(f"{name} {str(value)[:24]!r} is not a whole number")
    return int(value)


def _parse_shift(f: dict) -> dict:
    """A shift_close entry's Z record (core.shifts writes it): number, who closed it,
    when it opened, the totals (JSON object `z`)."""
    if f.get("amt") != "0":
        raise ValueError("a shift_close moves no money (amt must be 0)")
    shift_no = _int_field(f, "shift")
    if shift_no < 1 or not f.get("term") or not f.get("by") or len(f["by"]) > 64:
        raise ValueError("a shift_close needs shift >= 1, term and by")
    record = json.loads(f["z"])
    if not isinstance(record, dict):
        raise ValueError("z is not a JSON object")
    totals = {}
    for name in SHIFT_TOTALS:
        value = record.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 2 ** 63:
            raise ValueError(f"z.{name} is not a whole number")
        totals[name] = value
    opened = _int_field(f, "opened") if f.get("opened") else None
    return dict(shift_no=shift_no, closed_by=f["by"], opened_ms=opened, totals=totals, record=f["z"])


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


@dataclass
class BatchResult:
    applied: int = 0             # new rows in ledger_entries
    redelivered: int = 0         # already in the database from an earlier delivery
    duplicates: list[dict] = field(default_factory=list)   # new duplicate_entries rows
    quarantined: int = 0
    accounts_changed: int = 0


# ledger_entries' columns as the drain writes them (the chain's two last)
LEDGER_COLUMNS = ("txn_id", "account_id", "kind", "amount_minor", "balance_after_minor", "terminal_id",
                  "cashier_id", "original_txn_id", "occurred_at", "journal_partition", "journal_id",
                  "journal_pos", "root_account_id", "transfer_id", "peer_account_id", "principal_delta_minor",
                  "bonus_delta_minor", "method", "applied_at", "chain_seq", "row_hash")


def _values(entry: BookEntry, now: datetime, occurred: datetime | None = None) -> list:
    """An entry's ledger_entries values in LEDGER_COLUMNS order, the chain's left 0 and ''."""
    return [entry.txn_id, entry.account_id, entry.kind, entry.amount_minor, entry.balance_after_minor,
            entry.terminal_id or None, entry.cashier_id or None, entry.original_txn_id or None,
            occurred or ms_to_datetime(entry.occurred_ms), entry.partition, entry.journal_id, entry.pos,
            entry.root_id or entry.account_id, entry.transfer_id or None, entry.peer_id or None, entry.principal_delta_minor,
            entry.bonus_delta_minor, entry.method or None, now, 0, ""]


def _row(entry: BookEntry, now: datetime) -> dict:
    """An entry's ledger_entries row as a dict (without the chain's columns)."""
    return dict(zip(LEDGER_COLUMNS[:-2], _values(entry, now)))


def parse_entries(partition: int, raw: Sequence[tuple[str, dict]]) -> tuple[list[BookEntry], list[dict]]:
    """Split stream entries into parsed entries and quarantine rows (malformed ones)."""
    good, bad = [], []
    now = utcnow()
    for entry_id, fields_ in raw:
        try:
            entry = BookEntry.parse(entry_id, partition, fields_)
            if not entry.txn_id or not entry.account_id or not entry.kind:
                raise ValueError("empty txn, acct or kind")
            if (len(entry.txn_id) > 64 or len(entry.account_id) > 64 or len(entry.kind) > 32
                    or len(entry.root_id) > 64 or len(entry.transfer_id) > 32 or len(entry.peer_id) > 64):
                raise ValueError("id longer than the schema allows")
            good.append(entry)
        except (KeyError, ValueError, TypeError, json.JSONDecodeError) as exc:
            bad.append(dict(journal_partition=partition, journal_id=entry_id,
                            fields_json=json.dumps(fields_, sort_keys=True, default=str),
                            error=f"{type(exc).__name__}: {exc}", quarantined_at=now))
    return good, bad


class _ChainRace(Exception):
    """A txn id this batch was about to chain was inserted meanwhile by another
    partition's batch (a txn id reused across partitions), or, on the fast path, is
    already in the book (a redelivery): the batch is chained anew, checking first."""


CHAIN_RACE_ATTEMPTS = 5
# The benchmark's "drain without the chain" (bench/parts/reconcile.py); never in production.
UNCHAINED_FOR_BENCH = os.environ.get("CASHIER_BENCH_UNCHAINED") == "1"


def apply_batch(engine: Engine, partition: int, raw: Sequence[tuple[str, dict]],
                partitions: int | None = None) -> BatchResult:
    """Apply one batch of stream entries of `partition` in one database transaction.
    `partitions` (the ledger's count) places a split account's row in its root's partition.

    On PostgreSQL the first attempt assumes that every entry is new (the drain's common
    case) and COPYs the chained rows straight into ledger_entries; a row already there
    (a redelivery, or a txn id Redis applied twice) makes the COPY fail on a unique
    index, and the batch is applied again the careful way: which txn ids are stored
    first, then only the new ones chained and inserted."""
    entries, quarantine = parse_entries(partition, raw)
    check_first = False
    for attempt in range(CHAIN_RACE_ATTEMPTS):
        result = BatchResult()
        now = utcnow()
        try:
            with engine.begin() as conn:
                if quarantine:
                    _quarantine(conn, partition, quarantine, result, now)
                if entries:
                    _apply_entries(conn, partition, entries, result, now, partitions, check_first)
            return result
        except _ChainRace:
            if check_first:
                log.info("batch raced with another partition over a txn id: chaining it again",
                         extra={"partition": partition, "attempt": attempt + 1})
            check_first = True
    raise RuntimeError(f"partition {partition}: batch could not be chained after {CHAIN_RACE_ATTEMPTS} attempts")


def _quarantine(conn: Connection, partition: int, quarantine: list[dict], result: BatchResult,
                now: datetime) -> None:
    stmt = insert_for(conn, QuarantinedEntry).on_conflict_do_nothing(
        index_elements=["journal_partition", "journal_id"]).returning(QuarantinedEntry.journal_id)
    new_q = {r[0] for r in conn.execute(stmt, quarantine)}
    result.quarantined = len(new_q)
    if new_q:
        conn.execute(insert_for(conn, Discrepancy), [
            dict(kind="malformed_entry", account_id=None, txn_id=None, journal_partition=partition,
                 journal_id=q["journal_id"], cause=f"journal entry could not be parsed: {q['error']}",
                 evidence_json=q["fields_json"], status="open", found_at=now)
            for q in quarantine if q["journal_id"] in new_q])


def _lock_chain_head(conn: Connection, partition: int, now: datetime) -> tuple[int, str]:
    """Lock the partition's chain head and read it (one upsert: on PostgreSQL it waits for
    a concurrent batch of the partition to commit and then sees its head; on SQLite the
    write takes the database's write lock first)."""
    ins = insert_for(conn, ChainHead).values(journal_partition=partition, last_seq=0,
                                             last_hash=chain.GENESIS_HASH, updated_at=now)
    stmt = ins.on_conflict_do_update(index_elements=["journal_partition"],
                                     set_=dict(updated_at=ins.excluded.updated_at)).returning(
        ChainHead.last_seq, ChainHead.last_hash)
    seq, last = conn.execute(stmt).one()
    return int(seq), last


def _stored_positions(conn: Connection, txn_ids: list[str]) -> dict[str, tuple[int, str]]:
    """Where these txn ids already are in ledger_entries (one fixed-text statement on
    PostgreSQL: the ids go as one array)."""
    cols = (LedgerEntry.txn_id, LedgerEntry.journal_partition, LedgerEntry.journal_id)
    if conn.dialect.name == "postgresql":
        where = LedgerEntry.txn_id == func.any(bindparam("txn_ids", txn_ids, type_=ARRAY(LedgerEntry.txn_id.type)))
    else:
        where = LedgerEntry.txn_id.in_(txn_ids)
    return {r[0]: (r[1], r[2]) for r in conn.execute(select(*cols).where(where))}


def _by_pos(e: BookEntry) -> str:
    return e.pos


def _apply_entries(conn: Connection, partition: int, entries: list[BookEntry],
                   result: BatchResult, now: datetime, partitions: int | None = None,
                   check_first: bool = True) -> None:
    entries = sorted(entries, key=_by_pos)
    # Within one batch the first (oldest) occurrence of a txn id goes to ledger_entries;
    # later ones are duplicate candidates like any conflicting row.
    first: dict[str, BookEntry] = {}
    candidates: list[BookEntry] = []
    for e in entries:
        if e.txn_id in first:
            candidates.append(e)
        else:
            first[e.txn_id] = e
    totals = _Totals(partition, now, partitions)
    effective, stored = _insert_entries(conn, partition, first, now, totals, chained=not UNCHAINED_FOR_BENCH,
                                        check_first=check_first or conn.dialect.name != "postgresql")
    result.applied = len(effective)
    if candidates or stored:
        candidates.extend(e for e in first.values() if e.txn_id in stored)
        prior_of = dict(stored)
        prior_of.update((e.txn_id, (e.partition, e.journal_id)) for e in effective)
        new_rows = len(effective)
        _record_duplicates(conn, candidates, prior_of, effective, result, now)
        for e in effective[new_rows:]:
            totals.add(e, duplicate=True)
    if effective:
        if totals.accounts:
            result.accounts_changed = _upsert_balances(conn, totals)
            _upsert_holds(conn, totals.holds, now)
        _insert_shift_closes(conn, [e for e in totals.others if e.kind == "shift_close"], now)
        if any(e.kind in NON_BALANCE_KINDS for e in totals.others):
            apply_member_entries(conn, totals.others, now)
        _add_daily_totals(conn, partition, totals.days)
        _advance_progress(conn, partition, totals, now)


def ledger_rows(entries: Iterable[BookEntry], now: datetime, link: "chain.Linker | None", totals: "_Totals"):
    """The ledger_entries rows of `entries` (lists in LEDGER_COLUMNS order), each chained
    by `link` (None: the bench's unchained placeholder) and added to `totals` as it is
    made, so a COPY streams the rows already built while the next is built."""
    instants: dict[int, datetime] = {}       # entries of one millisecond share its datetime
    for e in entries:
        occurred = instants.get(e.occurred_ms)
        if occurred is None:
            occurred = instants[e.occurred_ms] = ms_to_datetime(e.occurred_ms)
        row = _values(e, now, occurred)
        if link is not None:
            link(row)
        else:
            pos = e.pos
            row[-2] = -int(pos[:15]) * 10 ** 6 - int(pos[15:]) % 10 ** 6
        totals.add(e)
        yield row


def _insert_entries(conn: Connection, partition: int, first: dict[str, BookEntry], now: datetime,
                    totals: "_Totals", *, chained: bool, check_first: bool) -> tuple[list[BookEntry], dict]:
    """Insert the batch's first occurrences that are new, chained after the partition's
    head (locked first), and add each to `totals`. Answers (the new entries, {txn id:
    position} of those already stored). check_first=False (PostgreSQL's fast path):
    COPY them all straight into ledger_entries, raising _ChainRace when one is already
    there; each row is built, hashed and counted while the COPY streams, so PostgreSQL
    writes the rows already sent while Python builds the next.

    chained=False is FOR THE BENCHMARK ONLY (CASHIER_BENCH_UNCHAINED=1): the insert as it
    was before the chain (no head lock, no hashes; chain_seq a negative unique
    placeholder), so the bench can report the drain with and without the chain. Such a
    book does not verify."""
    head = _lock_chain_head(conn, partition, now) if chained else (0, "")
    stored = _stored_positions(conn, list(first)) if check_first else {}
    effective = [e for e in first.values() if e.txn_id not in stored] if stored else list(first.values())
    if not effective:
        return effective, stored
    link = chain.Linker(LEDGER_COLUMNS, *head) if chained else None
    if not check_first:
        import psycopg.errors
        try:
            bulk.copy_rows(conn, LedgerEntry.__table__, LEDGER_COLUMNS, ledger_rows(effective, now, link, totals))
        except psycopg.errors.UniqueViolation:
            raise _ChainRace() from None
    else:
        ins = bulk_insert(conn, LedgerEntry,
                          [dict(zip(LEDGER_COLUMNS, r)) for r in ledger_rows(effective, now, link, totals)])
        stmt = ins.insert.on_conflict_do_nothing(index_elements=["txn_id"]).returning(LedgerEntry.txn_id)
        inserted = {r[0] for r in ins.execute(conn, stmt)}
        if len(inserted) != len(effective):
            if chained:
                raise _ChainRace()
            # unchained (bench only): what raced is left to the duplicate check
            raise RuntimeError("the bench's unchained drain met a txn id inserted concurrently")
    if link is not None:
        conn.execute(ChainHead.__table__.update().where(ChainHead.journal_partition == partition)
                     .values(last_seq=link.seq, last_hash=link.last_hash, updated_at=now))
    return effective, stored


class _Account:
    """What one batch adds to one Redis account hash's row (sub_balances) and, for its
    root, to the account's row (accounts)."""
    __slots__ = ("root", "delta", "delta_kept", "principal", "bonus", "last", "status", "status_pos",
                 "closed", "closed_pos", "shards", "shards_pos", "created_ms", "holder", "phone")

    def __init__(self, e: BookEntry):
        self.root, self.last, self.created_ms = e.account_root, e, e.occurred_ms
        self.delta = self.delta_kept = self.principal = self.bonus = self.shards = 0
        self.status, self.closed = "active", False
        self.status_pos = self.closed_pos = self.shards_pos = ""
        self.holder = self.phone = None


class _Totals:
    """A batch's effect on the tables kept beside ledger_entries, gathered one entry at a
    time (`add`) while the entries are written: each account's net change, buckets,
    last position and status; the daily totals; the hold entries; the entries that are
    not money (Z records, cards, settings); the newest position and the count."""

    def __init__(self, partition: int, now: datetime, partitions: int | None):
        self.partition, self.now = partition, now
        self.schema = KeySchema(partitions) if partitions else None
        self.accounts: dict[str, _Account] = {}
        self.days: dict[tuple, list[int]] = {}
        self.holds: list[BookEntry] = []
        self.others: list[BookEntry] = []
        self.newest: BookEntry | None = None
        self.count = 0

    def add(self, e: BookEntry, duplicate: bool = False) -> None:
        self.count += 1
        pos, kind = e.pos, e.kind
        if self.newest is None or pos > self.newest.pos:
            self.newest = e
        key = (e.occurred_ms // 86_400_000, kind, e.method, duplicate)
        t = self.days.get(key)
        if t is None:
            t = self.days[key] = [0, 0, 0]
        t[0] += e.principal_delta_minor
        t[1] += e.bonus_delta_minor
        t[2] += 1
        if kind in BOOK_ONLY_KINDS or kind in NON_BALANCE_KINDS:
            # cards and settings move no money and have no balance row (a card's entry
            # lives in the card's partition, not its account's)
            self.others.append(e)
            return
        if kind == "hold" or kind in HOLD_RESOLUTIONS:
            self.holds.append(e)
        a = self.accounts.get(e.account_id)
        if a is None:
            a = self.accounts[e.account_id] = _Account(e)
        a.delta += e.amount_minor
        if kind not in TRANSFER_KINDS:
            a.delta_kept += e.amount_minor
            a.principal += e.principal_delta_minor
            a.bonus += e.bonus_delta_minor
        if pos > a.last.pos:
            a.last = e
        if e.occurred_ms < a.created_ms:
            a.created_ms = e.occurred_ms
        if kind in STATUS_BY_KIND and pos > a.status_pos:
            a.status, a.status_pos = STATUS_BY_KIND[kind], pos
        if e.holder_name:
            a.holder = e.holder_name
        if e.phone:
            a.phone = e.phone
        if kind in ("shard_open", "shard_close") and pos > a.closed_pos:
            a.closed, a.closed_pos = kind == "shard_close", pos
        if kind in ("split", "merge") and e.account_id == a.root and pos > a.shards_pos:
            a.shards, a.shards_pos = (e.shards if kind == "split" else 0), pos

    def sub_balance_rows(self) -> list[dict]:
        """Each Redis account hash's row: net change, last position, status, split state."""
        now, part = self.now, self.partition
        return [dict(account_id=k, root_account_id=a.root, balance_minor=a.delta, status=a.status,
                     created_at=ms_to_datetime(a.created_ms), updated_at=now, journal_partition=part,
                     last_journal_id=a.last.journal_id, last_journal_pos=a.last.pos,
                     status_journal_pos=a.status_pos, closed=a.closed, closed_journal_pos=a.closed_pos,
                     shards=a.shards, split_journal_pos=a.shards_pos)
                for k, a in sorted(self.accounts.items())]    # one lock order for every writer

    def account_rows(self) -> list[dict]:
        """One row per account as customers see it (a split account's root): the net
        change of every sub-balance except internal transfers; position, status, name and
        phone from the root's own entries only (a shard's positions are in other partitions)."""
        roots: dict[str, list[_Account]] = defaultdict(list)
        for k, a in self.accounts.items():
            roots[a.root].append(a)
        rows = []
        for root in sorted(roots):       # one lock order for every writer: no deadlocks
            subs = roots[root]
            own = self.accounts.get(root)
            if own is not None and own.root != root:
                own = None          # (legacy) the root's own entries named another root
            if own is not None:
                lj, lpos, part = own.last.journal_id, own.last.pos, own.last.partition
                st, st_pos, holder, phone = own.status, own.status_pos, own.holder, own.phone
            else:
                lj, lpos, st, st_pos, holder, phone = "0-0", journal_pos("0-0"), "active", "", None, None
                part = self.schema.partition_of(root).index if self.schema else self.partition
            rows.append(dict(account_id=root, balance_minor=sum(a.delta_kept for a in subs), status=st,
                             created_at=ms_to_datetime(min(a.created_ms for a in subs)), updated_at=self.now,
                             journal_partition=part, last_journal_id=lj, last_journal_pos=lpos,
                             status_journal_pos=st_pos, holder_name=holder,
                             principal_minor=sum(a.principal for a in subs),
                             bonus_minor=sum(a.bonus for a in subs), phone=phone))
        return rows


def _record_duplicates(conn: Connection, candidates: list[BookEntry], prior_of: dict, effective: list,
                       result: BatchResult, now: datetime) -> None:
    if candidates:
        # What is already stored under these txn ids: the same journal position means a
        # redelivery (harmless); another position means Redis applied the txn twice.
        dup_rows = []
        for e in candidates:
            prior = prior_of[e.txn_id]
            if prior == (e.partition, e.journal_id):
                result.redelivered += 1
                continue
            status = "no_effect" if e.amount_minor == 0 else "open"
            row = _row(e, now)
            del row["applied_at"]          # a duplicate has detected_at instead
            dup_rows.append(dict(row, first_journal_partition=prior[0],
                                 first_journal_id=prior[1], status=status, detected_at=now,
                                 resolved_at=now if status == "no_effect" else None))
        if dup_rows:
            stmt = insert_for(conn, DuplicateEntry).on_conflict_do_nothing(
                index_elements=["journal_partition", "journal_id"]).returning(
                DuplicateEntry.journal_partition, DuplicateEntry.journal_id)
            new_dups = {(r[0], r[1]) for r in conn.execute(stmt, dup_rows)}
            for row in dup_rows:
                if (row["journal_partition"], row["journal_id"]) in new_dups:
                    result.duplicates.append(row)
            by_pos = {(e.partition, e.journal_id): e for e in candidates}
            effective.extend(by_pos[k] for k in new_dups)
            if result.duplicates:
                conn.execute(insert_for(conn, Discrepancy), [_duplicate_discrepancy(d, now)
                                                             for d in result.duplicates])


def _add_daily_totals(conn: Connection, partition: int, days: dict[tuple, list[int]]) -> None:
    """Add the batch's bucket deltas ((UTC day number, kind, method, duplicate) -> [principal,
    bonus, entries]) to the partition's daily totals (a handful of rows per batch; keyed
    by partition, so other partitions' consumers never wait here)."""
    if not days:
        return
    rows = [dict(journal_partition=partition, day=_EPOCH_DAY + timedelta(days=k[0]), kind=k[1], method=k[2],
                 duplicate=k[3], principal_minor=v[0], bonus_minor=v[1], entries=v[2])
            for k, v in sorted(days.items())]
    ins = insert_for(conn, DailyTotal)
    ex, tbl = ins.excluded, DailyTotal.__table__.c
    conn.execute(ins.on_conflict_do_update(
        index_elements=["journal_partition", "day", "kind", "method", "duplicate"],
        set_=dict(principal_minor=tbl.principal_minor + ex.principal_minor,
                  bonus_minor=tbl.bonus_minor + ex.bonus_minor, entries=tbl.entries + ex.entries)), rows)


def _insert_shift_closes(conn: Connection, closes: list[BookEntry], now: datetime) -> None:
    """The Z records of the batch's shift_close entries (a redelivery changes nothing)."""
    if not closes:
        return
    rows = [dict(txn_id=e.txn_id, terminal_id=e.terminal_id, shift_no=e.shift["shift_no"],
                 cashier_id=e.cashier_id or None, closed_by=e.shift["closed_by"],
                 opened_at=ms_to_datetime(e.shift["opened_ms"]) if e.shift["opened_ms"] else None,
                 closed_at=ms_to_datetime(e.occurred_ms), record_json=e.shift["record"],
                 journal_partition=e.partition, journal_id=e.journal_id,
                 journal_pos=journal_pos(e.journal_id), applied_at=now, **e.shift["totals"])
            for e in closes]
    conn.execute(insert_for(conn, ShiftClose).on_conflict_do_nothing(index_elements=["txn_id"]), rows)


def _duplicate_discrepancy(dup: dict, now: datetime) -> dict:
    evidence = {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in dup.items()
                if k not in ("detected_at", "resolved_at", "status")}
    return dict(kind="duplicate_txn", account_id=dup["account_id"], txn_id=dup["txn_id"],
                journal_partition=dup["journal_partition"], journal_id=dup["journal_id"],
                cause=(f"txn {dup['txn_id']} was applied twice in Redis ({dup['kind']} "
                       f"{dup['amount_minor']:+d}); first at {dup['first_journal_id']}, again at "
                       f"{dup['journal_id']}: its idempotency record had expired"),
                evidence_json=json.dumps(evidence, sort_keys=True),
                status="cleared" if dup["status"] == "no_effect" else "open",
                found_at=now, resolved_at=now if dup["status"] == "no_effect" else None)


def _upsert_balances(conn: Connection, totals: _Totals) -> int:
    """Add the batch's changes to sub_balances and accounts (one upsert each, increments
    and maxima, so batches of one partition committed out of order still add up).
    Answers how many accounts changed."""
    rows = totals.sub_balance_rows()
    bulk = bulk_insert(conn, SubBalance, rows)
    ins = bulk.insert
    ex, tbl = ins.excluded, SubBalance.__table__.c
    newer = ex.last_journal_pos > tbl.last_journal_pos
    stmt = ins.on_conflict_do_update(index_elements=["account_id"], set_=dict(
        balance_minor=tbl.balance_minor + ex.balance_minor,
        status=case((ex.status_journal_pos > tbl.status_journal_pos, ex.status), else_=tbl.status),
        status_journal_pos=greatest(conn, tbl.status_journal_pos, ex.status_journal_pos),
        closed=case((ex.closed_journal_pos > tbl.closed_journal_pos, ex.closed), else_=tbl.closed),
        closed_journal_pos=greatest(conn, tbl.closed_journal_pos, ex.closed_journal_pos),
        shards=case((ex.split_journal_pos > tbl.split_journal_pos, ex.shards), else_=tbl.shards),
        split_journal_pos=greatest(conn, tbl.split_journal_pos, ex.split_journal_pos),
        created_at=least(conn, tbl.created_at, ex.created_at),
        updated_at=ex.updated_at,
        last_journal_id=case((newer, ex.last_journal_id), else_=tbl.last_journal_id),
        last_journal_pos=greatest(conn, tbl.last_journal_pos, ex.last_journal_pos),
    ))
    bulk.execute(conn, stmt)
    rows = totals.account_rows()
    bulk = bulk_insert(conn, Account, rows)
    ins = bulk.insert
    ex = ins.excluded
    tbl = Account.__table__.c
    newer = ex.last_journal_pos > tbl.last_journal_pos
    stmt = ins.on_conflict_do_update(index_elements=["account_id"], set_=dict(
        balance_minor=tbl.balance_minor + ex.balance_minor,
        principal_minor=tbl.principal_minor + ex.principal_minor,
        bonus_minor=tbl.bonus_minor + ex.bonus_minor,
        status=case((ex.status_journal_pos > tbl.status_journal_pos, ex.status), else_=tbl.status),
        status_journal_pos=greatest(conn, tbl.status_journal_pos, ex.status_journal_pos),
        created_at=least(conn, tbl.created_at, ex.created_at),
        updated_at=ex.updated_at,
        journal_partition=case((newer, ex.journal_partition), else_=tbl.journal_partition),
        holder_name=func.coalesce(ex.holder_name, tbl.holder_name),
        phone=func.coalesce(ex.phone, tbl.phone),
        last_journal_id=case((newer, ex.last_journal_id), else_=tbl.last_journal_id),
        last_journal_pos=greatest(conn, tbl.last_journal_pos, ex.last_journal_pos),
    ))
    bulk.execute(conn, stmt)
    return len(rows)


def _upsert_holds(conn: Connection, effective: Iterable[BookEntry], now: datetime) -> None:
    """One row per hold touched by the batch. Merged per hold in Python first (one
    statement may not upsert a row twice), then upserted so that any commit order gives
    the same row: hold fields from the newest `hold` entry, the resolution from the
    oldest resolving entry."""
    rows: dict[str, dict] = {}
    for e in sorted(effective, key=_by_pos):
        if e.kind == "hold":
            hold_id = e.txn_id
        elif e.kind in HOLD_RESOLUTIONS and e.original_txn_id:
            hold_id = e.original_txn_id
        else:
            continue
        row = rows.setdefault(hold_id, dict(
            hold_txn_id=hold_id, account_id=e.account_id, amount_minor=None, expires_at=None,
            status="active", captured_minor=0, resolved_txn_id=None, resolved_kind=None,
            hold_journal_partition=None, hold_journal_id=None, hold_journal_pos=None,
            resolved_journal_id=None, resolved_journal_pos=None, created_at=None, resolved_at=None,
            updated_at=now))
        if e.kind == "hold":        # sorted: the newest hold entry wins (a re-applied hold)
            row.update(account_id=e.account_id, amount_minor=e.hold_minor,
                       expires_at=ms_to_datetime(e.expires_ms) if e.expires_ms else None,
                       hold_journal_partition=e.partition, hold_journal_id=e.journal_id,
                       hold_journal_pos=journal_pos(e.journal_id), created_at=ms_to_datetime(e.occurred_ms))
        elif row["resolved_journal_pos"] is None:   # sorted: the oldest resolution wins
            row.update(status=HOLD_RESOLUTIONS[e.kind], resolved_kind=e.kind, resolved_txn_id=e.txn_id,
                       captured_minor=-e.amount_minor if e.kind == "capture" else 0,
                       resolved_journal_id=e.journal_id, resolved_journal_pos=journal_pos(e.journal_id),
                       resolved_at=ms_to_datetime(e.occurred_ms))
    if not rows:
        return
    bulk = bulk_insert(conn, Hold, [rows[k] for k in sorted(rows)])
    ins = bulk.insert
    ex, tbl = ins.excluded, Hold.__table__.c
    hold_wins = (ex.hold_journal_pos.isnot(None)
                 & (tbl.hold_journal_pos.is_(None) | (ex.hold_journal_pos > tbl.hold_journal_pos)))
    res_wins = (ex.resolved_journal_pos.isnot(None)
                & (tbl.resolved_journal_pos.is_(None) | (ex.resolved_journal_pos < tbl.resolved_journal_pos)))
    pick = lambda cond, col: case((cond, getattr(ex, col)), else_=getattr(tbl, col))
    stmt = ins.on_conflict_do_update(index_elements=["hold_txn_id"], set_=dict(
        **{c: pick(hold_wins, c) for c in ("account_id", "amount_minor", "expires_at", "hold_journal_partition",
                                           "hold_journal_id", "created_at")},
        **{c: pick(res_wins, c) for c in ("status", "captured_minor", "resolved_txn_id", "resolved_kind",
                                          "resolved_journal_id", "resolved_at")},
        # the position columns last: the conditions above read the stored (old) values
        hold_journal_pos=pick(hold_wins, "hold_journal_pos"),
        resolved_journal_pos=pick(res_wins, "resolved_journal_pos"),
        updated_at=ex.updated_at))
    bulk.execute(conn, stmt)


def _advance_progress(conn: Connection, partition: int, totals: _Totals, now: datetime) -> None:
    newest = totals.newest
    ins = insert_for(conn, JournalProgress)
    ex, tbl = ins.excluded, JournalProgress.__table__.c
    conn.execute(ins.values(journal_partition=partition, entries_applied=totals.count,
                            last_journal_id=newest.journal_id,
                            last_journal_pos=newest.pos, last_batch_at=now)
                 .on_conflict_do_update(index_elements=["journal_partition"], set_=dict(
                     entries_applied=tbl.entries_applied + ex.entries_applied,
                     last_journal_id=case((ex.last_journal_pos > tbl.last_journal_pos, ex.last_journal_id),
                                          else_=tbl.last_journal_id),
                     last_journal_pos=greatest(conn, tbl.last_journal_pos, ex.last_journal_pos),
                     last_batch_at=ex.last_batch_at)))


# ---------------------------------------------------------------- settings

def get_setting(engine: Engine, name: str) -> str | None:
    with engine.connect() as conn:
        return conn.execute(select(LedgerSetting.value).where(LedgerSetting.name == name)).scalar()


def put_setting(engine: Engine, name: str, value: str) -> None:
    with engine.begin() as conn:
        ins = insert_for(conn, LedgerSetting).values(name=name, value=value)
        conn.execute(ins.on_conflict_do_update(index_elements=["name"], set_=dict(value=ins.excluded.value)))


def account_balance_at(conn: Connection, account_id: str, pos: str) -> int:
    """The account's balance in the database as of journal position `pos` (inclusive):
    the sum of its entries and recorded duplicates up to there (see models' identity)."""
    total = 0
    for table in (LedgerEntry, DuplicateEntry):
        total += conn.execute(select(func.coalesce(func.sum(table.amount_minor), 0)).where(
            table.account_id == account_id, table.journal_pos <= pos)).scalar_one()
    return int(total)


