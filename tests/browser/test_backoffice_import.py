"""The import page (issue 29 item 6 through the browser) in a real headless Chromium,
served by the real daemon over the real Redis and PostgreSQL: a 10,000-member CSV with
20 bad rows (amounts, phones, cards twice in the file) is uploaded, its columns mapped
(detected from the Chinese headers), the dry run lists exactly the 20 with their line
numbers and writes nothing, the apply opens the other 9,980 (Redis and the drained book
agree, totals = the dry run's), and the same file again changes nothing (every member
"imported earlier", Redis and the book as they were). A manager is refused the page."""
from __future__ import annotations

import time

import pytest
from sqlalchemy import func, select

from core.money import format_minor
from reconcile_service.models import Account, AuditRecord, LedgerEntry
from reconcile_service.verify import verify
from tests.browser.test_backoffice_manage import Page, shop  # noqa: F401 (fixture)
from tests.browser.test_backoffice_page import CHROMEDRIVER, CHROMIUM, _shot, browser  # noqa: F401 (fixture)

selenium = pytest.importorskip("selenium")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not (__import__("pathlib").Path(CHROMIUM).exists()
                                      and __import__("pathlib").Path(CHROMEDRIVER).exists()),
                                 reason="needs Debian's chromium and chromium-driver (.ci/run installs them)")]

MEMBERS, BAD = 10_000, 20


def _principal_minor(i: int) -> int:
    return ((i % 900) + 1) * 100 + i % 100          # the file's "<yuan>.<fen>" of member i


def _file(tmp_path):
    """The old system's export: header on line 1, member i on line i + 2; every 500th
    row is bad (20 of them): a bad amount, a bad phone, or a card already on line 2."""
    lines = ["会员编号,会员卡号,姓名,手机号,余额,赠送余额"]
    bad_lines, principal, bonus = [], 0, 0
    for i in range(MEMBERS):
        line = i + 2
        card, phone, amount, extra = f"OLD{i:06d}", f"139{i:08d}", f"{(i % 900) + 1}.{i % 100:02d}", f"{i % 7}.00"
        if i % 500 == 499:
            bad_lines.append(line)
            kind = (i // 500) % 3
            if kind == 0:
                amount = "12.345"                  # three decimals
            elif kind == 1:
                phone = "12"                       # too short
            else:
                card = "OLD000000"                 # line 2's card again
        else:
            principal += _principal_minor(i)
            bonus += int(extra.split(".")[0]) * 100
        lines.append(f"M{i:06d},{card},会员{i},{phone},{amount},{extra}")
    path = tmp_path / "旧系统会员.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8-sig")
    return path, bad_lines, principal, bonus


def _run(p: Page, path, *, screenshots: str = ""):
    p.d.get(p.base + "/manage/import")
    p.wait.until(EC.presence_of_element_located((By.ID, "import-file"))).send_keys(str(path))
    p.d.find_element(By.ID, "submit-import-upload").click()
    mapped = p.wait.until(EC.presence_of_element_located((By.ID, "form-import-map")))
    assert Select(p.d.find_element(By.ID, "map-card")).first_selected_option.text == "会员卡号"
    assert Select(p.d.find_element(By.ID, "map-principal")).first_selected_option.text == "余额"
    assert mapped
    if screenshots:
        _shot(p.d, f"backoffice-manage-import-map-{screenshots}.png")
    p.d.find_element(By.ID, "submit-import-plan").click()
    WebDriverWait(p.d, 120).until(EC.presence_of_element_located((By.ID, "import-plan")))
    if screenshots:
        _shot(p.d, f"backoffice-manage-import-plan-{screenshots}.png")
    plan = {k: p.d.find_element(By.ID, f"plan-{k}").text for k in ("rows", "members", "already", "refused")}
    problems = [r.find_elements(By.TAG_NAME, "td")[0].text for r in p.d.find_elements(By.CSS_SELECTOR, "tr.problem-row")]
    p.d.find_element(By.ID, "submit-import-apply").click()
    WebDriverWait(p.d, 300).until(EC.presence_of_element_located((By.ID, "import-done")))
    if screenshots:
        _shot(p.d, f"backoffice-manage-import-done-{screenshots}.png")
    done = {k: p.d.find_element(By.ID, f"done-{k}").text for k in ("created", "replayed", "declined", "refused",
                                                                    "totals", "check")}
    return plan, [int(x) for x in problems], done


def _book(engine) -> tuple[int, int]:
    with engine.connect() as conn:
        opens = conn.execute(select(func.count()).select_from(LedgerEntry).where(
            LedgerEntry.kind == "open", LedgerEntry.txn_id.like("imp:%"))).scalar()
        total = conn.execute(select(func.coalesce(func.sum(Account.principal_minor), 0)).where(
            Account.account_id.like("M%"))).scalar()
    return opens, int(total)


def _wait_book(engine, want: tuple[int, int], timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if _book(engine) == want:
            return
        time.sleep(0.5)
    raise AssertionError(f"the book has {_book(engine)}, wanted {want}")


def test_import_10000_members_with_20_bad_rows_through_the_page(shop, browser, ledger, tmp_path):
    base, engine = shop
    path, bad_lines, principal, bonus = _file(tmp_path)
    good = MEMBERS - BAD
    p = Page(browser, base)
    p.login("boss")

    # refused: not a CSV or .xlsx; a file without a balance column (the mapping step says which)
    old_xls = tmp_path / "members.xls"
    old_xls.write_bytes(b"\xd0\xcf\x11\xe0 not really")
    p.d.get(base + "/manage/import")
    p.wait.until(EC.presence_of_element_located((By.ID, "import-file"))).send_keys(str(old_xls))
    p.d.find_element(By.ID, "submit-import-upload").click()
    assert "file: members.xls: a .csv or .xlsx file" in p._find("error-import")
    no_balance = tmp_path / "no-balance.csv"
    no_balance.write_text("会员卡号,姓名\n8800,张三\n", encoding="utf-8")
    p.d.get(base + "/manage/import")
    p.wait.until(EC.presence_of_element_located((By.ID, "import-file"))).send_keys(str(no_balance))
    p.d.find_element(By.ID, "submit-import-upload").click()
    p.wait.until(EC.presence_of_element_located((By.ID, "submit-import-plan"))).click()
    assert "map.principal: which column is the balance?" in p._find("error-import")
    with pytest.raises(Exception):
        ledger.account("8800")

    started = time.monotonic()
    plan, problems, done = _run(p, path, screenshots="en")
    took_s = time.monotonic() - started
    assert plan == {"rows": str(MEMBERS), "members": str(good), "already": "0", "refused": str(BAD)}
    assert problems == bad_lines
    assert done["created"] == str(good) and done["replayed"] == "0" and done["declined"] == "0"
    assert done["totals"] == f"{good} · {format_minor(principal)} · {format_minor(bonus)}" and done["check"] == "OK"
    print(f"10,000-member import through the page (upload, dry run, apply): {took_s:.1f} s")

    # Redis has every good member with its card and balances; the bad lines' members none
    for i in (0, 1, 4998, 9998):
        info = ledger.account(f"M{i:06d}")
        assert info.principal_minor == _principal_minor(i)
        assert info.bonus_minor == (i % 7) * 100
        assert ledger.resolve_card(f"OLD{i:06d}").account_id == f"M{i:06d}"
    with pytest.raises(Exception):
        ledger.account(f"M{bad_lines[0] - 2:06d}")
    _wait_book(engine, (good, principal))
    # the reconciliation sheet of the apply: file = imported + refused
    sheet = p.d.execute_async_script(
        "const done = arguments[0]; fetch(document.getElementById('import-report').href)"
        ".then(r => r.text()).then(done);")
    assert "imported in all,9980," in sheet and "check: imported + refused = rows in the file,yes" in sheet

    # the same file again (in Chinese): the dry run says all were imported earlier, nothing changes
    p.d.get(base + "/manage/import?lang=zh_CN")
    plan, problems, done = _run(p, path, screenshots="zh_CN")
    assert plan == {"rows": str(MEMBERS), "members": str(good), "already": str(good), "refused": str(BAD)}
    assert problems == bad_lines
    assert done["created"] == "0" and done["replayed"] == str(good) and done["check"] == "OK"
    time.sleep(2)
    assert _book(engine) == (good, principal)
    with engine.connect() as conn:
        audits = conn.execute(select(AuditRecord.summary).where(AuditRecord.action == "import.apply")).scalars().all()
    assert len(audits) == 2 and "0 opened now" in audits[1]
    report = verify(ledger, engine)
    assert report.ok, report.as_dict()

    # a manager may not import
    from reconcile_service.web.auth import set_password
    set_password(engine, "mgr", "correct horse battery", "manager")
    p.login("mgr")
    p.d.get(base + "/manage/import")
    assert "your role (manager) may not change import" in p.d.find_element(By.ID, "error").text
