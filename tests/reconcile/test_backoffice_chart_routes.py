"""The dashboard and the chart pages' edges, through the real Flask app on a real
PostgreSQL database of record: both need a sign-in; an empty book draws every chart
as "no data" (the liability as a line at zero; the dashboard as zeros) instead of failing; the first and last days a
report may name work at every granularity; a wrong granularity, date or chart name is
answered 400 / 404 with the reason; warming (done by the server at start) reads the
entries before the first view instead of during it."""
from __future__ import annotations

import re
import threading
import time
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import event

from reconcile_service.store import apply_batch
from reconcile_service.web.app import create_app
from reconcile_service.web.throttle import LoginThrottle
from reconcile_service.web.views import CHARTS, GRANULARITIES
from tests.reconcile.test_backoffice_hardening import PASSWORD, client, clock, engine, login, signed_in  # noqa: F401


@pytest.mark.parametrize("path", ["/dashboard", "/charts/sales", "/charts/members?by=week"])
def test_the_pages_need_a_sign_in(client, path):
    resp = client.get(path)
    assert resp.status_code == 302 and "/login" in resp.headers["Location"]


def test_an_empty_book_draws_no_data(signed_in):
    for name in CHARTS:
        for by in GRANULARITIES:
            for lang, empty in (("en", "no data in this period"), ("zh_CN", "此期间无数据")):
                resp = signed_in.get(f"/charts/{name}?by={by}&lang={lang}")
                body = resp.get_data(as_text=True)
                assert resp.status_code == 200, (name, by, body[:500])
                assert set(re.findall(r'data-minor="(-?[0-9]+)"', body)) <= {"0"}
                if name == "liability":         # owing nothing is a value: a line at zero
                    assert "<circle data-series" in body and "data-empty" not in body
                else:
                    assert empty in body and 'data-empty="1"' in body and "<rect data-series" not in body
    body = signed_in.get("/dashboard?lang=en").get_data(as_text=True)
    assert 'id="open-discrepancies" data-count="0"' in body and "¥0.00" in body and "OK" in body


@pytest.mark.parametrize("to", ["1970-01-01", "9998-12-31"])
def test_the_first_and_last_reportable_days(signed_in, to):
    for name in CHARTS:
        for by in GRANULARITIES:
            assert signed_in.get(f"/charts/{name}?by={by}&to={to}").status_code == 200, (name, by, to)


@pytest.mark.parametrize("query,reason", [("by=year", "by: one of day, week, month"),
                                          ("to=9999-12-31", "outside"), ("to=12/01/2026", "not a date"),
                                          ("to=1969-12-31", "outside")])
def test_bad_input_is_a_400_with_the_reason(signed_in, query, reason):
    resp = signed_in.get(f"/charts/sales?{query}")
    assert resp.status_code == 400 and reason in resp.get_data(as_text=True)


def test_an_unknown_chart_is_404(signed_in):
    assert signed_in.get("/charts/nope").status_code == 404
    assert signed_in.get("/charts/").status_code == 200          # the first chart


def _entries_read(engine, client, path: str) -> int:
    """How many statements that GET sends to the database that read ledger_entries (a
    SQLAlchemy event on the real engine)."""
    seen = []
    listen = lambda conn, cursor, statement, *rest: seen.append(statement)
    event.listen(engine, "before_cursor_execute", listen)
    try:
        assert client.get(path).status_code == 200
    finally:
        event.remove(engine, "before_cursor_execute", listen)
    return sum("ledger_entries" in s for s in seen)


def test_warming_reads_the_entries_before_the_first_view(engine, signed_in, clock):
    now_ms = int(time.time() * 1000)
    batch = [(f"{now_ms - k * 3_600_000}-{k}",
              {"txn": f"w{k}", "kind": "deduct" if k % 3 else "credit", "acct": f"W-{k % 4}", "amt": "-5" if k % 3
               else "500", "bal": "0", "ts": str(now_ms - k * 3_600_000), "term": f"T{k % 2}", "cash": "c1",
               "pd": "-5" if k % 3 else "450", "bd": "0" if k % 3 else "50", **({} if k % 3 else {"m": "cash"})})
             for k in range(0, 24 * 20)]
    assert apply_batch(engine, 0, batch).quarantined == 0
    paths = ["/charts/tills?by=day", "/charts/promotions?by=day", "/charts/sales?by=day"]
    assert all(_entries_read(engine, signed_in, p) for p in paths)          # cold: the entries are read
    assert not any(_entries_read(engine, signed_in, p) for p in paths)      # then kept
    other = create_app(engine, ZoneInfo("Asia/Shanghai"), throttle=LoginThrottle(clock=clock)).test_client()
    assert login(other, PASSWORD).status_code == 302
    other.application.extensions["backoffice_warm"]()
    assert not any(_entries_read(engine, other, p) for p in paths)         # warmed: not read on the first view


def test_warming_waits_for_the_schema_and_gives_up_quietly(pg_url):
    """The daemon starts the page before it migrates: the first tries fail, a later one
    reads the charts; a database that never comes up leaves it to the first request."""
    from reconcile_service import db as dbmod
    from reconcile_service.web.server import BackofficeServer
    bare = dbmod.make_engine(pg_url)
    try:
        never = BackofficeServer(bare, "127.0.0.1", 0, "Asia/Shanghai")
        never._warm(attempts=2, every_s=0.05)
        assert never.warmed.is_set() and never.warm_s is None
        never.close()

        later = BackofficeServer(bare, "127.0.0.1", 0, "Asia/Shanghai")
        worker = threading.Thread(target=later._warm, kwargs=dict(attempts=100, every_s=0.1))
        worker.start()
        time.sleep(0.5)
        assert not later.warmed.is_set()             # still trying: no tables yet
        dbmod.migrate(bare)
        assert later.warmed.wait(30) and later.warm_s is not None
        worker.join(5)
        later.close()
    finally:
        bare.dispose()
