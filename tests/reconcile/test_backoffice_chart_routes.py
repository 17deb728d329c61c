"""The dashboard and the chart pages' edges, through the real Flask app on a real
PostgreSQL database of record: both need a sign-in; an empty book draws every chart
as "no data" (the liability as a line at zero; the dashboard as zeros) instead of failing; the first and last days a
report may name work at every granularity; a wrong granularity, date or chart name is
answered 400 / 404 with the reason."""
from __future__ import annotations

import re

import pytest

from reconcile_service.web.views import CHARTS, GRANULARITIES
from tests.reconcile.test_backoffice_hardening import client, clock, engine, signed_in  # noqa: F401


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
