"""What the reports compute, straight from the database of record (read-only but for
`resolve_discrepancy`). Times are instants (UTC); `day_bounds` turns a shop-local date
into them. Money is integer minor units; every line keeps principal and bonus apart.

Liability over [start, end): opening (all entries before start) + the period's lines =
closing, each line the sum of its kinds' bucket deltas:

    top-ups (open with an initial amount, credit; by payment method)  principal in
    bonus granted (the bonus part of top-ups)                          bonus in
    spent (deduct, capture)                                            out
    refunds (refund)                                                   in
    card closes (close: principal paid out, bonus forfeited)           out
    corrections (compensate, and txns Redis applied twice: duplicate_entries)  signed
    other (any other kind: transfers, kinds added later)               signed

so the identity holds exactly whatever the kinds; and the check line compares the
closing with the accounts table: sum of accounts' principal_minor / bonus_minor now,
less every entry that occurred at or after `end` (nothing, for a period ending now).
Whole UTC days are summed from `daily_totals` (kept with the entries in one
transaction), the partial days at a period's edges from the entries, so a report costs
the same over a million entries as over a thousand. On PostgreSQL all of it is read in
one REPEATABLE READ snapshot. The liability report also carries each partition's
hash-chain head (seq and the first 16 hex digits, `anchors.head_digits`), printed in
its footer: the paper copy anchors the book's tail.
"""
from __future__ import annotations

import getpass
import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import and_, func, literal, select, union_all
from sqlalchemy.engine import Connection, Engine

from core.kinds import BOOK_ONLY_KINDS, kinds_where

from ..anchors import head_digits
from ..dialect import utcnow
from ..models import Account, DailyTotal, Discrepancy, DuplicateEntry, LedgerEntry, ShiftClose

# the statement's lines, by each kind's `book_section` (core.kinds)
TOPUP_KINDS = kinds_where(book_section="topup")
SPEND_KINDS = kinds_where(book_section="spend")
REFUND_KINDS = kinds_where(book_section="refund")
CLOSE_KINDS = kinds_where(book_section="close")
CORRECTION_KINDS = kinds_where(book_section="correction")
METHODS = ("cash", "wechat", "alipay", "bank_card", "other")
UNSPECIFIED = "unspecified"


class ReportError(ValueError):
    """A report was asked for wrongly (a field and the reason), e.g. --from after --to."""

    def __init__(self, field_name: str, reason: str):
        self.field = field_name
        self.reason = reason
        super().__init__(f"{field_name}: {reason}")


def shop_zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ReportError("shop_timezone", f"{name!r} is not a time zone (e.g. Asia/Shanghai)") from None


# the days a report may name: the book holds nothing before 1970, and a day near year 9999
# has no "next day" for its end bound
FIRST_REPORT_DATE = date(1970, 1, 1)
LAST_REPORT_DATE = date(9998, 12, 31)


def parse_date(text: str, field_name: str) -> date:
    try:
        day = date.fromisoformat(text)
    except (TypeError, ValueError):
        raise ReportError(field_name, f"{text!r} is not a date YYYY-MM-DD") from None
    if not FIRST_REPORT_DATE <= day <= LAST_REPORT_DATE:
        raise ReportError(field_name, f"{text} is outside {FIRST_REPORT_DATE}..{LAST_REPORT_DATE}")
    return day


def day_bounds(first: date, last: date, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """[start of `first`, start of the day after `last`) in the shop's zone, as UTC."""
    if last < first:
        raise ReportError("to", f"{last} is before {first}")
    start = datetime.combine(first, time(0), zone).astimezone(timezone.utc)
    end = datetime.combine(last + timedelta(days=1), time(0), zone).astimezone(timezone.utc)
    return start, end




def snapshot(engine: Engine):
    """A connection whose reads all see one state of the database (PostgreSQL: REPEATABLE
    READ; SQLite: the daemon's writes are serialised, reports read what is committed)."""
    if engine.dialect.name == "postgresql":
        return engine.connect().execution_options(isolation_level="REPEATABLE READ")
    return engine.connect()


# ---------------------------------------------------------------- liability

@dataclass
class Line:
    key: str                     # label key (render.LABELS), e.g. "topup", "spent"
    principal_minor: int = 0     # as shown: inflows and outflows positive, signed lines signed
    bonus_minor: int = 0
    detail: str = ""             # e.g. the payment method of a top-up line
    direction: int = 1           # +1 adds to the liability, -1 takes from it, 0 signed as shown

    @property
    def total_minor(self) -> int:
        return self.principal_minor + self.bonus_minor

    def signed(self) -> tuple[int, int]:
        d = self.direction or 1
        return d * self.principal_minor, d * self.bonus_minor


@dataclass
class Liability:
    start: datetime
    end: datetime
    opening: tuple[int, int]                 # (principal, bonus)
    lines: list[Line]
    closing: tuple[int, int]
    accounts_now: tuple[int, int]            # sum of accounts' buckets in the database
    after_end: tuple[int, int]               # entries that occurred at or after `end`
    entries: int                             # entries in the period
    # each partition's hash-chain head when the report was made (anchors.head_digits):
    # printed, so a later deletion of the book's tail shows against the paper
    chain_heads: list[dict] = field(default_factory=list)

    @property
    def balances_at_end(self) -> tuple[int, int]:
        return (self.accounts_now[0] - self.after_end[0], self.accounts_now[1] - self.after_end[1])

    @property
    def balanced(self) -> bool:
        """opening + lines == closing (by construction) and closing == the accounts."""
        p, b = self.opening
        for line in self.lines:
            dp, db = line.signed()
            p, b = p + dp, b + db
        return (p, b) == self.closing == self.balances_at_end

    def as_dict(self) -> dict:
        return {"start": self.start.isoformat(), "end": self.end.isoformat(),
                "opening": {"principal_minor": self.opening[0], "bonus_minor": self.opening[1]},
                "lines": [dict(key=l.key, detail=l.detail, principal_minor=l.principal_minor,
                               bonus_minor=l.bonus_minor, direction=l.direction) for l in self.lines],
                "closing": {"principal_minor": self.closing[0], "bonus_minor": self.closing[1]},
                "balances_at_end": {"principal_minor": self.balances_at_end[0],
                                    "bonus_minor": self.balances_at_end[1]},
                "entries": self.entries, "balanced": self.balanced, "chain_heads": self.chain_heads}


def _day_start(d: date) -> datetime:
    return datetime.combine(d, time(0), timezone.utc)


def _raw_groups(conn: Connection, out: dict, a: datetime | None, b: datetime | None) -> None:
    for table, dup in ((LedgerEntry, False), (DuplicateEntry, True)):
        conds = [table.kind.notin_(BOOK_ONLY_KINDS)]
        if a is not None:
            conds.append(table.occurred_at >= a)
        if b is not None:
            conds.append(table.occurred_at < b)
        q = (select(table.kind, table.method, func.sum(table.principal_delta_minor),
                    func.sum(table.bonus_delta_minor), func.count()).where(*conds)
             .group_by(table.kind, table.method))
        for kind, method, p, bd, n in conn.execute(q):
            t = out[(kind, method or "", dup)]
            t[0], t[1], t[2] = t[0] + int(p), t[1] + int(bd), t[2] + int(n)


def grouped_sums(conn: Connection, a: datetime | None, b: datetime | None) -> dict[tuple, list[int]]:
    """(kind, method, duplicate) -> [principal, bonus, entries] over a <= occurred_at < b
    (None: unbounded): whole UTC days from daily_totals, the partial days at the edges
    from the entries themselves (an index range on occurred_at)."""
    out: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    first = None                                                         # the first whole day
    if a is not None:
        first = a.astimezone(timezone.utc).date()
        if _day_start(first) < a:
            first += timedelta(days=1)
    stop = None if b is None else b.astimezone(timezone.utc).date()      # whole days end before this one
    if first is not None and stop is not None and first >= stop:
        _raw_groups(conn, out, a, b)
        return out
    conds = [DailyTotal.kind.notin_(BOOK_ONLY_KINDS)]
    if first is not None:
        conds.append(DailyTotal.day >= first)
    if stop is not None:
        conds.append(DailyTotal.day < stop)
    q = (select(DailyTotal.kind, DailyTotal.method, DailyTotal.duplicate, func.sum(DailyTotal.principal_minor),
                func.sum(DailyTotal.bonus_minor), func.sum(DailyTotal.entries)).where(*conds)
         .group_by(DailyTotal.kind, DailyTotal.method, DailyTotal.duplicate))
    for kind, method, dup, p, bd, n in conn.execute(q):
        t = out[(kind, method, bool(dup))]
        t[0], t[1], t[2] = t[0] + int(p), t[1] + int(bd), t[2] + int(n)
    if a is not None and a < _day_start(first):
        _raw_groups(conn, out, a, _day_start(first))
    if b is not None and _day_start(stop) < b:
        _raw_groups(conn, out, _day_start(stop), b)
    return out


def _bucket_totals(groups: dict) -> tuple[int, int]:
    return (sum(v[0] for v in groups.values()), sum(v[1] for v in groups.values()))


def liability(engine: Engine, start: datetime, end: datetime) -> Liability:
    with snapshot(engine) as conn:
        opening = _bucket_totals(grouped_sums(conn, None, start))
        after_end = _bucket_totals(grouped_sums(conn, end, None))
        period = grouped_sums(conn, start, end)
        accounts_now = tuple(int(x) for x in conn.execute(select(
            func.coalesce(func.sum(Account.principal_minor), 0),
            func.coalesce(func.sum(Account.bonus_minor), 0))).one())
        heads = head_digits(conn)
    groups = [(kind, method or None, v[0], v[1], dup) for (kind, method, dup), v in period.items()]
    n = sum(v[2] for v in period.values())
    topups: dict[str, int] = defaultdict(int)
    bonus_granted = spent_p = spent_b = refund_p = refund_b = paid_out = forfeited = 0
    corr_p = corr_b = other_p = other_b = 0
    for kind, method, p, b, is_dup in groups:
        if is_dup or kind in CORRECTION_KINDS:
            corr_p, corr_b = corr_p + p, corr_b + b
        elif kind in TOPUP_KINDS:
            topups[method or UNSPECIFIED] += p
            bonus_granted += b
        elif kind in SPEND_KINDS:
            spent_p, spent_b = spent_p - p, spent_b - b
        elif kind in REFUND_KINDS:
            refund_p, refund_b = refund_p + p, refund_b + b
        elif kind in CLOSE_KINDS:
            paid_out, forfeited = paid_out - p, forfeited - b
        else:
            other_p, other_b = other_p + p, other_b + b
    lines = [Line("topup", topups.get(m, 0), 0, m) for m in (*METHODS, UNSPECIFIED)
             if m in METHODS or topups.get(m)]
    lines += [Line("topup", topups[m], 0, m) for m in sorted(topups) if m not in METHODS and m != UNSPECIFIED]
    lines += [Line("bonus_granted", 0, bonus_granted),
              Line("spent", spent_p, spent_b, direction=-1),
              Line("refunds", refund_p, refund_b),
              Line("closes", paid_out, forfeited, direction=-1),
              Line("corrections", corr_p, corr_b, direction=0),
              Line("other", other_p, other_b, direction=0)]
    p, b = opening
    for line in lines:
        dp, db = line.signed()
        p, b = p + dp, b + db
    return Liability(start, end, opening, lines, (p, b), accounts_now, after_end, n, heads)


# ---------------------------------------------------------------- statement

@dataclass
class Statement:
    account_id: str
    holder_name: str | None
    status: str | None
    start: datetime | None
    end: datetime | None
    opening_minor: int
    rows: list[dict]
    closing_minor: int
    balance_minor: int | None            # the account's balance in the database now

    def as_dict(self) -> dict:
        return {"account_id": self.account_id, "holder_name": self.holder_name, "status": self.status,
                "start": self.start and self.start.isoformat(), "end": self.end and self.end.isoformat(),
                "opening_minor": self.opening_minor, "closing_minor": self.closing_minor,
                "balance_minor": self.balance_minor,
                "rows": [{k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in r.items()}
                         for r in self.rows]}


def statement(engine: Engine, account_id: str, start: datetime | None = None, end: datetime | None = None,
              limit: int | None = None) -> Statement:
    """Every entry of the account in [start, end) in journal order (duplicates that
    Redis applied twice included, marked), with the balance after each as Redis
    reported it. Raises ReportError when the database has no such account."""
    with snapshot(engine) as conn:
        acct = conn.execute(select(Account).where(Account.account_id == account_id)).first()
        if acct is None:
            raise ReportError("account", f"no account {account_id!r} in the database")
        parts = []
        for table, dup in ((LedgerEntry, False), (DuplicateEntry, True)):
            conds = [table.account_id == account_id]
            if start is not None:
                conds.append(table.occurred_at >= start)
            if end is not None:
                conds.append(table.occurred_at < end)
            parts.append(select(table.journal_pos, table.occurred_at, table.txn_id, table.kind, table.amount_minor,
                                table.principal_delta_minor, table.bonus_delta_minor, table.method,
                                table.balance_after_minor, table.terminal_id, table.cashier_id,
                                table.original_txn_id, literal(dup).label("duplicate")).where(and_(*conds)))
        q = union_all(*parts).order_by("journal_pos")
        if limit:
            q = q.limit(limit)
        result = conn.execute(q)
        keys = list(result.keys())
        rows = [dict(zip(keys, r)) for r in result]
        opening = 0
        if start is not None:
            for table in (LedgerEntry, DuplicateEntry):
                opening += int(conn.execute(select(func.coalesce(func.sum(table.amount_minor), 0)).where(
                    table.account_id == account_id, table.occurred_at < start)).scalar_one())
    for r in rows:
        r.pop("journal_pos")
        r["duplicate"] = bool(r["duplicate"])
        if r["occurred_at"].tzinfo is None:
            r["occurred_at"] = r["occurred_at"].replace(tzinfo=timezone.utc)
    closing = opening + sum(r["amount_minor"] for r in rows)
    return Statement(account_id, acct.holder_name, acct.status, start, end, opening, rows, closing, acct.balance_minor)


def search_accounts(engine: Engine, text: str, limit: int = 20) -> list[dict]:
    """Accounts whose id or holder name contains `text` (case-insensitive)."""
    pattern = f"%{text.strip()}%"
    with engine.connect() as conn:
        rows = conn.execute(select(Account.account_id, Account.holder_name, Account.balance_minor,
                                   Account.principal_minor, Account.bonus_minor, Account.status)
                            .where(Account.account_id.ilike(pattern) | Account.holder_name.ilike(pattern))
                            .order_by(Account.account_id).limit(limit))
        return [dict(r._mapping) for r in rows]


# ---------------------------------------------------------------- shifts, discrepancies

def shifts(engine: Engine, start: datetime, end: datetime) -> list[dict]:
    with engine.connect() as conn:
        rows = conn.execute(select(ShiftClose).where(ShiftClose.closed_at >= start, ShiftClose.closed_at < end)
                            .order_by(ShiftClose.terminal_id, ShiftClose.shift_no, ShiftClose.closed_at))
        out = []
        for r in rows:
            d = {c: getattr(r, c) for c in ("txn_id", "terminal_id", "shift_no", "cashier_id", "closed_by",
                                             "opened_at", "closed_at", "sales_count", "sales_minor",
                                             "refunds_count", "refunds_minor", "topups_count", "topups_minor")}
            for k in ("opened_at", "closed_at"):
                if d[k] is not None and d[k].tzinfo is None:
                    d[k] = d[k].replace(tzinfo=timezone.utc)
            d["record"] = json.loads(r.record_json)
            out.append(d)
        return out


def discrepancies(engine: Engine, *, include_resolved: bool = False, limit: int = 200) -> list[dict]:
    with engine.connect() as conn:
        q = select(Discrepancy).order_by(Discrepancy.id.desc()).limit(limit)
        if not include_resolved:
            q = q.where(Discrepancy.status == "open")
        out = []
        for d in conn.execute(q):
            row = {c: getattr(d, c) for c in ("id", "kind", "account_id", "txn_id", "journal_partition",
                                               "journal_id", "redis_balance_minor", "db_balance_minor", "cause",
                                               "status", "found_at", "resolved_at", "resolution_note",
                                               "resolved_by")}
            for k in ("found_at", "resolved_at"):
                if row[k] is not None and row[k].tzinfo is None:
                    row[k] = row[k].replace(tzinfo=timezone.utc)
            try:
                row["evidence"] = json.loads(d.evidence_json)
            except ValueError:
                row["evidence"] = d.evidence_json
            out.append(row)
        return out


def resolve_discrepancy(engine: Engine, discrepancy_id: int, note: str, resolved_by: str | None = None) -> dict:
    """Close one open discrepancy with a person's note (status 'resolved'). Raises
    ReportError naming `id` (no such / not open) or `note` (empty)."""
    note = (note or "").strip()
    if not note:
        raise ReportError("note", "say what was found and done (it stays with the discrepancy)")
    if len(note) > 2000:
        raise ReportError("note", "longer than 2000 characters")
    by = (resolved_by or getpass.getuser() or "unknown")[:64]
    now = utcnow()
    with engine.begin() as conn:
        row = conn.execute(select(Discrepancy.status).where(Discrepancy.id == discrepancy_id)).first()
        if row is None:
            raise ReportError("id", f"no discrepancy #{discrepancy_id}")
        if row.status != "open":
            raise ReportError("id", f"discrepancy #{discrepancy_id} is {row.status}, not open")
        conn.execute(Discrepancy.__table__.update().where(Discrepancy.id == discrepancy_id,
                                                          Discrepancy.status == "open")
                     .values(status="resolved", resolved_at=now, resolution_note=note, resolved_by=by))
    return {"id": discrepancy_id, "status": "resolved", "resolved_by": by, "resolved_at": now.isoformat(),
            "note": note}
