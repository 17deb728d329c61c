"""Writing journal entries into the database of record, one transaction per batch.

`apply_batch` writes a batch of one partition's stream entries. On PostgreSQL it first
COPYs the new rows, chained (`chain`: chain_seq and row_hash) after the partition's
head, which the batch locks first, straight into ledger_entries (`bulk.copy_rows`); a
row already there (a redelivery, a txn id that Redis applied twice) fails the COPY on a
unique index and the batch is redone the careful way, which SQLite always takes: which
txn ids are stored first, then one ``INSERT ... ON CONFLICT DO NOTHING`` of the new ones
(see `dialect.BulkInsert`). So a redelivered entry changes nothing, a txn id applied
twice is refused by the unique `txn_id` and recorded as a duplicate, and two consumers'
batches of one partition are chained one after the other (`BookChain`). It then adds
each account's net change with one multi-row upsert per table (`totals`). Nothing here
talks to Redis: the caller acknowledges the entries only after this function's COMMIT
returned.

The entries are parsed by `entries`, the SQL that differs between PostgreSQL and SQLite
is in `dialect`; the names other modules have always imported from here (BookEntry,
parse_entries, LEDGER_COLUMNS, ledger_rows, utcnow, ms_to_datetime, insert_for,
BulkInsert, bulk_insert, greatest, least, BOOK_ONLY_KINDS, STATUS_BY_KIND,
HOLD_RESOLUTIONS) are still importable from this module.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Sequence

from sqlalchemy import ARRAY, bindparam, func, select
from sqlalchemy.engine import Connection, Engine

from core.kinds import BOOK_ONLY_KINDS, HOLD_RESOLUTIONS, STATUS_BY_KIND

from . import bulk, chain
from .dialect import BulkInsert, bulk_insert, greatest, insert_for, least, ms_to_datetime, utcnow
from .entries import SHIFT_TOTALS, LEDGER_COLUMNS, BookEntry, ledger_row, ledger_rows, ledger_values, parse_entries
from .members import NON_BALANCE_KINDS, apply_member_entries
from .sale_tenders import insert_tenders
from .models import ChainHead, Discrepancy, DuplicateEntry, LedgerEntry, LedgerSetting, QuarantinedEntry
from .totals import (BatchTotals, add_daily_totals, advance_progress, by_pos, insert_audit_records,
                     insert_offline_debts, insert_shift_closes, upsert_balances, upsert_holds)

__all__ = ["BOOK_CHAIN", "BOOK_ONLY_KINDS", "HOLD_RESOLUTIONS", "LEDGER_COLUMNS", "SHIFT_TOTALS", "STATUS_BY_KIND",
           "BatchResult", "BookChain", "BookEntry", "BulkInsert", "account_balance_at", "apply_batch",
           "bulk_insert", "get_setting", "greatest", "insert_for", "least", "ledger_row", "ledger_rows",
           "ledger_values", "ms_to_datetime", "parse_entries", "put_setting", "utcnow"]

log = logging.getLogger(__name__)


@dataclass
class BatchResult:
    applied: int = 0             # new rows in ledger_entries
    redelivered: int = 0         # already in the database from an earlier delivery
    duplicates: list[dict] = field(default_factory=list)   # new duplicate_entries rows
    quarantined: int = 0
    accounts_changed: int = 0
    chain_head: tuple[int, str] | None = None   # (seq, row hash) the batch left, when it chained rows


class _ChainRace(Exception):
    """A txn id this batch was about to chain was inserted meanwhile by another
    partition's batch (a txn id reused across partitions), or, on the fast path, is
    already in the book (a redelivery): the batch is chained anew, checking first."""


CHAIN_RACE_ATTEMPTS = 5


class BookChain:
    """How a batch's new rows join their partition's hash chain (reconcile_service.chain):
    the head is locked and read first (`lock_head`), each row is linked as it is built
    (`linker`), the new head is stored (`save_head`), and a row that another batch
    inserted meanwhile sends the batch round again (`raced`). `BOOK_CHAIN` is the one
    the drain uses; the benchmark measures the drain without the chain by replacing it
    in its own process (bench/unchained_service.py)."""

    def lock_head(self, conn: Connection, partition: int, now: datetime) -> tuple[int, str]:
        return _lock_chain_head(conn, partition, now)

    def linker(self, head: tuple[int, str]) -> Callable[[list], None]:
        """Chains rows given as lists in LEDGER_COLUMNS order; `seq` / `last_hash` is the new head."""
        return chain.Linker(LEDGER_COLUMNS, *head)

    def save_head(self, conn: Connection, partition: int, link, now: datetime) -> None:
        conn.execute(ChainHead.__table__.update().where(ChainHead.journal_partition == partition)
                     .values(last_seq=link.seq, last_hash=link.last_hash, updated_at=now))

    def raced(self) -> Exception:
        """What the batch raises when a row it meant to insert was inserted meanwhile."""
        return _ChainRace()


BOOK_CHAIN = BookChain()


def apply_batch(engine: Engine, partition: int, raw: Sequence[tuple[str, dict]],
                book_chain: BookChain | None = None) -> BatchResult:
    """Apply one batch of stream entries of `partition` in one database transaction.
    `book_chain` is BOOK_CHAIN unless given.

    On PostgreSQL the first attempt assumes that every entry is new (the drain's common
    case) and COPYs the chained rows straight into ledger_entries; a row already there
    (a redelivery, or a txn id Redis applied twice) makes the COPY fail on a unique
    index, and the batch is applied again the careful way: which txn ids are stored
    first, then only the new ones chained and inserted."""
    book_chain = BOOK_CHAIN if book_chain is None else book_chain
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
                    _apply_entries(conn, partition, entries, result, now, check_first, book_chain)
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


def _apply_entries(conn: Connection, partition: int, entries: list[BookEntry], result: BatchResult,
                   now: datetime, check_first: bool, book_chain: BookChain) -> None:
    entries = sorted(entries, key=by_pos)
    # Within one batch the first (oldest) occurrence of a txn id goes to ledger_entries;
    # later ones are duplicate candidates like any conflicting row.
    first: dict[str, BookEntry] = {}
    candidates: list[BookEntry] = []
    for e in entries:
        if e.txn_id in first:
            candidates.append(e)
        else:
            first[e.txn_id] = e
    totals = BatchTotals(partition, now)
    effective, stored, result.chain_head = _insert_entries(
        conn, partition, first, now, totals, book_chain, check_first=check_first or conn.dialect.name != "postgresql")
    result.applied = len(effective)
    new_entries = list(effective)
    debts = [e for e in effective if e.debt_delta_minor]     # the new rows' (a duplicate's never counts)
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
            result.accounts_changed = upsert_balances(conn, totals)
            upsert_holds(conn, totals.holds, now)
        insert_shift_closes(conn, [e for e in totals.others if e.kind == "shift_close"], now)
        insert_tenders(conn, new_entries)
        insert_audit_records(conn, [e for e in totals.others if e.kind == "audit"])
        insert_offline_debts(conn, debts, now)
        if any(e.kind in NON_BALANCE_KINDS for e in totals.others):
            apply_member_entries(conn, totals.others, now)
        add_daily_totals(conn, partition, totals.days)
        advance_progress(conn, partition, totals, now)


def _insert_entries(conn: Connection, partition: int, first: dict[str, BookEntry], now: datetime,
                    totals: BatchTotals, book_chain: BookChain, *,
                    check_first: bool) -> tuple[list[BookEntry], dict, tuple[int, str] | None]:
    """Insert the batch's first occurrences that are new, chained after the partition's
    head (locked first), and add each to `totals`. Answers (the new entries, {txn id:
    position} of those already stored). check_first=False (PostgreSQL's fast path):
    COPY them all straight into ledger_entries, raising _ChainRace when one is already
    there; each row is built, hashed and counted while the COPY streams, so PostgreSQL
    writes the rows already sent while Python builds the next. The third answer is the
    partition's new chain head (None when no row was chained), for its anchor."""
    head = book_chain.lock_head(conn, partition, now)
    stored = _stored_positions(conn, list(first)) if check_first else {}
    effective = [e for e in first.values() if e.txn_id not in stored] if stored else list(first.values())
    if not effective:
        return effective, stored, None
    link = book_chain.linker(head)
    if not check_first:
        import psycopg.errors      # PostgreSQL's driver: only on PostgreSQL's path
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
            raise book_chain.raced()
    book_chain.save_head(conn, partition, link, now)
    new_head = getattr(link, "seq", None), getattr(link, "last_hash", None)
    return effective, stored, new_head if new_head[0] and new_head[1] else None


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
            row = ledger_row(e, now)
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


