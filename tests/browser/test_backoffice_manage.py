"""The back office's management forms (issue 29 items 1-3) in a real headless Chromium,
served by the real daemon (`reconcile-service run --backoffice-port`) over the real Redis
and PostgreSQL: every form once with a success and once refused (the CLI's words, next
to the form, nothing changed), destructive actions behind a confirmation page, a clerk
refused every write (a 403 naming the reason, also for a POST made by hand), a form
whose CSRF token is missing or wrong refused, and every change in the Audit page and in
the hash-chained book (verify clean). With CASHIER_SCREENSHOT_DIR set it also saves the
screenshots of docs/reconcile.md (backoffice-manage-*.png, en and zh_CN)."""
from __future__ import annotations

import json
import time
from datetime import datetime, timezone

import pytest
from sqlalchemy import func, select

from core.cashiers import CashierRegistry
from core.terminals import TerminalRegistry
from reconcile_service import db as dbmod
from reconcile_service.models import AuditRecord, Discrepancy, LedgerEntry
from reconcile_service.verify import verify
from reconcile_service.web.auth import set_password
from tests.browser.test_backoffice_page import (CHROMEDRIVER, CHROMIUM, PASSWORD, _free_port, _shot,
                                                _wait_listening, browser)  # noqa: F401 (fixture)
from tests.reconcile.conftest import open_accounts, run_cli, spawn
from tests.support.postgres import fresh_database

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (__import__("pathlib").Path(CHROMIUM).exists()
                                      and __import__("pathlib").Path(CHROMEDRIVER).exists()),
                                 reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")]


@pytest.fixture
def shop(ledger, redis_url, tmp_path):
    """The daemon serving the page over a drained book; logins boss (owner) and clerk1."""
    open_accounts(ledger, 3)
    ledger.open_account("VIP-1", txn_id="open-VIP-1", initial_minor=12_345, bonus_minor=2_000, holder_name="王芳")
    with fresh_database() as url:
        assert run_cli("run", "--once", redis_url=redis_url, database_url=url) == 0
        engine = dbmod.make_engine(url)
        set_password(engine, "boss", PASSWORD, "owner")
        set_password(engine, "clerk1", PASSWORD, "clerk")
        with engine.begin() as conn:
            conn.execute(Discrepancy.__table__.insert().values(
                kind="balance_mismatch", account_id="A-00001", cause="Redis 100 != database 90",
                evidence_json="{}", status="open", found_at=datetime.now(timezone.utc)))
        port = _free_port()
        proc = spawn("run", "--backoffice-port", str(port), "--metrics-port", "0", "--log-format", "text",
                     redis_url=redis_url, database_url=url, log_path=tmp_path / "daemon.log")
        try:
            _wait_listening(port, proc)
            yield f"http://127.0.0.1:{port}", engine
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            engine.dispose()


class Page:
    def __init__(self, driver, base: str):
        self.d, self.base = driver, base
        self.wait = WebDriverWait(driver, 10)

    def login(self, user: str, password: str = PASSWORD) -> None:
        self.d.delete_all_cookies()
        self.d.get(self.base + "/login")
        self.wait.until(EC.presence_of_element_located((By.ID, "login-form")))
        self.d.find_element(By.ID, "username").send_keys(user)
        self.d.find_element(By.ID, "password").send_keys(password)
        self.d.find_element(By.ID, "login-submit").click()
        self.wait.until(EC.presence_of_element_located((By.ID, "nav-manage")))

    def open(self, area: str) -> None:
        self.d.get(f"{self.base}/manage/{area}")
        self.wait.until(EC.presence_of_element_located((By.ID, f"area-{area}")))

    def fill(self, fid: str, values: dict) -> None:
        for name, value in values.items():
            el = self.d.find_element(By.ID, f"{fid}-{name}")
            if el.tag_name == "select":
                el.find_element(By.CSS_SELECTOR, f"option[value='{value}']").click()
            elif el.get_attribute("type") == "date":       # typed per the browser's locale: set the value
                self.d.execute_script("arguments[0].value = arguments[1]", el, value)
            elif el.get_attribute("type") == "checkbox":
                if el.is_selected() != bool(value):
                    el.click()
            else:
                el.clear()
                el.send_keys(value)

    def submit(self, area: str, fid: str, values: dict, *, confirm: bool = False, preview: str = "") -> None:
        self.open(area)
        self.fill(fid, values)
        self.d.find_element(By.ID, f"submit-{fid}").click()
        if confirm:
            shown = self.wait.until(EC.presence_of_element_located((By.ID, "confirm-preview"))).text
            assert preview in shown, shown
            if "pay out" in shown:
                _shot(self.d, "backoffice-manage-confirm-close-en.png")
            self.d.find_element(By.ID, "confirm-yes").click()

    def _find(self, element_id: str) -> str:
        try:
            return self.wait.until(EC.presence_of_element_located((By.ID, element_id))).text
        except Exception:        # noqa: BLE001 (say what the page showed instead)
            raise AssertionError(f"no #{element_id}; the page says: "
                                 f"{self.d.find_element(By.TAG_NAME, 'main').text[:600]}") from None

    def done(self) -> str:
        return self._find("flash")

    def refused(self, area: str, action: str) -> str:
        return self._find(f"error-{area}-{action}")


# (succeeds, area, action, form id, values, confirmation words or None, expected words):
# each form done, then refused; run in this order (later rows use earlier ones)
CASES = [
    (True, "members", "open", "members-open", dict(account="NEW-1", holder="张三", phone="13900000001"), None,
     "member NEW-1 opened"),
    (False, "members", "open", "members-open", dict(account="bad id!"), None,
     "account_id: only A-Z a-z 0-9 . _ : - are allowed"),
    (True, "members", "edit", "members-edit", dict(account="NEW-1", holder="张三丰", phone="13900000011"), None,
     "member NEW-1: name 张三丰, phone 13900000011"),
    (False, "members", "edit", "members-edit", dict(account="A-00001", phone="13900000011"), None,
     "update A-00001: declined: PHONE_TAKEN"),
    (True, "cards", "issue", "cards-issue", dict(account="A-00000", card_no="C-100"), None, "card C-100 for A-00000: done"),
    (False, "cards", "issue", "cards-issue", dict(account="NO-SUCH", card_no="C-101"), None,
     "card C-101 for NO-SUCH: declined: ACCOUNT_NOT_FOUND"),
    (True, "cards", "block", "cards-block", dict(card_no="C-100", reason="lost"), "block card C-100 of A-00000",
     "block card C-100 (lost): done"),
    (False, "cards", "block", "cards-block", dict(card_no="C-100", reason="stolen"), "block card C-100",
     "block card C-100 (stolen): declined: CARD_BLOCKED"),
    (True, "cards", "replace", "cards-replace", dict(card_no="C-100", new_card_no="C-102", reason="lost"),
     "new card C-102", "card C-100 replaced by C-102 for A-00000"),
    (False, "cards", "replace", "cards-replace", dict(card_no="C-102", new_card_no="bad no!", reason="damaged"), None,
     "new_card_no: only A-Z a-z 0-9 . _ : - are allowed"),
    (True, "promotions", "add", "promotions-add", dict(min="100", bonus="20", start="2026-01-01", end="2099-12-31"),
     None, "promotion min10000-bonus2000: top up 100.00, get 20.00 (2026-01-01 to 2099-12-31): done"),
    (False, "promotions", "add", "promotions-add", dict(min="abc", bonus="20"), None, "min: 'abc' is not an amount"),
    (False, "promotions", "add", "promotions-add", dict(min="100", bonus="20", start="2026-02-01", end="2026-01-01"),
     None, "end: must not be before the start"),
    (True, "cashiers", "add", "cashiers-add", dict(cashier_id="c9", name="小王", pin="2468", pin2="2468", supervisor=True),
     None, "cashier added: c9 小王 (supervisor)"),
    (False, "cashiers", "add", "cashiers-add", dict(cashier_id="c8", name="小李", pin="2468", pin2="1357"), None,
     "pin: the two PINs differ"),
    (True, "cashiers", "reset_pin", "cashiers-reset_pin", dict(cashier_id="c9", pin="97531", pin2="97531"), None,
     "PIN reset (and any lock lifted): c9"),
    (False, "cashiers", "reset_pin", "cashiers-reset_pin", dict(cashier_id="zz", pin="97531", pin2="97531"), None,
     "cashier_id: no cashier 'zz'"),
    (True, "cashiers", "rights", "cashiers-rights", dict(cashier_id="c9", supervisor=False, can_top_up=True), None,
     "cashier c9: supervisor no, can top up yes"),
    (False, "cashiers", "rights", "cashiers-rights", dict(cashier_id="zz"), None, "cashier_id: no cashier 'zz'"),
    (True, "cashiers", "disable", "cashiers-disable", dict(cashier_id="c9"), "disable cashier c9 (小王)",
     "cashier disabled: c9"),
    (False, "cashiers", "disable", "cashiers-disable", dict(cashier_id="zz"), None, "cashier_id: no cashier 'zz'"),
    (True, "cashiers", "enable", "cashiers-enable", dict(cashier_id="c9"), None, "cashier enabled: c9"),
    (False, "cashiers", "enable", "cashiers-enable", dict(cashier_id="zz"), None, "cashier_id: no cashier 'zz'"),
    (True, "settings", "set", "settings-spend_order", dict(value="bonus_first"), None, "spend order bonus_first: done"),
    (False, "settings", "set", "settings-balance_cap", dict(value="lots"), None, "balance_cap: 'lots' is not an amount"),
    (True, "settings", "set", "settings-member_pin_above", dict(value="200"), None,
     "member PIN needed above 200.00: done"),
    (False, "settings", "set", "settings-member_pin_above", dict(value="-1"), None,
     "member_pin_above: must not be negative"),
    (True, "terminals", "revoke", "terminals-revoke", dict(terminal_id="T7"), "revoke terminal T7",
     "terminal T7 revoked"),
    (False, "terminals", "revoke", "terminals-revoke", dict(terminal_id="T404"), None, "terminal_id: no terminal 'T404'"),
    (False, "terminals", "enroll", "terminals-enroll", dict(terminal_id="bad id!"), None,
     "terminal_id: only A-Z a-z 0-9 . _ : - are allowed"),
    (True, "discrepancies", "resolve", "discrepancies-resolve", dict(id="1", note="recounted the till: typo"), None,
     "discrepancy #1 resolved by boss: recounted the till: typo"),
    (False, "discrepancies", "resolve", "discrepancies-resolve", dict(id="1", note="again"), None,
     "id: discrepancy #1 is resolved, not open"),
    (True, "users", "add", "users-add", dict(username="mgr2", password="long enough pw", role="manager"), None,
     "back-office user mgr2 (manager) created"),
    (False, "users", "add", "users-add", dict(username="mgr3", password="short", role="manager"), None,
     "password: at least 10 characters"),
    (True, "users", "role", "users-role", dict(username="mgr2", role="clerk"), None, "back-office user mgr2: role clerk"),
    (False, "users", "role", "users-role", dict(username="nobody", role="clerk"), None, "username: no login 'nobody'"),
    (True, "members", "close", "members-close", dict(account="VIP-1"),
     "close VIP-1 (active): pay out 123.45 in cash, bonus forfeited 20.00",
     "close VIP-1: pay out 123.45 in cash, bonus forfeited 20.00"),
    (False, "members", "close", "members-close", dict(account="NOPE-9"), None, "account_id: no account 'NOPE-9'"),
]


def _wait_for(check, timeout_s: float = 30):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError("not in time")


def test_every_management_form_succeeds_and_is_refused_with_the_clis_words(shop, browser, ledger):
    base, engine = shop
    TerminalRegistry(ledger.client).enroll("T7")
    p = Page(browser, base)
    p.login("boss")
    audited = 0
    for success, area, action, fid, values, confirm, words in CASES:
        p.submit(area, fid, values, confirm=confirm is not None, preview=confirm or "")
        if success:
            assert words in p.done(), (area, action)
            audited += 1
        else:
            assert words in p.refused(area, action), (area, action, p.d.page_source[:2000])
    p.open("members")
    _shot(browser, "backoffice-manage-members-en.png")

    # what the forms did, read from Redis
    assert ledger.account("NEW-1").holder_name == "张三丰" and ledger.member_phone("NEW-1") == "13900000011"
    assert ledger.member_phone("A-00001") == ""
    assert ledger.account("VIP-1").status == "closed"
    assert {c.card_no: c.status.value for c in ledger.cards("A-00000")} == {"C-100": "CARD_BLOCKED",
                                                                            "C-102": "CARD_ACTIVE"}
    [promo] = ledger.promotions()
    shanghai = 8 * 3600 * 1000           # the shop's zone (Asia/Shanghai): its days start at 16:00 UTC
    assert (promo.promo_id, promo.min_minor, promo.bonus_minor, promo.starts_ms, promo.ends_ms) == (
        "min10000-bonus2000", 10_000, 2_000, 1_767_225_600_000 - shanghai, 4_102_444_800_000 - shanghai)
    assert ledger.bonus_for(10_000).bonus_minor == 2_000
    c9 = CashierRegistry(ledger.client).get("c9")
    assert (c9.name, c9.supervisor, c9.can_top_up, c9.disabled) == ("小王", False, True, False)
    assert CashierRegistry(ledger.client).get("c8") is None
    s = ledger.shop_settings()
    assert (s.spend_order, s.balance_cap_minor, s.member_pin_above_minor) == ("bonus_first", None, 20_000)
    assert TerminalRegistry(ledger.client).get("T7").revoked

    # the enrol form shows the token once
    p.submit("terminals", "terminals-enroll", dict(terminal_id="T8"))
    token = p.wait.until(EC.presence_of_element_located((By.ID, "secret"))).text
    assert token.startswith("T8.") and TerminalRegistry(ledger.client).authenticate(token) == "T8"
    audited += 1

    # every change is in the Audit page and, chained, in the book
    with engine.connect() as conn:
        _wait_for(lambda: conn.execute(select(func.count()).select_from(AuditRecord)).scalar() == audited)
    p.d.get(base + "/audit?user=boss")
    rows = p.wait.until(EC.presence_of_element_located((By.ID, "audit"))).find_elements(By.CSS_SELECTOR,
                                                                                        "tr.audit-row")
    assert len(rows) == audited
    text = p.d.find_element(By.ID, "audit").text
    assert "members.close" in text and "closed (退卡): pay out 123.45 in cash" in text and "127.0.0.1" in text
    # no PIN, password or token in the trail (the words of each record; ids are hex)
    with engine.connect() as conn:
        words = " ".join(" ".join(str(v) for k, v in json.loads(r).items() if k not in ("refs", "nonce"))
                         for r in conn.execute(select(AuditRecord.record_json)).scalars())
    assert not any(secret in words for secret in ("2468", "97531", "long enough pw", token, PASSWORD))
    assert "long enough pw" not in p.d.page_source and token not in p.d.page_source
    _shot(browser, "backoffice-manage-audit-en.png")
    report = verify(ledger, engine)
    assert report.ok, report.as_dict()
    assert report.checked["audit_records"] == audited
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(LedgerEntry).where(LedgerEntry.kind == "audit")
                            ).scalar() == audited

    # zh_CN: the page in Chinese
    p.d.get(base + "/manage/members?lang=zh_CN")
    assert "新会员开户" in p.wait.until(EC.presence_of_element_located((By.ID, "area-members"))).text
    _shot(browser, "backoffice-manage-members-zh_CN.png")
    p.d.get(base + "/manage/cashiers")
    assert "添加收银员" in p.d.page_source
    _shot(browser, "backoffice-manage-cashiers-zh_CN.png")
    p.d.get(base + "/audit")
    assert "审计记录" in p.d.page_source
    _shot(browser, "backoffice-manage-audit-zh_CN.png")
    p.d.get(base + "/manage/cashiers?lang=en")
    _shot(browser, "backoffice-manage-cashiers-en.png")


def test_promotion_removed_after_confirmation_and_refused_when_gone(shop, browser, ledger):
    base, _ = shop
    for pid in ("p1", "p2"):
        ledger.add_promotion(10_000, 2_000, promo_id=pid, txn_id=f"ctl-{pid}")
    p = Page(browser, base)
    p.login("boss")
    p.open("promotions")
    p.d.find_element(By.ID, "remove-p1").click()
    assert "remove promotion p1" in p.wait.until(EC.presence_of_element_located((By.ID, "confirm-preview"))).text
    p.d.find_element(By.ID, "confirm-yes").click()
    assert "remove promotion p1: done" in p.done()
    assert [x.promo_id for x in ledger.promotions()] == ["p2"]
    p.open("promotions")
    p.d.find_element(By.ID, "remove-p2").click()
    p.wait.until(EC.presence_of_element_located((By.ID, "confirm-yes")))
    ledger.remove_promotion("p2", txn_id="ctl-rm-p2")          # gone meanwhile (another owner)
    p.d.find_element(By.ID, "confirm-yes").click()
    assert "remove promotion p2: declined: SETTING_NOT_FOUND" in p.refused("promotions", "remove")


def test_own_password_change_and_refusal(shop, browser):
    base, _ = shop
    p = Page(browser, base)
    p.login("boss")
    p.d.get(base + "/account/password")
    for name, value in (("pw-old", "wrong password!"), ("pw-new", "a new long password"),
                        ("pw-new2", "a new long password")):
        p.d.find_element(By.ID, name).send_keys(value)
    p.d.find_element(By.ID, "pw-submit").click()
    assert "old_password: wrong password" in p.wait.until(
        EC.presence_of_element_located((By.ID, "error-password"))).text
    for name, value in (("pw-old", PASSWORD), ("pw-new", "a new long password"), ("pw-new2", "a new long password")):
        p.d.find_element(By.ID, name).send_keys(value)
    p.d.find_element(By.ID, "pw-submit").click()
    p.wait.until(EC.presence_of_element_located((By.ID, "login-form")))      # every session ended
    p.login("boss", "a new long password")


def _post_by_hand(p: Page, path: str, form: dict) -> tuple[int, str]:
    """A POST the page itself does not offer, made with fetch() from the signed-in page."""
    return tuple(p.d.execute_async_script(
        "const [path, form, done] = arguments;"
        "fetch(path, {method: 'POST', body: new URLSearchParams(form), credentials: 'same-origin'})"
        ".then(r => r.text().then(t => done([r.status, t])));", path, form))


def test_a_clerk_is_refused_every_write_and_csrf_is_checked(shop, browser, ledger):
    base, _ = shop
    p = Page(browser, base)
    p.login("clerk1")
    p.open("members")
    assert p.d.find_elements(By.ID, "form-members-open") == []          # the page hides it
    assert p.d.find_element(By.ID, "readonly")
    p.d.get(base + "/manage/cashiers")
    assert "your role (clerk) may not change cashiers" in p.d.find_element(By.ID, "error").text
    p.d.get(base + "/manage/members")
    csrf = p.d.find_element(By.CSS_SELECTOR, "header input[name=csrf]").get_attribute("value")
    status, body = _post_by_hand(p, "/manage/members/open", {"csrf": csrf, "txn": "bo-open-" + "ab" * 16,
                                                            "account": "BY-HAND"})
    assert status == 403 and "your role (clerk) may not change members" in body
    with pytest.raises(Exception):
        ledger.account("BY-HAND")

    p.login("boss")
    for token in ("wrong-token", None):
        p.open("members")
        p.fill("members-open", dict(account="CSRF-1"))
        if token is None:
            p.d.execute_script("document.querySelector('#form-members-open input[name=csrf]').remove()")
        else:
            p.d.execute_script("document.querySelector('#form-members-open input[name=csrf]').value = arguments[0]",
                               token)
        p.d.find_element(By.ID, "submit-members-open").click()
        assert "csrf: the form expired" in p.wait.until(EC.presence_of_element_located((By.ID, "error"))).text
    with pytest.raises(Exception):
        ledger.account("CSRF-1")
