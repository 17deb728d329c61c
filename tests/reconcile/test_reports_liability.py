"""The liability report's identity on PostgreSQL and SQLite: opening + in - out = closing
exactly, and closing = the sum of the accounts' balances at the period's end, for every
day of a generated month and for the month, over traffic of every kind in CONTRACTS.md:
today's through the real core ledger and `run --once` (top-ups, spending, refunds, holds,
a txn applied twice and its correction), the month before as journal entries of the
kinds and bucket fields the members scripts write (payment methods, bonus granted and
spent, card closes with paid-out principal and forfeited bonus, corrections), applied by
the real store. Also: statements, discrepancy resolve, CSV / PDF / zh_CN output, and a
tampered accounts row failing the check line (exit 1)."""
from __future__ import annotations

import csv
import io
import itertools
import json
import random
from collections import defaultdict
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from sqlalchemy import func, select, text

from reconcile_service import db as dbmod
from reconcile_service.models import Account, Discrepancy
from reconcile_service.reports import book
from reconcile_service.store import apply_batch
from tests.reconcile.conftest import open_accounts, run_cli, workload
from tests.support.postgres import fresh_database

ZONE = ZoneInfo("Asia/Shanghai")
MONTH = (2026, 11)
METHODS = ["cash", "wechat", "alipay", "bank_card", "other", None]


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/book.db"
    else:
        with fresh_database() as u:
            yield u


def month_of_traffic(rng: random.Random, n_accounts: int, per_day: int, prefix: str = "M"):
    """Journal entries of every money kind over MONTH, each account in its own bucket
    arithmetic (spending takes bonus first, a close pays out principal and forfeits bonus)."""
    year, month = MONTH
    seq = itertools.count()
    state = {}      # account -> [principal, bonus, open?]
    out = []
    day = date(year, month, 1)
    while day.month == month:
        for second in sorted(rng.randint(0, 86399) for _ in range(per_day)):   # in time order
            ts = datetime(day.year, day.month, day.day, tzinfo=ZONE) + timedelta(seconds=second)
            ms = int(ts.timestamp() * 1000)
            acct = f"{prefix}-{rng.randrange(n_accounts):03d}"
            p, b, live = state.get(acct, [0, 0, False])
            n = next(seq)
            txn = f"{prefix}-t{n}"
            def add(kind, pd, bd, **extra):
                nonlocal p, b
                p, b = p + pd, b + bd
                f = {"txn": txn, "kind": kind, "acct": acct, "amt": str(pd + bd), "bal": str(p + b), "ts": str(ms),
                     "term": f"T{rng.randint(1, 3)}", "cash": f"c{rng.randint(1, 4)}", "pd": str(pd), "bd": str(bd)}
                f.update(extra)
                out.append((f"{ms}-{n}", f))
            if not live:
                m = rng.choice(METHODS)
                add("open", rng.randint(0, 50_000), 0, **({"m": m} if m else {}))
                live = True
            else:
                roll = rng.random()
                if roll < 0.3:
                    m = rng.choice(METHODS)
                    amount = rng.randint(100, 100_000)
                    add("credit", amount, amount // 10 if rng.random() < 0.5 else 0, **({"m": m} if m else {}))
                elif roll < 0.75 and p + b > 0:
                    spend = rng.randint(1, p + b)
                    from_bonus = min(b, spend)
                    add(rng.choice(["deduct", "capture"]), -(spend - from_bonus), -from_bonus)
                elif roll < 0.85:
                    add("refund", rng.randint(1, 2000), rng.choice([0, 0, 50]), orig="x")
                elif roll < 0.9:
                    add("compensate", rng.randint(1, 300), 0)
                elif roll < 0.95:
                    add("hold", 0, 0)
                elif p + b >= 0:
                    add("close", -p, -b)
                    live = False
            state[acct] = [p, b, live]
        day += timedelta(days=1)
    out.sort(key=lambda e: int(e[0].split("-")[0]))
    return out


def apply_month(engine, entries, partition: int = 0, batch: int = 300):
    for i in range(0, len(entries), batch):
        r = apply_batch(engine, partition, entries[i:i + batch])
        assert r.quarantined == 0


def assert_month_balances(engine, today: date):
    year, month = MONTH
    first = date(year, month, 1)
    days = [first + timedelta(days=i) for i in range(31) if (first + timedelta(days=i)).month == month]
    prev_closing = None
    for d in days + [today]:
        rep = book.liability(engine, *book.day_bounds(d, d, ZONE))
        assert rep.balanced, (d, rep.as_dict())
        if prev_closing is not None and d != today:
            assert rep.opening == prev_closing
        prev_closing = rep.closing
    whole = book.liability(engine, *book.day_bounds(days[0], days[-1], ZONE))
    assert whole.balanced
    assert whole.closing == book.liability(engine, *book.day_bounds(days[-1], days[-1], ZONE)).closing
    # up to the end of today: the closing is literally the sum of the accounts table
    upto = book.liability(engine, *book.day_bounds(days[0], today + timedelta(days=1), ZONE))
    with engine.connect() as conn:
        total = conn.execute(select(func.sum(Account.balance_minor))).scalar_one()
        raw = defaultdict(lambda: [0, 0, 0])
        book._raw_groups(conn, raw, None, None)
        assert dict(book.grouped_sums(conn, None, None)) == dict(raw)    # daily_totals == the entries
    assert upto.after_end == (0, 0) and sum(upto.closing) == total
    return whole


def test_liability_identity_over_a_month_of_every_kind(url, ledger, redis_url, capsys, tmp_path):
    # today: real traffic through the core ledger and the daemon
    accounts = open_accounts(ledger, 5)
    workload(ledger, accounts, 300, seed=3)
    ledger.hold(accounts[0], 100, txn_id="h-1", ttl_s=600)
    ledger.capture("h-1", 60, txn_id="h-1-c")
    ledger.deduct(accounts[1], 10, txn_id="dup-me")
    ledger.client.delete(ledger.schema.partition_of(accounts[1]).txn("dup-me"))
    ledger.deduct(accounts[1], 10, txn_id="dup-me")                 # applied twice -> corrected
    assert run_cli("run", "--once", redis_url=redis_url, database_url=url) == 0
    engine = dbmod.make_engine(url)
    try:
        # the month before, as the members scripts will journal it
        apply_month(engine, month_of_traffic(random.Random(7), 40, 60))
        today = datetime.now(ZONE).date()
        rep_today = book.liability(engine, *book.day_bounds(today, today, ZONE))
        keys = {l.key: l for l in rep_today.lines}
        assert keys["corrections"].principal_minor == 0          # duplicate (-10) and its compensation (+10)
        whole = assert_month_balances(engine, today)
        lines = {(l.key, l.detail): l for l in whole.lines}
        assert lines[("closes", "")].principal_minor > 0 and lines[("bonus_granted", "")].bonus_minor > 0
        assert lines[("topup", "wechat")].principal_minor > 0 and lines[("spent", "")].bonus_minor > 0

        y, m = MONTH
        capsys.readouterr()
        args = ["report", "liability", "--from", f"{y}-{m:02d}-01", "--to", f"{y}-{m:02d}-30"]
        assert run_cli(*args, redis_url=redis_url, database_url=url) == 0
        out = capsys.readouterr().out
        assert "Check: sum of account balances at period end: OK" in out and "WeChat Pay" in out
        assert run_cli(*args, "--lang", "zh_CN", redis_url=redis_url, database_url=url) == 0
        assert "期末余额" in capsys.readouterr().out
        assert run_cli(*args, "--format", "csv", "-o", str(tmp_path / "l.csv"), redis_url=redis_url,
                       database_url=url) == 0
        rows = list(csv.reader(io.StringIO((tmp_path / "l.csv").read_bytes().decode("utf-8-sig"))))
        closing = next(r for r in rows if r[0] == "Closing balance")
        assert closing[1:3] == [f"{whole.closing[0] / 100:.2f}", f"{whole.closing[1] / 100:.2f}"]
        assert run_cli(*args, "--format", "pdf", "--lang", "zh_CN", "-o", str(tmp_path / "l.pdf"),
                       redis_url=redis_url, database_url=url) == 0
        assert (tmp_path / "l.pdf").read_bytes().startswith(b"%PDF")
        assert run_cli(*args, "--format", "json", redis_url=redis_url, database_url=url) == 0
        assert json.loads(capsys.readouterr().out)["balanced"] is True

        # an accounts row changed behind the service's back: the check line fails
        with engine.begin() as conn:
            conn.execute(text("UPDATE accounts SET bonus_minor = bonus_minor + 1 WHERE account_id = 'M-001'"))
        capsys.readouterr()
        assert run_cli(*args, redis_url=redis_url, database_url=url) == 1
        assert "MISMATCH" in capsys.readouterr().out
    finally:
        engine.dispose()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10 ** 6), batch=st.integers(1, 400), redeliver=st.booleans())
def test_property_identity_holds_for_any_traffic_and_delivery(tmp_path_factory, seed, batch, redeliver):
    """Faults: batches of any size, redelivered (a crash between COMMIT and XACK), in any
    order. Invariant: every day and the month balance, and day closings chain."""
    engine = dbmod.make_engine(f"sqlite:///{tmp_path_factory.mktemp('p')}/b.db")
    dbmod.migrate(engine)
    entries = month_of_traffic(random.Random(seed), 12, 15)
    chunks = [entries[i:i + batch] for i in range(0, len(entries), batch)]
    random.Random(seed).shuffle(chunks)
    for c in chunks:
        apply_batch(engine, 0, c)
        if redeliver:
            apply_batch(engine, 0, c)
    assert_month_balances(engine, datetime.now(ZONE).date())
    engine.dispose()


def test_statement_lists_every_entry_with_balance_after(url, ledger, redis_url, capsys):
    engine = dbmod.make_engine(url)
    dbmod.migrate(engine)
    entries = month_of_traffic(random.Random(11), 3, 20, prefix="S")
    apply_month(engine, entries)
    mine = [f for _, f in entries if f["acct"] == "S-001"]
    st_all = book.statement(engine, "S-001")
    assert [r["txn_id"] for r in st_all.rows] == [f["txn"] for f in mine]
    assert [r["balance_after_minor"] for r in st_all.rows] == [int(f["bal"]) for f in mine]
    assert st_all.closing_minor == st_all.balance_minor == int(mine[-1]["bal"])
    mid = date(*MONTH, 15)
    part = book.statement(engine, "S-001", *book.day_bounds(mid, date(*MONTH, 20), ZONE))
    assert part.opening_minor + sum(r["amount_minor"] for r in part.rows) == part.closing_minor
    assert all(mid <= r["occurred_at"].astimezone(ZONE).date() <= date(*MONTH, 20) for r in part.rows)
    capsys.readouterr()
    assert run_cli("report", "statement", "S-001", "--from", "2026-11-15", "--to", "2026-11-20",
                   redis_url=redis_url, database_url=url) == 0
    out = capsys.readouterr().out
    assert len([l for l in out.splitlines() if "S-t" in l]) == len(part.rows)
    assert run_cli("report", "statement", "NOPE", redis_url=redis_url, database_url=url) == 2
    assert "account: no account 'NOPE'" in capsys.readouterr().err
    engine.dispose()


def test_a_discrepancy_is_listed_with_evidence_and_resolved_with_a_note(url, ledger, redis_url, capsys):
    accounts = open_accounts(ledger, 3)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=url) == 0
    ledger.client.hincrby(ledger.schema.partition_of(accounts[1]).account(accounts[1]), "bal", 77)
    assert run_cli("reconcile", redis_url=redis_url, database_url=url) == 1
    capsys.readouterr()
    assert run_cli("report", "discrepancies", "--format", "json", redis_url=redis_url, database_url=url) == 0
    (d,) = json.loads(capsys.readouterr().out)
    assert d["kind"] == "balance_mismatch" and d["account_id"] == accounts[1]
    assert d["redis_balance_minor"] - d["db_balance_minor"] == 77 and d["evidence"]
    for bad, msg in ((["resolve", str(d["id"]), "--note", " "], "note:"),
                     (["resolve", "99999", "--note", "x"], "id: no discrepancy #99999")):
        assert run_cli(*bad, redis_url=redis_url, database_url=url) == 2
        assert msg in capsys.readouterr().err
    assert run_cli("resolve", str(d["id"]), "--note", "till T2 tampered; reversed by hand", "--by", "owner",
                   redis_url=redis_url, database_url=url) == 0
    assert run_cli("resolve", str(d["id"]), "--note", "again", redis_url=redis_url, database_url=url) == 2
    assert "is resolved, not open" in capsys.readouterr().err
    engine = dbmod.make_engine(url)
    with engine.connect() as conn:
        row = conn.execute(select(Discrepancy).where(Discrepancy.id == d["id"])).one()
    engine.dispose()
    assert (row.status, row.resolution_note, row.resolved_by) == ("resolved", "till T2 tampered; reversed by hand",
                                                                  "owner")
    capsys.readouterr()
    assert run_cli("report", "discrepancies", redis_url=redis_url, database_url=url) == 0
    assert "Open discrepancies: none" in capsys.readouterr().out


def test_report_usage_mistakes_are_one_clear_line(url, redis_url, capsys):
    assert run_cli("migrate", redis_url=redis_url, database_url=url) == 0
    for args, msg in ((["report", "liability"], "date: give --date"),
                      (["report", "liability", "--date", "2026-13-01"], "date: '2026-13-01' is not a date"),
                      (["report", "liability", "--from", "2026-11-05", "--to", "2026-11-01"], "to: 2026-11-01 is before"),
                      (["report", "shifts", "--date", "x", "--tz", "Mars/Base"], "shop_timezone: 'Mars/Base'")):
        capsys.readouterr()
        assert run_cli(*args, redis_url=redis_url, database_url=url) == 2
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err
