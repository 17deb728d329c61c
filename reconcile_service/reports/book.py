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
the same over a million entries as over a thousand. `liability_series` makes the report
of consecutive periods at once (the page's charts; `liability` is its one-period case)
and can keep the partial days' sums in a memo while their daily totals stay the same.
Beside the liability: a period's sums per terminal, cashier or promotion (`breakdown`),
its biggest spenders (`top_members`), the tills in the book (`tills_seen`). On PostgreSQL all of it is read in
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
from ..models import Account, DailyTotal, Discrepancy, DuplicateEntry, LedgerEntry, OfflineDebt, ShiftClose
from ..sale_tenders import tender_sums

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
    # split-tender sales' other tenders in the period, net of what was given back, and the
    # change ('change'): money the shop took besides the card, never stored value (issue 31)
    other_tenders: dict = field(default_factory=dict)

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
    a, b = (x and x.astimezone(timezone.utc) for x in (a, b))      # SQLite compares the text, written in UTC
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


def section_of(kind: str, duplicate: bool) -> str:
    """The liability line an entry counts in (the `Line.key`s; top-ups' bonus is the
    separate line "bonus_granted"): a duplicate is a correction whatever its kind."""
    if duplicate or kind in CORRECTION_KINDS:
        return "corrections"
    if kind in TOPUP_KINDS:
        return "topup"
    if kind in SPEND_KINDS:
        return "spent"
    if kind in REFUND_KINDS:
        return "refunds"
    if kind in CLOSE_KINDS:
        return "closes"
    return "other"


def _lines(period: dict, opening: tuple[int, int]) -> tuple[list[Line], tuple[int, int], int]:
    """A period's (kind, method, duplicate) sums as the statement's lines, the closing they
    lead to from `opening`, and the period's entries."""
    topups: dict[str, int] = defaultdict(int)
    sums = {k: [0, 0] for k in ("spent", "refunds", "closes", "corrections", "other", "spent_sale_card")}
    bonus_granted = 0
    for (kind, method, is_dup), (p, b, _n) in period.items():
        section = section_of(kind, is_dup)
        if section == "spent" and kind == "sale":
            section = "spent_sale_card"       # the card legs of split sales apart (issue 31)
        if section == "topup":
            topups[method or UNSPECIFIED] += p
            bonus_granted += b
        else:
            sums[section][0] += p
            sums[section][1] += b
    lines = [Line("topup", topups.get(m, 0), 0, m) for m in (*METHODS, UNSPECIFIED)
             if m in METHODS or topups.get(m)]
    lines += [Line("topup", topups[m], 0, m) for m in sorted(topups) if m not in METHODS and m != UNSPECIFIED]
    lines += [Line("bonus_granted", 0, bonus_granted),
              Line("spent", -sums["spent"][0], -sums["spent"][1], direction=-1),
              *([Line("spent_sale_card", -sums["spent_sale_card"][0], -sums["spent_sale_card"][1], direction=-1)]
                if sums["spent_sale_card"] != [0, 0] else []),
              Line("refunds", *sums["refunds"]),
              Line("closes", -sums["closes"][0], -sums["closes"][1], direction=-1),
              Line("corrections", *sums["corrections"], direction=0),
              Line("other", *sums["other"], direction=0)]
    p, b = opening
    for line in lines:
        dp, db = line.signed()
        p, b = p + dp, b + db
    return lines, (p, b), sum(v[2] for v in period.values())


def liability(engine: Engine, start: datetime, end: datetime) -> Liability:
    """The liability report over [start, end): `liability_series` of that one period, so a
    chart's bar and the report of the same days are one computation."""
    rep = liability_series(engine, [start, end])[0]
    with engine.connect() as conn:
        rep.other_tenders = {m: a for m, a in tender_sums(conn, start, end).items() if a}
    return rep


def liability_series(engine: Engine, bounds: list[datetime], memo: dict | None = None) -> list[Liability]:
    """The liability report of each period [bounds[i], bounds[i+1]) (bounds increasing),
    read in one snapshot: each one's opening is the previous one's closing. `memo` (a
    dict the caller keeps, e.g. the back-office page's) spares re-reading entries of UTC
    days whose daily totals did not change since (see `grouped_series`)."""
    with snapshot(engine) as conn:
        before, buckets, after = grouped_series(conn, bounds, memo)
        accounts_now = tuple(int(x) for x in conn.execute(select(
            func.coalesce(func.sum(Account.principal_minor), 0),
            func.coalesce(func.sum(Account.bonus_minor), 0))).one())
        heads = head_digits(conn)
    totals = [_bucket_totals(g) for g in buckets]
    after_end = list(_bucket_totals(after))
    suffix = []                                  # entries at or after each period's end
    for p, b in reversed(totals):
        suffix.append(tuple(after_end))
        after_end[0], after_end[1] = after_end[0] + p, after_end[1] + b
    suffix.reverse()
    out, opening = [], _bucket_totals(before)
    for i, groups in enumerate(buckets):
        lines, closing, n = _lines(groups, opening)
        out.append(Liability(bounds[i], bounds[i + 1], opening, lines, closing, accounts_now, suffix[i], n, heads))
        opening = closing
    return out


# ---------------------------------------------------------------- series (the page's charts)
#
# A period's sums are whole UTC days from daily_totals plus the pieces of the UTC days that
# a period's bound cuts. Of the pieces of one cut day, all but the longest are read from
# the entries (an index range on occurred_at) and the longest is the day's total less
# them: for a shop east of Greenwich that is the night side of the cut. A `memo` keeps
# each piece's sums with its UTC day's daily totals ("fingerprint"): every entry of that
# day changes them in the same transaction (the book is append-only), so an unchanged
# fingerprint means unchanged sums and the entries are not read again.

MEMO_LIMIT = 20_000


def _utc_date(ts: datetime) -> date:
    return ts.astimezone(timezone.utc).date()


def _utc_bounds(bounds: list[datetime]) -> list[datetime]:
    """The bounds in UTC (SQLite compares the text of a time, so every bound the entries
    are compared with must be written in UTC, as they are), checked to increase."""
    bounds = [b.astimezone(timezone.utc) for b in bounds]
    if len(bounds) < 2 or any(b <= a for a, b in zip(bounds, bounds[1:])):
        raise ReportError("period", "the bounds of the periods must increase")
    return bounds


def _pieces(bounds: list[datetime], days) -> dict[date, list[tuple[datetime, datetime, int]]]:
    """Each of the UTC `days` cut at the bounds: (start, end, bucket) where bucket -1 is
    before bounds[0], len(bounds) - 1 at or after bounds[-1]."""
    from bisect import bisect_right
    out = {}
    for d in days:
        a, z = _day_start(d), _day_start(d + timedelta(days=1))
        edges = [a] + [x for x in bounds if a < x < z] + [z]
        out[d] = [(x, y, bisect_right(bounds, x) - 1) for x, y in zip(edges, edges[1:])]
    return out


def _day_groups(conn: Connection, first: date, last: date, only: list[date] | None = None
                ) -> dict[date, dict[tuple, list[int]]]:
    """The daily totals of the UTC days first..last that have entries (or of the days
    `only`), by day."""
    q = (select(DailyTotal.day, DailyTotal.kind, DailyTotal.method, DailyTotal.duplicate,
                func.sum(DailyTotal.principal_minor), func.sum(DailyTotal.bonus_minor), func.sum(DailyTotal.entries))
         .where(DailyTotal.kind.notin_(BOOK_ONLY_KINDS),
                *((DailyTotal.day.in_(only),) if only is not None else (DailyTotal.day >= first, DailyTotal.day <= last)))
         .group_by(DailyTotal.day, DailyTotal.kind, DailyTotal.method, DailyTotal.duplicate))
    out: dict[date, dict] = defaultdict(dict)
    for day, kind, method, dup, p, b, n in conn.execute(q):
        if isinstance(day, str):                       # SQLite hands back text
            day = date.fromisoformat(day)
        out[day][(kind, method or "", bool(dup))] = [int(p), int(b), int(n)]
    return out


def _whole_days(conn: Connection, ranges: list[tuple[date | None, date | None]]) -> list[dict]:
    """The daily totals summed over each range of whole UTC days [lo, hi) (None: open),
    in one query: [(kind, method, duplicate) -> [principal, bonus, entries]] per range."""
    from sqlalchemy import case, literal_column
    out = [defaultdict(lambda: [0, 0, 0]) for _ in ranges]
    conds = [and_(*((DailyTotal.day >= lo,) if lo else ()), *((DailyTotal.day < hi,) if hi else ()))
             for lo, hi in ranges]
    bucket = case(*[(c, i) for i, c in enumerate(conds)]).label("bucket")
    q = (select(bucket, DailyTotal.kind, DailyTotal.method, DailyTotal.duplicate,
                func.sum(DailyTotal.principal_minor), func.sum(DailyTotal.bonus_minor), func.sum(DailyTotal.entries))
         .where(DailyTotal.kind.notin_(BOOK_ONLY_KINDS))
         .group_by(literal_column("bucket"), DailyTotal.kind, DailyTotal.method, DailyTotal.duplicate))
    for i, kind, method, dup, p, b, n in conn.execute(q):
        if i is not None:
            out[i][(kind, method or "", bool(dup))] = [int(p), int(b), int(n)]
    return out


def _fingerprint(groups: dict) -> tuple:
    return tuple(sorted((k, tuple(v)) for k, v in groups.items()))


def _read_pieces(conn: Connection, spans: list[tuple[datetime, datetime]], key=None) -> list[dict]:
    """Sums of the entries in each span, by (kind, method, duplicate), or by (key, kind,
    method, duplicate) when `key(table)` gives a column to group by as well. One query per
    table for up to 100 spans."""
    from sqlalchemy import case, literal_column, or_
    out = [defaultdict(lambda: [0, 0, 0]) for _ in spans]
    for at in range(0, len(spans), 100):
        chunk = spans[at:at + 100]
        for table, dup in ((LedgerEntry, False), (DuplicateEntry, True)):
            within = [and_(table.occurred_at >= a, table.occurred_at < b) for a, b in chunk]
            piece = case(*[(w, i) for i, w in enumerate(within)]).label("piece")
            cols = [piece] + ([key(table).label("k")] if key else []) + [table.kind, table.method]
            groups = [literal_column("piece")] + ([literal_column("k")] if key else []) + [table.kind, table.method]
            q = (select(*cols, func.sum(table.principal_delta_minor), func.sum(table.bonus_delta_minor), func.count())
                 .where(table.kind.notin_(BOOK_ONLY_KINDS), or_(*within)).group_by(*groups))
            for row in conn.execute(q):
                i, rest = row[0], row[1:]
                k = (rest[0],) if key else ()
                kind, method, p, b, n = rest[-5:]
                t = out[at + i][(*k, kind, method or "", dup)]
                t[0], t[1], t[2] = t[0] + int(p), t[1] + int(b), t[2] + int(n)
    return out


def _cached_pieces(conn: Connection, wanted: list[tuple[datetime, datetime, tuple]], memo: dict | None,
                   tag: str = "", key=None) -> list[dict]:
    """`_read_pieces` of (start, end, fingerprint) spans, through `memo` when given."""
    results: list = [None] * len(wanted)
    missing = []
    for i, (a, b, fp) in enumerate(wanted):
        hit = memo.get((tag, a, b)) if memo is not None else None
        if hit is not None and hit[0] == fp:
            results[i] = hit[1]
        else:
            missing.append(i)
    if missing:
        fresh = _read_pieces(conn, [wanted[i][:2] for i in missing], key)
        if memo is not None and len(memo) > MEMO_LIMIT:
            memo.clear()
        for i, groups in zip(missing, fresh):
            results[i] = groups
            if memo is not None:
                memo[(tag, wanted[i][0], wanted[i][1])] = (wanted[i][2], dict(groups))
    return results


def grouped_series(conn: Connection, bounds: list[datetime], memo: dict | None = None
                   ) -> tuple[dict, list[dict], dict]:
    """(everything before bounds[0], [each [bounds[i], bounds[i+1])], everything at or
    after bounds[-1]) as `grouped_sums` gives them: (kind, method, duplicate) ->
    [principal, bonus, entries]."""
    bounds = _utc_bounds(bounds)
    n = len(bounds) - 1
    # the UTC days a bound cuts (one not at midnight): read apart; the others are whole
    cut = sorted({_utc_date(b) for b in bounds if b != _day_start(_utc_date(b))})
    days = _day_groups(conn, None, None, only=cut) if cut else {}
    pieces = _pieces(bounds, cut)
    buckets: list[dict] = [defaultdict(lambda: [0, 0, 0]) for _ in range(n + 2)]    # [-1] before, [n] after

    def add(bucket: int, groups: dict, sign: int = 1) -> None:
        out = buckets[bucket]
        for k, v in groups.items():
            t = out[k]
            t[0], t[1], t[2] = t[0] + sign * v[0], t[1] + sign * v[1], t[2] + sign * v[2]

    wanted, owners, rest = [], [], []
    for d, ps in pieces.items():
        total = days.get(d)
        if not total:
            continue
        if len(ps) == 1:
            add(ps[0][2], total)
            continue
        longest = max(range(len(ps)), key=lambda i: ps[i][1] - ps[i][0])
        fp = _fingerprint(total)
        add(ps[longest][2], total)
        for i, (a, b, bucket) in enumerate(ps):
            if i != longest:
                wanted.append((a, b, fp))
                owners.append((bucket, ps[longest][2]))
    for (bucket, longest_bucket), groups in zip(owners, _cached_pieces(conn, wanted, memo)):
        add(bucket, groups)
        add(longest_bucket, groups, -1)
    # whole days: from the first day that starts at or after a bound to the day of the next
    # bound (which ends at or before it); a cut day is in none of these ranges
    starts = [_utc_date(b) if b == _day_start(_utc_date(b)) else _utc_date(b) + timedelta(days=1) for b in bounds]
    stops = [_utc_date(b) for b in bounds]
    ranges = [(None, stops[0])] + [(starts[i], stops[i + 1]) for i in range(n)] + [(starts[n], None)]
    for i, groups in enumerate(_whole_days(conn, ranges)):
        add(i - 1, groups)                   # range 0 is before bounds[0]: bucket -1
    clean = lambda g: {k: v for k, v in g.items() if any(v)}
    return clean(buckets[-1]), [clean(g) for g in buckets[:n]], clean(buckets[n])


BREAKDOWNS = ("terminal", "cashier", "promotion")


def _breakdown_key(by: str):
    from sqlalchemy import case
    if by == "terminal":
        return lambda t: func.coalesce(t.terminal_id, "")
    if by == "cashier":
        return lambda t: func.coalesce(t.cashier_id, "")
    if by == "promotion":       # a top-up with a bonus came under a promotion; the entry does not name which
        return lambda t: case((t.bonus_delta_minor > 0, "with_bonus"), else_="without_bonus")
    raise ReportError("by", f"one of {', '.join(BREAKDOWNS)}")


def breakdown(engine: Engine, start: datetime, end: datetime, by: str,
              memo: dict | None = None) -> dict[str, dict[str, list[int]]]:
    """The period's sums per terminal, per cashier, or per whether a top-up carried a
    bonus ("promotion": with_bonus / without_bonus; the entry does not name the
    promotion): key ('' when the entry has none) -> section (`section_of`) ->
    [principal, bonus, entries], signed as the entries hold them (spending negative)."""
    if end <= start:
        raise ReportError("to", "is before --from")
    return breakdown_series(engine, [start, end], by, memo)[0]


def breakdown_series(engine: Engine, bounds: list[datetime], by: str,
                     memo: dict | None = None) -> list[dict[str, dict[str, list[int]]]]:
    """`breakdown` of each period [bounds[i], bounds[i+1]), read from the entries a UTC
    day piece at a time, each piece's sums kept in `memo` while its UTC day's daily totals
    stay the same."""
    key = _breakdown_key(by)
    bounds = _utc_bounds(bounds)
    first, last = _utc_date(bounds[0]), _utc_date(bounds[-1])
    out = [defaultdict(lambda: defaultdict(lambda: [0, 0, 0])) for _ in bounds[1:]]
    with snapshot(engine) as conn:
        days = _day_groups(conn, first, last)
        wanted, owners = [], []
        for d, ps in _pieces(bounds, sorted(days)).items():
            if days.get(d):
                for a, b, bucket in ps:
                    if 0 <= bucket < len(out):
                        wanted.append((a, b, _fingerprint(days[d])))
                        owners.append(bucket)
        for bucket, groups in zip(owners, _cached_pieces(conn, wanted, memo, tag=f"by:{by}", key=key)):
            for (k, kind, _method, dup), (p, b, n) in groups.items():
                t = out[bucket][k or ""][section_of(kind, dup)]
                t[0], t[1], t[2] = t[0] + p, t[1] + b, t[2] + n
    return [{k: dict(v) for k, v in o.items()} for o in out]


def tills_seen(engine: Engine, start: datetime, end: datetime) -> list[dict]:
    """Each terminal with an entry in [start, end) in the book: its last entry's time and
    how many entries (any kind, Z records included). The book knows a till only by what
    it journaled; a till's sign-ins and pings live in Redis, which the back office does
    not read."""
    start, end = _utc_bounds([start, end])
    with snapshot(engine) as conn:
        rows = conn.execute(select(LedgerEntry.terminal_id, func.max(LedgerEntry.occurred_at), func.count())
                            .where(LedgerEntry.occurred_at >= start, LedgerEntry.occurred_at < end,
                                   LedgerEntry.terminal_id.is_not(None))
                            .group_by(LedgerEntry.terminal_id).order_by(LedgerEntry.terminal_id))
        out = []
        for terminal, last, n in rows:
            if last is not None and last.tzinfo is None:
                last = last.replace(tzinfo=timezone.utc)
            out.append(dict(terminal_id=terminal, last_entry_at=last, entries=int(n)))
        return out


def period_days(granularity: str, last: date, count: int | None = None) -> list[tuple[date, date]]:
    """The `count` whole shop periods ending with the one holding `last`, oldest first, as
    (first day, last day): day (30), week (Monday to Sunday, 12) or month (12)."""
    if granularity == "day":
        n = count or 30
        return [(last - timedelta(days=i), last - timedelta(days=i)) for i in range(n - 1, -1, -1)]
    if granularity == "week":
        n = count or 12
        monday = last - timedelta(days=last.weekday())
        return [(monday - timedelta(weeks=i), monday - timedelta(weeks=i) + timedelta(days=6))
                for i in range(n - 1, -1, -1)]
    if granularity == "month":
        n = count or 12
        out, y, m = [], last.year, last.month
        for _ in range(n):
            first = date(y, m, 1)
            nxt = date(y + (m == 12), m % 12 + 1, 1)
            out.append((first, nxt - timedelta(days=1)))
            y, m = (y, m - 1) if m > 1 else (y - 1, 12)
            if y < FIRST_REPORT_DATE.year:
                break
        return out[::-1]
    raise ReportError("period", "one of day, week, month")


def period_bounds(periods: list[tuple[date, date]], zone: ZoneInfo) -> list[datetime]:
    """The instants that separate consecutive shop periods (`period_days`)."""
    return [day_bounds(f, l, zone)[0] for f, l in periods] + [day_bounds(*periods[-1], zone)[1]]


def _spent_by_account(conn: Connection, start: datetime, end: datetime) -> dict[str, tuple[int, int, int]]:
    """account -> (principal, bonus, entries) spent in [start, end), spending positive."""
    q = (select(LedgerEntry.account_id, func.sum(LedgerEntry.principal_delta_minor),
                func.sum(LedgerEntry.bonus_delta_minor), func.count())
         .where(LedgerEntry.kind.in_(SPEND_KINDS), LedgerEntry.occurred_at >= start, LedgerEntry.occurred_at < end)
         .group_by(LedgerEntry.account_id))
    return {a: (-int(p), -int(b), int(n)) for a, p, b, n in conn.execute(q)}


def top_members(engine: Engine, start: datetime, end: datetime, limit: int = 10,
                memo: dict | None = None) -> list[dict]:
    """The members who spent most in [start, end) (deductions and captures), with what
    they spent from each bucket and how often; ties by account id. With `memo`, the
    period is summed in two parts, before today's UTC day and from it, each kept while
    its days' daily totals stay the same: a sale today re-reads today's part only."""
    start, end = _utc_bounds([start, end])
    with snapshot(engine) as conn:
        best_of = lambda totals: sorted(totals.items(), key=lambda kv: (-(kv[1][0] + kv[1][1]), kv[0]))[:limit]
        if memo is None:
            best = best_of(_spent_by_account(conn, start, end))
        else:
            split = min(end, max(start, _day_start(_utc_date(utcnow()))))
            parts, fps = [], []
            for a, b in ((start, split), (split, end)):
                if a >= b:
                    continue
                days = _day_groups(conn, _utc_date(a), _utc_date(b - timedelta(microseconds=1)))
                fp = tuple((d, _fingerprint(days[d])) for d in sorted(days))
                hit = memo.get(("members", a, b))
                if hit is None or hit[0] != fp:
                    if len(memo) > MEMO_LIMIT:
                        memo.clear()
                    hit = memo[("members", a, b)] = (fp, _spent_by_account(conn, a, b))
                parts.append(hit[1])
                fps.append(fp)
            done = memo.get(("members-top", start, end, limit))
            if done is not None and done[0] == fps:       # neither part changed: the same ranking
                best = done[1]
            else:
                totals = dict(parts[0]) if parts else {}
                for part in parts[1:]:
                    for acct, (p, bonus, n) in part.items():
                        q = totals.get(acct, (0, 0, 0))
                        totals[acct] = (q[0] + p, q[1] + bonus, q[2] + n)
                best = best_of(totals)
                memo[("members-top", start, end, limit)] = (fps, best)
        rows = [dict(account_id=a, spent_minor=p + b, principal_minor=p, bonus_minor=b, entries=n)
                for a, (p, b, n) in best]
        names = dict(conn.execute(select(Account.account_id, Account.holder_name)
                                  .where(Account.account_id.in_([r["account_id"] for r in rows]))).all()) if rows else {}
    for r in rows:
        r["holder_name"] = names.get(r["account_id"])
    return rows


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


def open_debts(engine: Engine) -> list[dict]:
    """The open offline debts (issue 27): one row per offline sale that left a debt on an
    account whose debt is still open (the sum of its offline_debts rows > 0), with its till,
    cashier, when it was made and settled and the debt it left; `open_minor` is the
    account's open debt (the same on each of its rows). Oldest first per account."""
    with engine.connect() as conn:
        totals = {a: int(d) for a, d in conn.execute(
            select(OfflineDebt.account_id, func.sum(OfflineDebt.debt_delta_minor))
            .group_by(OfflineDebt.account_id)) if int(d) > 0}
        if not totals:
            return []
        rows = conn.execute(select(OfflineDebt).where(OfflineDebt.account_id.in_(list(totals)),
                                                      OfflineDebt.debt_delta_minor > 0)
                            .order_by(OfflineDebt.account_id, OfflineDebt.journal_pos)).all()
    out = []
    for r in rows:
        d = {c: getattr(r, c) for c in ("account_id", "txn_id", "terminal_id", "cashier_id", "made_at",
                                         "occurred_at", "debt_delta_minor")}
        for k in ("made_at", "occurred_at"):
            if d[k] is not None and d[k].tzinfo is None:
                d[k] = d[k].replace(tzinfo=timezone.utc)
        d["open_minor"] = totals[r.account_id]
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


def open_discrepancy_count(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(Discrepancy)
                                .where(Discrepancy.status == "open")).scalar_one())


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
