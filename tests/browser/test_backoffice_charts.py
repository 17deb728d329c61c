"""The dashboard and the chart pages in a real headless Chromium (Debian's chromium and
chromedriver, Selenium), served by the real daemon over a PostgreSQL book holding
today's traffic (drained from the real Redis) and a generated November of every kind
(applied by the real store): every number the pages show, in the SVG's data-minor and
in the table under each chart, equals what `reconcile-service report` computes for the
same periods (liability per day, week and month; breakdown per terminal, cashier and
promotion; members), and the pages read in Chinese. With CASHIER_SCREENSHOT_DIR set it
saves the screenshots used in docs/reconcile.md."""
from __future__ import annotations

import json
import random
from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from reconcile_service import db as dbmod
from reconcile_service.models import Discrepancy
from reconcile_service.reports import book
from reconcile_service.web.auth import set_password
from tests.browser.test_backoffice_page import (CHROMEDRIVER, CHROMIUM, PASSWORD, _free_port, _shot,
                                                _wait_listening, pytestmark)  # noqa: F401
from tests.reconcile.conftest import open_accounts, run_cli, spawn, workload
from tests.reconcile.test_reports_liability import apply_month, month_of_traffic
from tests.support.postgres import fresh_database

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service as ChromeService  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

ZONE = ZoneInfo("Asia/Shanghai")       # the daemon's and the CLI's default shop_timezone
NOVEMBER_END = "2026-11-30"


@pytest.fixture
def book_served(ledger, redis_url, tmp_path):
    accounts = open_accounts(ledger, 6)
    ledger.open_account("VIP-8", txn_id="open-VIP-8", initial_minor=50_000, holder_name="王小明")
    workload(ledger, accounts + ["VIP-8"], 300, seed=8)
    with fresh_database() as url:
        assert run_cli("run", "--once", redis_url=redis_url, database_url=url) == 0
        engine = dbmod.make_engine(url)
        apply_month(engine, month_of_traffic(random.Random(3), 25, 30))
        with engine.begin() as conn:
            conn.execute(Discrepancy.__table__.insert().values(
                kind="balance_mismatch", account_id="A-00001", cause="Redis says 1.00 more", evidence_json="{}",
                status="open", found_at=datetime.now(timezone.utc)))
        set_password(engine, "owner", PASSWORD)
        engine.dispose()
        port = _free_port()
        proc = spawn("run", "--backoffice-port", str(port), "--metrics-port", "0", "--log-format", "text",
                     redis_url=redis_url, database_url=url, log_path=tmp_path / "daemon.log")
        try:
            _wait_listening(port, proc)
            yield f"http://127.0.0.1:{port}", url, redis_url
        finally:
            proc.terminate()
            proc.wait(timeout=30)


@pytest.fixture
def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--no-first-run", "--disable-dev-shm-usage", "--window-size=1280,1000", "--lang=en-US"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=ChromeService(executable_path=CHROMEDRIVER), options=opts)
    yield driver
    driver.quit()


class Reports:
    """`reconcile-service report ... --format json` in this process, remembered."""

    def __init__(self, url, redis_url, capsys):
        self.url, self.redis_url, self.capsys, self.seen = url, redis_url, capsys, {}

    def __call__(self, *args: str):
        if args not in self.seen:
            self.capsys.readouterr()
            code = run_cli("report", *args, "--format", "json", redis_url=self.redis_url, database_url=self.url)
            assert code == 0, args
            self.seen[args] = json.loads(self.capsys.readouterr().out)
        return self.seen[args]

    def liability(self, first: date, last: date) -> dict:
        rep = self("liability", "--from", first.isoformat(), "--to", last.isoformat())
        lines = {(l["key"], l["detail"]): l for l in rep["lines"]}
        return dict(rep=rep, lines=lines)


def log_in(driver, base: str) -> WebDriverWait:
    wait = WebDriverWait(driver, 30)
    driver.get(base + "/dashboard")
    wait.until(EC.presence_of_element_located((By.ID, "login-form")))
    driver.find_element(By.ID, "username").send_keys("owner")
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.ID, "login-submit").click()
    wait.until(EC.presence_of_element_located((By.ID, "today-tiles")))
    return wait


def values(driver, selector: str) -> dict[tuple[str, str], int]:
    found = driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map(e => "
        "[e.getAttribute('data-series'), e.getAttribute('data-category'), e.getAttribute('data-minor')])", selector)
    out = {(s, c): int(v) for s, c, v in found}
    assert len(out) == len(found), "a (series, category) shown twice"
    return out


def chart(driver, wait, base, name, by, to=NOVEMBER_END, lang="en", chart_id=None):
    driver.get(f"{base}/charts/{name}?by={by}&to={to}&lang={lang}")
    if not driver.find_elements(By.CSS_SELECTOR, "svg.chart"):
        raise AssertionError(driver.page_source[:3000])
    chart_id = chart_id or f"chart-{name}"
    table = values(driver, f"#table-{chart_id} td[data-minor]")
    drawn = values(driver, f"svg#{chart_id} [data-minor]")
    assert table, f"{name}: the table is empty"
    if drawn:        # every bar or point is a cell of the table (the table may have more columns)
        assert drawn == {k: v for k, v in table.items() if k[0] in {s for s, _ in drawn}}
    else:
        assert driver.find_elements(By.CSS_SELECTOR, f"svg#{chart_id} [data-empty]") and not any(table.values())
    return table


def category(first: date, last: date, by: str) -> str:
    return {"day": first.isoformat(), "week": f"{first}..{last}", "month": f"{first.year:04d}-{first.month:02d}"}[by]


def test_every_chart_shows_what_report_computes(book_served, browser, capsys):
    base, url, redis_url = book_served
    report = Reports(url, redis_url, capsys)
    wait = log_in(browser, base)
    today = datetime.now(ZONE).date()
    for by, to in (("day", NOVEMBER_END), ("week", NOVEMBER_END), ("month", NOVEMBER_END), ("day", today.isoformat())):
        last = date.fromisoformat(to)
        periods = book.period_days(by, last)
        want_sales, want_topups, want_liab = {}, {}, {}
        for first, end in periods:
            cat = category(first, end, by)
            r = report.liability(first, end)
            spent, lines = r["lines"][("spent", "")], r["lines"]
            want_sales[("spent_principal", cat)] = spent["principal_minor"]
            want_sales[("spent_bonus", cat)] = spent["bonus_minor"]
            for (key, detail), line in lines.items():
                if key == "topup":
                    want_topups[(f"topup_{detail}", cat)] = line["principal_minor"]
            want_topups[("bonus_granted", cat)] = lines[("bonus_granted", "")]["bonus_minor"]
            want_liab[("closing_principal", cat)] = r["rep"]["closing"]["principal_minor"]
            want_liab[("closing_bonus", cat)] = r["rep"]["closing"]["bonus_minor"]
            assert r["rep"]["balanced"] is True
        assert chart(browser, wait, base, "sales", by, to) == want_sales
        assert chart(browser, wait, base, "sales", by, to, chart_id="chart-refunds") == {
            ("refunds", category(f, l, by)): report.liability(f, l)["lines"][("refunds", "")]["principal_minor"]
            + report.liability(f, l)["lines"][("refunds", "")]["bonus_minor"] for f, l in periods}
        shown = chart(browser, wait, base, "topups", by, to)
        # a method with no top-up in any period is left out of the chart; the report leaves
        # "method not recorded" out of a period without one (the chart: 0)
        assert shown == {k: want_topups.get(k, 0) for k in shown}
        assert set(shown) >= {k for k, v in want_topups.items() if v} and len(shown) == len(periods) * len(
            {s for s, _ in shown})
        assert chart(browser, wait, base, "liability", by, to) == want_liab
        assert browser.find_element(By.ID, "note-chart-liability").text.endswith("OK")
        assert sum(want_sales.values()) > 0 and sum(want_topups.values()) > 0
        if by == "day" and to == NOVEMBER_END:
            _shot(browser, "backoffice-chart-liability-en.png")

    # per terminal and per cashier over the 30 days to the end of November
    nov = ("--from", "2026-11-01", "--to", NOVEMBER_END)
    for by, chart_id, n in (("terminal", "chart-terminals", 3), ("cashier", "chart-cashiers", 4)):
        sums = report("breakdown", "--by", by, *nov)["sums"]
        want = {("spent", k): -(v["spent"][0] + v["spent"][1]) for k, v in sums.items() if "spent" in v}
        assert chart(browser, wait, base, "tills", "day", chart_id=chart_id) == want and len(want) == n

    members = report("members", *nov, "--top", "10")["members"]
    shown = chart(browser, wait, base, "members", "day")
    assert len(members) == 10 and len(shown) == 30
    for m in members:
        label = m["account_id"] + (f" {m['holder_name']}" if m["holder_name"] else "")
        assert (shown[("spent", label)], shown[("spent_principal", label)], shown[("spent_bonus", label)]) == \
            (m["spent_minor"], m["principal_minor"], m["bonus_minor"])

    want = {}
    for first, end in book.period_days("week", date.fromisoformat(NOVEMBER_END)):
        sums = report("breakdown", "--by", "promotion", "--from", first.isoformat(), "--to", end.isoformat())["sums"]
        cat = category(first, end, "week")
        topup = lambda k, i: sums.get(k, {}).get("topup", [0, 0, 0])[i]
        want[("topups_with_bonus", cat)] = topup("with_bonus", 0)
        want[("bonus_granted", cat)] = topup("with_bonus", 1)
        want[("topups_without_bonus", cat)] = topup("without_bonus", 0)
    assert chart(browser, wait, base, "promotions", "week") == want
    assert sum(v for (s, _), v in want.items() if s == "bonus_granted") > 0

    # in Chinese: the legend, the tabs and the axis
    chart(browser, wait, base, "topups", "day", lang="zh_CN")
    svg_text = browser.find_element(By.ID, "chart-topups").get_attribute("innerHTML")
    assert "赠送金发放" in svg_text and "微信支付" in svg_text
    assert "负债走势" in browser.find_element(By.ID, "chart-tabs").text
    _shot(browser, "backoffice-chart-topups-zh_CN.png")
    chart(browser, wait, base, "topups", "day", lang="en")
    assert "WeChat Pay" in browser.find_element(By.ID, "chart-topups").get_attribute("innerHTML")
    _shot(browser, "backoffice-chart-topups-en.png")


def test_the_dashboard_shows_today_as_report_does(book_served, browser, capsys):
    base, url, redis_url = book_served
    report = Reports(url, redis_url, capsys)
    wait = log_in(browser, base)
    today = datetime.now(ZONE).date()
    r = report.liability(today, today)
    lines = r["lines"]
    minor = lambda css: int(browser.find_element(By.CSS_SELECTOR, css).get_attribute("data-minor"))
    spent = lines[("spent", "")]
    assert minor("#tile-sales .big") == spent["principal_minor"] + spent["bonus_minor"] > 0
    topups = {d: l["principal_minor"] for (k, d), l in lines.items() if k == "topup"}
    assert minor("#tile-topups .big") == sum(topups.values()) > 0
    assert minor("#bonus-today") == lines[("bonus_granted", "")]["bonus_minor"]
    assert minor("#refunds-today") == lines[("refunds", "")]["principal_minor"] + lines[("refunds", "")]["bonus_minor"]
    closing = r["rep"]["closing"]
    assert (minor("#closing-principal"), minor("#closing-bonus")) == (closing["principal_minor"],
                                                                      closing["bonus_minor"])
    assert browser.find_element(By.ID, "dash-check").text.endswith("OK") and r["rep"]["balanced"]
    shown_methods = {e.get_attribute("data-method"): int(e.get_attribute("data-minor"))
                     for e in browser.find_elements(By.CSS_SELECTOR, "#topups-by-method td[data-method]")}
    assert shown_methods == {m: v for m, v in topups.items() if v}
    # the text is formatted only at display: ¥ and thousands separators
    big = browser.find_element(By.CSS_SELECTOR, "#tile-liability .big").text
    total = closing["principal_minor"] + closing["bonus_minor"]
    assert big == f"¥{total // 100:,}.{total % 100:02d}"

    open_ones = report("discrepancies")
    assert int(browser.find_element(By.ID, "open-discrepancies").get_attribute("data-count")) == len(open_ones) == 1
    assert "Redis says 1.00 more" in browser.find_element(By.ID, "dash-discrepancies").text

    sums = report("breakdown", "--by", "terminal", "--date", today.isoformat())["sums"]
    rows = {e.get_attribute("data-terminal"): int(e.find_element(By.CSS_SELECTOR, "td[data-minor]")
                                                 .get_attribute("data-minor"))
            for e in browser.find_elements(By.CSS_SELECTOR, "#tills tr[data-terminal]")}
    assert rows == {k: -(v.get("spent", [0, 0])[0] + v.get("spent", [0, 0])[1]) for k, v in sums.items() if k}
    assert rows.get("T1", 0) > 0
    _shot(browser, "backoffice-dashboard-en.png")

    browser.get(base + "/dashboard?lang=zh_CN")
    wait.until(EC.presence_of_element_located((By.ID, "today-tiles")))
    tiles = browser.find_element(By.ID, "today-tiles").text
    assert "今日结束时的负债" in tiles and "核对" in tiles and "一致" in tiles
    assert minor("#tile-sales .big") == spent["principal_minor"] + spent["bonus_minor"]
    _shot(browser, "backoffice-dashboard-zh_CN.png")

    browser.find_element(By.ID, "nav-charts").click()
    wait.until(EC.presence_of_element_located((By.ID, "chart-sales")))
    assert browser.find_element(By.ID, "by-week").text == "周"
