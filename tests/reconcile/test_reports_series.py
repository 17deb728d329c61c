"""The chart computations against the entries themselves, on PostgreSQL and SQLite: a
generated month of every kind applied by the real store, then for periods cut at
arbitrary instants (UTC midnights, shop midnights, odd seconds) `grouped_series` equals
the raw sums of the entries in each period (and `grouped_sums`), `liability_series`
equals the single-period report of each period, the memo gives the same answers and
is not fooled by an entry that arrives late into a day it remembers; `breakdown`
equals the entries grouped by terminal / cashier / bonus; `top_members` the biggest
spenders; `report breakdown` and `report members` print what the functions compute."""
from __future__ import annotations

import json
import random
from collections import defaultdict
from datetime import date, datetime, timedelta, timezone

import pytest
from sqlalchemy import select

from reconcile_service import db as dbmod
from reconcile_service.models import LedgerEntry
from reconcile_service.reports import book
from reconcile_service.store import apply_batch
from tests.reconcile.conftest import run_cli
from tests.reconcile.test_reports_liability import MONTH, ZONE, apply_month, month_of_traffic, url  # noqa: F401


def _raw(conn, a, b) -> dict:
    out = defaultdict(lambda: [0, 0, 0])
    book._raw_groups(conn, out, a, b)
    return {k: v for k, v in out.items() if any(v)}


def _clean(groups: dict) -> dict:
    return {k: v for k, v in groups.items() if any(v)}


@pytest.fixture
def month_book(url):
    engine = dbmod.make_engine(url)
    dbmod.migrate(engine)
    apply_month(engine, month_of_traffic(random.Random(11), 30, 40))
    yield engine
    engine.dispose()


def _cuts(rng: random.Random) -> list[list[datetime]]:
    y, m = MONTH
    utc_mid = lambda d: datetime(y, m, d, tzinfo=timezone.utc)
    shop_mid = lambda d: datetime(y, m, d, tzinfo=ZONE)
    odd = lambda: datetime(y, m, 1, tzinfo=timezone.utc) + timedelta(seconds=rng.randint(0, 31 * 86400))
    out = [[utc_mid(3), utc_mid(9)], [shop_mid(2), shop_mid(3), shop_mid(4), shop_mid(20)],
           book.period_bounds(book.period_days("day", date(y, m, 30)), ZONE),
           book.period_bounds(book.period_days("week", date(y, m, 30), 5), ZONE),
           book.period_bounds(book.period_days("month", date(y, m, 30), 3), ZONE)]
    for _ in range(6):
        out.append(sorted({odd() for _ in range(rng.randint(2, 7))}))
    return [b for b in out if len(b) >= 2]


def test_series_equals_the_entries_of_every_period(month_book):
    rng = random.Random(5)
    memo: dict = {}
    with month_book.connect() as conn:
        for bounds in _cuts(rng):
            for use in (None, memo, memo):             # no memo; filling it; answered from it
                before, buckets, after = book.grouped_series(conn, bounds, use)
                assert _clean(before) == _raw(conn, None, bounds[0])
                assert _clean(after) == _raw(conn, bounds[-1], None)
                for i, groups in enumerate(buckets):
                    assert _clean(groups) == _raw(conn, bounds[i], bounds[i + 1]), (bounds, i)
                    assert _clean(groups) == _clean(book.grouped_sums(conn, bounds[i], bounds[i + 1]))
    assert memo          # the cut days' pieces were kept


def test_liability_series_is_the_report_of_each_period(month_book):
    bounds = book.period_bounds(book.period_days("day", date(*MONTH, 30)), ZONE)
    series = book.liability_series(month_book, bounds, {})
    assert len(series) == 30 and all(r.balanced for r in series)
    for i, rep in enumerate(series):
        alone = book.liability(month_book, bounds[i], bounds[i + 1]).as_dict()
        assert rep.as_dict() == alone
        if i:
            assert rep.opening == series[i - 1].closing
    assert any(r.entries for r in series)


def test_the_memo_is_not_fooled_by_a_late_entry(month_book):
    """A remembered piece of a cut day (the shorter one: 16:00-24:00 UTC, a Shanghai shop's
    night) gets an entry afterwards (a till's offline outbox): the day's daily totals
    change with it, so the memo reads the piece again."""
    y, m = MONTH
    bounds = book.period_bounds(book.period_days("day", date(y, m, 12), 5), ZONE)
    memo: dict = {}
    first = book.liability_series(month_book, bounds, memo)
    late = datetime(y, m, 10, 20, 0, tzinfo=timezone.utc)        # 04:00 on the 11th in Shanghai
    assert bounds[3] < late < bounds[4] and any(k[1] <= late < k[2] for k in memo)
    ms = int(late.timestamp() * 1000)
    fields = {"txn": "late-1", "kind": "credit", "acct": "LATE-1", "amt": "777", "bal": "777", "ts": str(ms),
              "term": "T9", "cash": "c9", "pd": "700", "bd": "77", "m": "cash"}
    assert apply_batch(month_book, 0, [(f"{ms}-999999", fields)]).quarantined == 0
    again = book.liability_series(month_book, bounds, memo)
    fresh = book.liability_series(month_book, bounds)
    assert [r.as_dict() for r in again] == [r.as_dict() for r in fresh]
    topups = lambda r: sum(l.principal_minor for l in r.lines if l.key == "topup")
    assert topups(again[3]) == topups(first[3]) + 700
    assert [l for l in again[3].lines if l.key == "bonus_granted"][0].bonus_minor == \
        [l for l in first[3].lines if l.key == "bonus_granted"][0].bonus_minor + 77
    assert again[4].opening == (first[4].opening[0] + 700, first[4].opening[1] + 77)


def _entries(engine, start, end) -> list:
    with engine.connect() as conn:
        return conn.execute(select(LedgerEntry.terminal_id, LedgerEntry.cashier_id, LedgerEntry.kind,
                                   LedgerEntry.account_id, LedgerEntry.principal_delta_minor,
                                   LedgerEntry.bonus_delta_minor)
                            .where(LedgerEntry.occurred_at >= start, LedgerEntry.occurred_at < end)).all()


def test_breakdown_and_top_members_equal_the_entries(month_book):
    y, m = MONTH
    start, end = book.day_bounds(date(y, m, 3), date(y, m, 17), ZONE)
    rows = _entries(month_book, start, end)
    memo: dict = {}
    for by, pick in (("terminal", lambda r: r.terminal_id or ""), ("cashier", lambda r: r.cashier_id or ""),
                     ("promotion", lambda r: "with_bonus" if r.bonus_delta_minor > 0 else "without_bonus")):
        want = defaultdict(lambda: defaultdict(lambda: [0, 0, 0]))
        for r in rows:
            if r.kind in book.BOOK_ONLY_KINDS:
                continue
            t = want[pick(r)][book.section_of(r.kind, False)]
            t[0], t[1], t[2] = t[0] + r.principal_delta_minor, t[1] + r.bonus_delta_minor, t[2] + 1
        want = {k: dict(v) for k, v in want.items()}
        assert book.breakdown(month_book, start, end, by) == want
        assert book.breakdown(month_book, start, end, by, memo) == want == book.breakdown(month_book, start, end,
                                                                                            by, memo)
    assert set(book.breakdown(month_book, start, end, "terminal")) == {"T1", "T2", "T3"}
    spent = defaultdict(int)
    for r in rows:
        if r.kind in book.SPEND_KINDS:
            spent[r.account_id] -= r.principal_delta_minor + r.bonus_delta_minor
    top = book.top_members(month_book, start, end, 5)
    assert [(t["account_id"], t["spent_minor"]) for t in top] == \
        sorted(spent.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    assert all(t["principal_minor"] + t["bonus_minor"] == t["spent_minor"] for t in top)
    # through the page's memo: the same, also after a late spend lands in a remembered day
    assert book.top_members(month_book, start, end, 5, memo) == top == book.top_members(month_book, start, end, 5,
                                                                                          memo)
    assert any(k[0] == "members" for k in memo)
    runner_up = top[1]
    late = datetime(y, m, 9, 3, 0, tzinfo=timezone.utc)
    ms = int(late.timestamp() * 1000)
    extra = top[0]["spent_minor"] - runner_up["spent_minor"] + 1
    fields = {"txn": "late-spend", "kind": "deduct", "acct": runner_up["account_id"], "amt": str(-extra),
              "bal": "0", "ts": str(ms), "term": "T1", "cash": "c1", "pd": str(-extra), "bd": "0"}
    assert apply_batch(month_book, 0, [(f"{ms}-999998", fields)]).quarantined == 0
    again = book.top_members(month_book, start, end, 5, memo)
    assert again == book.top_members(month_book, start, end, 5)
    assert again[0]["account_id"] == runner_up["account_id"] and again[0]["spent_minor"] == top[0]["spent_minor"] + 1


def test_report_breakdown_and_members_print_the_functions(month_book, capsys):
    y, m = MONTH
    db_url = month_book.url.render_as_string(hide_password=False)
    start, end = book.day_bounds(date(y, m, 1), date(y, m, 30), ZONE)
    period = ["--from", f"{y}-{m:02d}-01", "--to", f"{y}-{m:02d}-30", "--tz", ZONE.key]
    capsys.readouterr()
    assert run_cli("report", "breakdown", "--by", "cashier", *period, "--format", "json",
                   redis_url="redis://unused", database_url=db_url) == 0
    assert json.loads(capsys.readouterr().out)["sums"] == book.breakdown(month_book, start, end, "cashier")
    assert run_cli("report", "members", *period, "--top", "3", "--format", "json",
                   redis_url="redis://unused", database_url=db_url) == 0
    assert json.loads(capsys.readouterr().out)["members"] == book.top_members(month_book, start, end, 3)
    assert run_cli("report", "breakdown", "--by", "promotion", *period, "--lang", "zh_CN",
                   redis_url="redis://unused", database_url=db_url) == 0
    assert "带赠送的充值" in capsys.readouterr().out
    assert run_cli("report", "members", "--date", "2026-13-01", redis_url="redis://unused", database_url=db_url) == 2


def test_period_days():
    assert book.period_days("day", date(2026, 3, 2), 3) == [(date(2026, 2, 28),) * 2, (date(2026, 3, 1),) * 2,
                                                          (date(2026, 3, 2),) * 2]
    weeks = book.period_days("week", date(2026, 12, 9), 2)        # a Wednesday
    assert weeks == [(date(2026, 11, 30), date(2026, 12, 6)), (date(2026, 12, 7), date(2026, 12, 13))]
    months = book.period_days("month", date(2026, 2, 15), 3)
    assert months == [(date(2025, 12, 1), date(2025, 12, 31)), (date(2026, 1, 1), date(2026, 1, 31)),
                      (date(2026, 2, 1), date(2026, 2, 28))]
    assert len(book.period_days("day", date(2026, 1, 1))) == 30 and len(book.period_days("month", date(2026, 1, 1))) == 12
    bounds = book.period_bounds(months, ZONE)
    assert bounds[0] == datetime(2025, 12, 1, tzinfo=ZONE) and bounds[-1] == datetime(2026, 3, 1, tzinfo=ZONE)
    with pytest.raises(book.ReportError):
        book.period_days("year", date(2026, 1, 1))
    with pytest.raises(book.ReportError):
        book.grouped_series(None, [bounds[1], bounds[0]])


def test_the_widest_period_reads_no_day_by_day(month_book):
    """1970-01-01 .. 9998-12-31 (every day a report may name): summed in a few queries,
    not walked a UTC day at a time (2.9 million of them)."""
    import time
    start, end = book.day_bounds(book.FIRST_REPORT_DATE, book.LAST_REPORT_DATE, ZONE)
    t0 = time.perf_counter()
    rep = book.liability(month_book, start, end)
    sums = book.breakdown(month_book, start, end, "terminal")
    assert time.perf_counter() - t0 < 5
    with month_book.connect() as conn:
        assert _clean(book.grouped_series(conn, [start, end])[1][0]) == _raw(conn, start, end)
    assert rep.balanced and rep.opening == (0, 0) and rep.entries == sum(v[2] for v in _raw_all(month_book).values())
    assert set(sums) == {"T1", "T2", "T3"}


def _raw_all(engine) -> dict:
    with engine.connect() as conn:
        return _raw(conn, None, None)


def test_top_members_see_a_sale_made_today(month_book):
    """The memo keeps today's part too, with today's daily totals: the next sale is seen."""
    now = datetime.now(timezone.utc)
    start, end = now - timedelta(days=3), now + timedelta(hours=1)

    def spend(n: int, acct: str, amount: int, at: datetime) -> None:
        ms = int(at.timestamp() * 1000)
        fields = {"txn": f"today-{n}", "kind": "deduct", "acct": acct, "amt": str(-amount), "bal": "0",
                  "ts": str(ms), "term": "T1", "cash": "c1", "pd": str(-amount), "bd": "0"}
        assert apply_batch(month_book, 0, [(f"{ms}-{900000 + n}", fields)]).quarantined == 0

    spend(1, "TODAY-A", 500, now - timedelta(days=1))
    spend(2, "TODAY-B", 300, now - timedelta(seconds=5))
    memo: dict = {}
    first = book.top_members(month_book, start, end, 3, memo)
    assert [(r["account_id"], r["spent_minor"]) for r in first] == [("TODAY-A", 500), ("TODAY-B", 300)]
    spend(3, "TODAY-B", 250, now - timedelta(seconds=1))
    again = book.top_members(month_book, start, end, 3, memo)
    assert again == book.top_members(month_book, start, end, 3)
    assert [(r["account_id"], r["spent_minor"]) for r in again] == [("TODAY-B", 550), ("TODAY-A", 500)]
