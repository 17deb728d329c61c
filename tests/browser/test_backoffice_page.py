"""The back-office page in a real headless Chromium (Debian's chromium and chromedriver,
driven by Selenium), served by the real daemon (`reconcile-service run
--backoffice-port`) over a database it drained from the real Redis: a wrong password is
refused, the owner logs in, sees today's liability balanced, finds a member, opens the
statement and downloads a report (CSV and PDF land on disk). With
CASHIER_SCREENSHOT_DIR set it also saves the screenshots used in docs/reconcile.md."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from core.shifts import ShiftTotals, close_shift
from reconcile_service import db as dbmod
from reconcile_service.web.auth import set_password
from tests.reconcile.conftest import open_accounts, run_cli, spawn, workload
from tests.support.postgres import fresh_database

selenium = pytest.importorskip("selenium")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service as ChromeService  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
PASSWORD = "correct horse battery"

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
                                 reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(port: int, proc: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the daemon exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


@pytest.fixture
def served(ledger, redis_url, tmp_path):
    accounts = open_accounts(ledger, 6)
    ledger.open_account("VIP-8", txn_id="open-VIP-8", initial_minor=50_000, holder_name="王小明")
    workload(ledger, accounts + ["VIP-8"], 200, seed=4)
    close_shift(ledger, terminal_id="T1", shift_no=1, closed_by="sup1", cashier_id="c1",
                totals=ShiftTotals(sales_count=12, sales_minor=34_500))
    with fresh_database() as url:
        assert run_cli("run", "--once", redis_url=redis_url, database_url=url) == 0
        engine = dbmod.make_engine(url)
        set_password(engine, "owner", PASSWORD)
        engine.dispose()
        port = _free_port()
        proc = spawn("run", "--backoffice-port", str(port), "--metrics-port", "0", "--log-format", "text",
                     redis_url=redis_url, database_url=url, log_path=tmp_path / "daemon.log")
        try:
            _wait_listening(port, proc)
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            proc.wait(timeout=30)


@pytest.fixture
def browser(tmp_path):
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                "--disable-gpu", "--lang=en-US"):
        opts.add_argument(arg)
    opts.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                           "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=ChromeService(executable_path=CHROMEDRIVER), options=opts)
    driver.downloads = downloads
    yield driver
    driver.quit()


def _wait_file(folder: Path, suffix: str, timeout_s: float = 60) -> Path:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = [p for p in folder.iterdir() if p.name.endswith(suffix)]
        if done:
            return done[0]
        time.sleep(0.1)
    raise AssertionError(f"no {suffix} downloaded; have {[p.name for p in folder.iterdir()]}")


def _shot(driver, name: str) -> None:
    folder = os.environ.get("CASHIER_SCREENSHOT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(folder) / name))


def test_log_in_open_a_statement_and_download_reports(served, browser):
    wait = WebDriverWait(browser, 30)
    browser.get(served + "/")
    wait.until(EC.presence_of_element_located((By.ID, "login-form")))      # the page needs a login
    browser.find_element(By.ID, "username").send_keys("owner")
    browser.find_element(By.ID, "password").send_keys("not the password")
    browser.find_element(By.ID, "login-submit").click()
    assert "wrong user name or password" in wait.until(
        EC.presence_of_element_located((By.ID, "login-error"))).text

    browser.find_element(By.ID, "username").send_keys("owner")
    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    browser.find_element(By.ID, "login-submit").click()
    check = wait.until(EC.presence_of_element_located((By.ID, "check")))
    assert check.text.endswith("OK") and "Closing balance" in browser.find_element(By.ID, "liability").text
    _shot(browser, "backoffice-page.png")

    box = browser.find_element(By.ID, "search-q")
    box.send_keys("王小明")
    browser.find_element(By.ID, "search-submit").click()
    link = wait.until(EC.element_to_be_clickable((By.CSS_SELECTOR, "a.result-link")))
    assert link.text == "VIP-8"
    link.click()
    rows = wait.until(EC.presence_of_element_located((By.ID, "statement-rows")))
    body = rows.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert body and "open" in body[0].text and "500.00" in body[0].text
    _shot(browser, "backoffice-statement.png")

    browser.find_element(By.ID, "download-statement-csv").click()
    csv_file = _wait_file(browser.downloads, ".csv")
    text = csv_file.read_bytes().decode("utf-8-sig")
    assert "VIP-8" in text and len(text.splitlines()) >= len(body) + 1

    browser.get(served + "/?lang=zh_CN")
    wait.until(EC.presence_of_element_located((By.ID, "download-liability-pdf"))).click()
    pdf = _wait_file(browser.downloads, ".pdf")
    assert pdf.read_bytes().startswith(b"%PDF")
    assert "期末余额" in browser.find_element(By.ID, "liability").text

    browser.find_element(By.ID, "logout").click()
    browser.get(served + "/statement/VIP-8")
    wait.until(EC.presence_of_element_located((By.ID, "login-form")))    # logged out: back to the login
