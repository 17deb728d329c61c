"""What a batch adds to the tables kept beside ledger_entries, and the upserts that add
it: `BatchTotals` gathers, one entry at a time while the entries are written, each
account's net change (buckets, last position, status), the daily totals, the hold
entries and the entries that are not money; `upsert_balances`, `upsert_holds`,
`add_daily_totals`, `insert_shift_closes`, `insert_audit_records` and `advance_progress` write them inside the
batch's transaction. Every upsert adds increments and keeps maxima, so batches of one
partition committed out of order by two consumers still add up.
"""
from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Iterable

from sqlalchemy import case, func
from sqlalchemy.engine import Connection

from core.kinds import BOOK_ONLY_KINDS, HOLD_RESOLUTIONS, STATUS_BY_KIND

from .dialect import bulk_insert, greatest, insert_for, least, ms_to_datetime
from .entries import BookEntry
from .members import NON_BALANCE_KINDS
from .models import Account, AuditRecord, DailyTotal, Hold, JournalProgress, OfflineDebt, ShiftClose, journal_pos

_EPOCH_DAY = date(1970, 1, 1)


def by_pos(e: BookEntry) -> str:
    return e.pos


class AccountChange:
    """What one batch adds to one account's row (accounts)."""
    __slots__ = ("delta", "principal", "bonus", "last", "status", "status_pos", "created_ms", "holder", "phone")

    def __init__(self, e: BookEntry):
        self.last, self.created_ms = e, e.occurred_ms
        self.delta = self.principal = self.bonus = 0
        self.status, self.status_pos = "active", ""
        self.holder = self.phone = None


class BatchTotals:
    """A batch's effect on the tables kept beside ledger_entries, gathered one entry at a
    time (`add`) while the entries are written: each account's net change, buckets,
    last position and status; the daily totals; the hold entries; the entries that are
    not money (Z records, cards, settings); the newest position and the count."""

    def __init__(self, partition: int, now: datetime):
        self.partition, self.now = partition, now
        self.accounts: dict[str, AccountChange] = {}
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
            a = self.accounts[e.account_id] = AccountChange(e)
        a.delta += e.amount_minor
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

    def account_rows(self) -> list[dict]:
        """Each account's row: the net change of the balance and its buckets; first time,
        last position, status, name and phone from the batch's entries of the account."""
        now, part = self.now, self.partition
        return [dict(account_id=k, balance_minor=a.delta, status=a.status,
                     created_at=ms_to_datetime(a.created_ms), updated_at=now, journal_partition=part,
                     last_journal_id=a.last.journal_id, last_journal_pos=a.last.pos,
                     status_journal_pos=a.status_pos, holder_name=a.holder,
                     principal_minor=a.principal, bonus_minor=a.bonus, phone=a.phone)
                for k, a in sorted(self.accounts.items())]    # one lock order for every writer: no deadlocks


def add_daily_totals(conn: Connection, partition: int, days: dict[tuple, list[int]]) -> None:
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


def insert_shift_closes(conn: Connection, closes: list[BookEntry], now: datetime) -> None:
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


def insert_audit_records(conn: Connection, audits: list[BookEntry]) -> None:
    """The records of the batch's audit entries (a redelivery changes nothing)."""
    if not audits:
        return
    rows = [dict(txn_id=e.txn_id, username=e.audit["who"][:64], action=e.audit["action"][:80],
                 target=e.audit["target"], summary=e.audit["summary"], address=e.audit["address"][:64],
                 record_json=e.audit["record"], occurred_at=ms_to_datetime(e.occurred_ms),
                 journal_partition=e.partition, journal_id=e.journal_id) for e in audits]
    conn.execute(insert_for(conn, AuditRecord).on_conflict_do_nothing(index_elements=["txn_id"]), rows)


def insert_offline_debts(conn: Connection, entries: list[BookEntry], now: datetime) -> None:
    """The offline-debt changes of the batch's entries (a redelivery changes nothing)."""
    if not entries:
        return
    rows = [dict(txn_id=e.txn_id, account_id=e.account_id, kind=e.kind, debt_delta_minor=e.debt_delta_minor,
                 terminal_id=e.terminal_id or None, cashier_id=e.cashier_id or None,
                 made_at=ms_to_datetime(e.made_at_ms) if e.made_at_ms else None,
                 occurred_at=ms_to_datetime(e.occurred_ms), journal_partition=e.partition,
                 journal_id=e.journal_id, journal_pos=e.pos, applied_at=now)
            for e in entries]
    conn.execute(insert_for(conn, OfflineDebt).on_conflict_do_nothing(index_elements=["txn_id"]), rows)


def upsert_balances(conn: Connection, totals: BatchTotals) -> int:
    """Add the batch's changes to accounts (one upsert: increments and maxima, so batches
    of one partition committed out of order still add up). Answers how many accounts
    changed."""
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


def upsert_holds(conn: Connection, effective: Iterable[BookEntry], now: datetime) -> None:
    """One row per hold touched by the batch. Merged per hold in Python first (one
    statement may not upsert a row twice), then upserted so that any commit order gives
    the same row: hold fields from the newest `hold` entry, the resolution from the
    oldest resolving entry."""
    rows: dict[str, dict] = {}
    for e in sorted(effective, key=by_pos):
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


def advance_progress(conn: Connection, partition: int, totals: BatchTotals, now: datetime) -> None:
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
