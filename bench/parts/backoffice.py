"""Part 9, the back office (issue 16): `reconcile-service report liability` for one day
and for a month over a database of record holding 1,000,000 entries on PostgreSQL, and
the back-office page's p99 for the liability view, a statement of 1,000 entries, the
dashboard and each chart page, the management pages, the Audit page, the import and
own-password pages (issue 29), and how long the page's start takes to read the charts' sums.
Steps: reset the dedicated database `cashier_bench_backoffice`, migrate, write a month
of generated entries (top-ups by payment method with bonus, spending, refunds; 10,000
accounts over 4 partitions, one account with 1,000 entries; besides them 10,000 `audit`
entries of back-office actions with their audit_records rows) as the store writes them
(chained, with daily totals and account buckets; COPY, see `generate`); seed a private
Redis ledger for the management pages (`seed_ledger`: 300 members with a card, 300
cashiers, 40 terminals, 8 promotions); then time the CLI end to end (a new process each
time, as an accountant runs it; best and worst of 3) and, in this process, GET /,
/statement/HOT-1, /dashboard, each chart page and each page of MANAGE_PAGES 200 times each
through a logged-in session (an owner) on the page served by waitress. Targets: report
≤ 5 s; page p99 ≤ 200 ms.
"""
from __future__ import annotations

import http.cookiejar
import random
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from .reconcile import ROOT, _sqlalchemy_url

DATABASE = "cashier_bench_backoffice"
ENTRIES = 1_000_000
SMOKE_ENTRIES = 20_000
ACCOUNTS = 10_000
HOT_ENTRIES = 1_000
PARTITIONS = 4
BATCH = 5_000
PAGE_REQUESTS = 200
TARGET_REPORT_S = 5.0
TARGET_PAGE_P99_S = 0.200
ZONE = ZoneInfo("Asia/Shanghai")
METHODS = ("cash", "wechat", "alipay", "bank_card", "other")
PAGE_NAMES = {"/": "liability view (today)", "/statement/HOT-1": f"statement of {HOT_ENTRIES:,} entries"}
# issue 29: the dashboard and the charts (the month of traffic ends today; the server
# reads the charts' sums once at start, then a view reads only what changed)
CHART_PAGES = {"/dashboard": "dashboard (today)",
               "/charts/sales?by=day": "chart: daily sales, 30 days",
               "/charts/topups?by=week": "chart: top-ups by method and bonus, 12 weeks",
               "/charts/liability?by=month": "chart: liability over time, 12 months",
               "/charts/tills?by=day": "chart: per terminal and per cashier, 30 days",
               "/charts/members?by=day": "chart: top members, 30 days",
               "/charts/promotions?by=day": "chart: promotions' cost, 30 days"}
# issue 29: the management pages (web/manage.py AREAS, the import page), the Audit page
# (all, and one user over a week) and the own-password page; the cashiers, terminals and
# promotions lists, and one member's cards, read from a private Redis seeded by `seed_ledger`
AUDITS = 10_000                 # `audit` entries in the generated book, besides the money entries
AUDIT_USERS = ("owner", "manager-1", "manager-2", "clerk.a@shop")
SEED_MEMBERS, SEED_CASHIERS, SEED_TERMINALS, SEED_PROMOTIONS = 300, 300, 40, 8
MANAGE_PAGES = {"/manage/members": "management: members",
                "/manage/cards?account=M-00001": "management: cards (one member's cards listed)",
                "/manage/promotions": f"management: promotions ({SEED_PROMOTIONS} listed)",
                "/manage/cashiers": f"management: cashiers ({SEED_CASHIERS} listed)",
                "/manage/settings": "management: shop settings",
                "/manage/terminals": f"management: terminals ({SEED_TERMINALS} listed)",
                "/manage/discrepancies": "management: discrepancies",
                "/manage/users": "management: back-office logins",
                "/manage/import": "management: member import",
                "/account/password": "own password",
                "/audit": "audit trail (newest 500)",
                "/audit?user=manager-1&from={week_ago}&to={today}": "audit trail: one user, 7 days"}


def _reset(dsn: str):
    import psycopg
    from reconcile_service import db as dbmod
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS public CASCADE")
        conn.execute("CREATE SCHEMA public")
    engine = dbmod.make_engine(_sqlalchemy_url(dsn))
    dbmod.migrate(engine)
    return engine


def _audit_row(rng, parts, totals, n: int, occurred, ms: int, applied) -> dict:
    """One back-office action as the store writes it: the chained `audit` entry (amount 0,
    account '~', terminal 'backoffice', cashier the ledger form of the login, core/lua/
    audit.lua) appended to its partition's rows, its daily total, and the audit_records
    row (totals.insert_audit_records) answered."""
    from core.audit import AUDIT_BOOK_ACCOUNT, AUDIT_TERMINAL, AuditRecord, ledger_who
    from reconcile_service.models import journal_pos
    who = AUDIT_USERS[n % len(AUDIT_USERS)]
    area, name = rng.choice((("members", "open"), ("members", "edit"), ("cards", "issue"), ("cards", "block"),
                             ("cashiers", "reset_pin"), ("promotions", "add"), ("settings", "set")))
    target = f"B-{rng.randrange(ACCOUNTS):05d}"
    record = AuditRecord(who=who, action=f"{area}.{name}", target=target, summary=f"{area} {name} of {target}",
                         address="127.0.0.1", nonce=f"{n:016x}")
    text = record.text()
    part = sum(AUDIT_TERMINAL.encode()) % PARTITIONS
    jid = f"{ms}-{10 ** 9 + n}"            # after the money entry of the same instant
    parts[part].append(dict(txn_id=record.txn_id, account_id=AUDIT_BOOK_ACCOUNT, kind="audit", amount_minor=0,
                            balance_after_minor=0, terminal_id=AUDIT_TERMINAL, cashier_id=ledger_who(who),
                            original_txn_id=None, occurred_at=occurred, journal_partition=part, journal_id=jid,
                            journal_pos=journal_pos(jid), applied_at=applied,
                            principal_delta_minor=0, bonus_delta_minor=0, method=None))
    totals[(part, occurred.date(), "audit", "")][2] += 1
    return dict(txn_id=record.txn_id, username=who, action=record.action, target=target, summary=record.summary,
                address=record.address, record_json=text, occurred_at=occurred, journal_partition=part,
                journal_id=jid)


def generate(engine, entries: int, seed: int = 9, audits_n: int = AUDITS) -> float:
    """A month of traffic ending now. The rows are exactly the store's (same columns,
    chained by reconcile_service.chain per partition, daily_totals, accounts' buckets
    and chain heads as apply_batch keeps them) but written with COPY: a million entries
    through apply_batch would take most of the bench's time on a small machine (the
    drain's own speed is part 6). Answers seconds taken."""
    import psycopg
    from collections import defaultdict
    from reconcile_service import chain
    from reconcile_service.models import journal_pos
    from reconcile_service.store import ms_to_datetime, utcnow

    rng = random.Random(seed)
    now_ms = int(time.time() * 1000)
    start_ms = now_ms - 30 * 86_400_000
    step = (now_ms - start_ms) / entries
    balances: dict[str, list[int]] = {}
    parts: dict[int, list[dict]] = defaultdict(list)
    totals: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    applied = utcnow()
    started = time.perf_counter()
    hot_every = max(1, entries // HOT_ENTRIES)
    audit_every = max(1, entries // audits_n)
    audits: list[dict] = []
    audit_rng = random.Random(seed + 1)      # its own: the money entries are those of a book without audits
    for i in range(entries):
        acct = "HOT-1" if i % hot_every == 0 else f"B-{rng.randrange(ACCOUNTS):05d}"
        ms = int(start_ms + i * step)
        bal = balances.get(acct)
        method, orig = None, None
        if bal is None:
            bal = balances[acct] = [0, 0]
            pd, bd, kind, method = rng.randint(10_000, 100_000), 0, "open", rng.choice(METHODS)
        else:
            roll = rng.random()
            if roll < 0.25 or bal[0] + bal[1] < 1000:
                pd = rng.randint(1000, 50_000)
                bd, kind, method = pd // 10, "credit", rng.choice(METHODS)
            elif roll < 0.95:
                spend = rng.randint(1, min(bal[0] + bal[1], 5000))
                bd = -min(bal[1], spend)
                pd, kind = -(spend + bd), "deduct"
            else:
                pd, bd, kind, orig = rng.randint(1, 500), 0, "refund", "x"
        bal[0] += pd
        bal[1] += bd
        part = sum(acct.encode()) % PARTITIONS
        jid = f"{ms}-{i}"
        occurred = ms_to_datetime(ms)
        parts[part].append(dict(txn_id=f"b{i}", account_id=acct, kind=kind, amount_minor=pd + bd,
                                balance_after_minor=bal[0] + bal[1], terminal_id=f"T{i % 7}", cashier_id=f"c{i % 5}",
                                original_txn_id=orig, occurred_at=occurred, journal_partition=part, journal_id=jid,
                                journal_pos=journal_pos(jid), applied_at=applied,
                                principal_delta_minor=pd, bonus_delta_minor=bd, method=method))
        t = totals[(part, occurred.date(), kind, method or "")]
        t[0], t[1], t[2] = t[0] + pd, t[1] + bd, t[2] + 1
        if i % audit_every == audit_every // 2:
            audits.append(_audit_row(audit_rng, parts, totals, len(audits), occurred, ms, applied))
    heads = {p: chain.link(rows, 0, chain.GENESIS_HASH) for p, rows in parts.items()}
    cols = list(parts[0][0])
    dsn = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn) as conn:
        with conn.cursor() as cur:
            with cur.copy(f"COPY ledger_entries ({', '.join(cols)}) FROM STDIN") as cp:
                for rows in parts.values():
                    for r in rows:
                        cp.write_row(tuple(r[c] for c in cols))
            acols = list(audits[0]) if audits else []
            if audits:
                with cur.copy(f"COPY audit_records ({', '.join(acols)}) FROM STDIN") as cp:
                    for r in audits:
                        cp.write_row(tuple(r[c] for c in acols))
            cur.executemany("INSERT INTO daily_totals VALUES (%s, %s, %s, %s, false, %s, %s, %s)",
                            [(k[0], k[1], k[2], k[3], *v) for k, v in totals.items()])
            cur.executemany("INSERT INTO chain_heads VALUES (%s, %s, %s, now())",
                            [(p, seq, h) for p, (seq, h) in heads.items()])
            cur.executemany(
                "INSERT INTO accounts (account_id, balance_minor, status, created_at, updated_at, journal_partition, "
                "last_journal_id, last_journal_pos, status_journal_pos, principal_minor, bonus_minor) "
                "VALUES (%s, %s, 'active', now(), now(), %s, '0-0', '', '', %s, %s)",
                [(a, b[0] + b[1], sum(a.encode()) % PARTITIONS, b[0], b[1]) for a, b in balances.items()])
        conn.execute("ANALYZE")
        conn.commit()
    return time.perf_counter() - started


def _cli_seconds(dsn: str, args: list[str], runs: int = 3) -> tuple[float, float, str]:
    times, out = [], ""
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "reconcile_service", "report", "liability", *args,
                               "--database-url", _sqlalchemy_url(dsn), "--log-level", "WARNING"],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise RuntimeError(f"report liability {args} exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
        out = proc.stdout
    return min(times), max(times), out


def _compute_s(engine, args: list[str]) -> float:
    from datetime import date
    from reconcile_service.reports import book
    first = date.fromisoformat(args[1])
    last = date.fromisoformat(args[3]) if len(args) > 2 else first
    t0 = time.perf_counter()
    rep = book.liability(engine, *book.day_bounds(first, last, ZONE))
    assert rep.balanced
    return time.perf_counter() - t0


def seed_ledger(redis_url: str) -> None:
    """The ledger the management pages read: members with a card each, cashiers,
    enrolled terminals and promotions on a fresh private Redis. The cashiers are written
    as core.cashiers' registry keeps them, with one PIN hash (scrypt per cashier would
    only slow the set-up)."""
    from core.cashiers import INDEX_KEY, hash_key, hash_pin
    from core.ledger import Ledger
    from core.terminals import TerminalRegistry
    led = Ledger.from_url(redis_url)
    led.init()
    for n in range(SEED_MEMBERS):
        acct = f"M-{n:05d}"
        led.open_account(acct, txn_id=f"seed-open-{n}", initial_minor=10_000, holder_name=f"Member {n}",
                         phone=f"139{n:08d}")
        led.issue_card(acct, f"C{n:08d}", txn_id=f"seed-card-{n}")
    now_ms, pin = int(time.time() * 1000), hash_pin("1234")
    pipe = led.client.pipeline(transaction=False)
    for n in range(SEED_CASHIERS):
        cid = f"cashier-{n:03d}"
        pipe.hset(hash_key(cid), mapping={"name": f"Cashier {n}", "pin": pin, "supervisor": int(n % 10 == 0),
                                          "can_top_up": int(n % 3 == 0), "disabled": 0, "created_ms": now_ms,
                                          "pin_changed_ms": now_ms})
        pipe.sadd(INDEX_KEY, cid)
    pipe.execute()
    terminals = TerminalRegistry(led.client)
    for n in range(SEED_TERMINALS):
        terminals.enroll(f"T{n}")
    for n in range(SEED_PROMOTIONS):
        led.add_promotion((n + 1) * 10_000, (n + 1) * 1_000, txn_id=f"seed-promo-{n}")


def _page_latencies(engine, paths: list[str], redis_url: str | None = None
                    ) -> tuple[dict[str, list[float]], float | None]:
    from reconcile_service.web.auth import set_password
    from reconcile_service.web.server import BackofficeServer
    set_password(engine, "bench", "bench-password-1")      # a new login: an owner (every page)
    server = BackofficeServer(engine, "127.0.0.1", 0, ZONE.key, redis_url=redis_url).start()
    server.warmed.wait(300)          # the charts' sums read at start (measured apart: warm_s)
    base = f"http://127.0.0.1:{server.port}"
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    try:
        html = opener.open(base + "/login").read().decode()
        csrf = re.search(r'name="csrf" value="([^"]+)"', html).group(1)
        opener.open(base + "/login", urllib.parse.urlencode(
            dict(csrf=csrf, username="bench", password="bench-password-1")).encode()).read()
        out = {}
        for path in paths:
            opener.open(base + path).read()            # warm: templates compiled, statements prepared
            samples = []
            for _ in range(PAGE_REQUESTS):
                t0 = time.perf_counter()
                with opener.open(base + path) as resp:
                    body = resp.read()
                    assert resp.status == 200 and b"login-form" not in body
                samples.append(time.perf_counter() - t0)
            out[path] = sorted(samples)
        return out, server.warm_s
    finally:
        server.close()


def run(ctx) -> None:
    dsn = ctx.pg_dsn_for(DATABASE)
    engine = _reset(dsn)
    entries = SMOKE_ENTRIES if ctx.smoke else ENTRIES
    try:
        gen_s = generate(engine, entries)
        today = datetime.now(ZONE).date()
        month = (today - timedelta(days=30), today)
        cases = [("one day (today)", ["--date", today.isoformat()]),
                 ("one day (mid-month)", ["--date", (today - timedelta(days=15)).isoformat()]),
                 ("a month", ["--from", month[0].isoformat(), "--to", month[1].isoformat()])]
        for label, args in cases:
            best, worst, out = _cli_seconds(dsn, args, 1 if ctx.smoke else 3)
            ok = "at period end: OK" in out
            ctx.row("9 back office", f"`reconcile-service report liability` {label} over {entries:,} entries "
                    f"(PostgreSQL `{DATABASE}`), the whole command in a new process",
                    f"{worst:.2f} s (best {best:.2f} s)", target=f"≤ {TARGET_REPORT_S:g} s",
                    met=worst <= TARGET_REPORT_S and ok,
                    note=f"check line {'OK' if ok else 'NOT OK'}; {' '.join(args)}; in-process compute "
                         f"{_compute_s(engine, args):.3f} s (the rest is the process start-up and imports)")
        seed_ledger(ctx.redis.url)
        manage = {p.format(today=today.isoformat(), week_ago=(today - timedelta(days=6)).isoformat()): what
                  for p, what in MANAGE_PAGES.items()}
        lat, warm_s = _page_latencies(engine, ["/", "/statement/HOT-1", *CHART_PAGES, *manage], ctx.redis.url)
        ctx.row("9 back office", f"back-office page: the dashboard and every chart's first view read at the "
                f"daemon's start over {entries:,} entries (in the background; later views read only today)",
                f"{warm_s:.2f} s" if warm_s is not None else "failed", met=warm_s is not None)
        for path, samples in lat.items():
            p = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
            what = PAGE_NAMES.get(path) or CHART_PAGES.get(path) or manage[path]
            ctx.row("9 back office", f"back-office page {what}: GET {path}, {PAGE_REQUESTS} requests, one "
                    "logged-in client, waitress in the same process", f"p99 {p(0.99) * 1000:.0f} ms",
                    ratio=f"p50 {p(0.5) * 1000:.0f} ms, max {samples[-1] * 1000:.0f} ms",
                    target=f"p99 ≤ {TARGET_PAGE_P99_S * 1000:.0f} ms", met=p(0.99) <= TARGET_PAGE_P99_S)
    finally:
        engine.dispose()
