"""The book of record knows offline debts (issue 27): `run --once` writes an offline_debts
row for each offline sale that left a debt and each top-up that paid one; verify is green
when the book's debts equal Redis's and finds a debt changed outside the scripts;
`report debts` lists the open ones with their till, cashier and time."""
from __future__ import annotations

import json
import time

from reconcile_service.reports import book
from reconcile_service.verify import verify
from tests.reconcile.conftest import open_accounts, run_cli

MADE_AT_MS = int(time.time() * 1000) - 600_000


def _outage(ledger) -> list[str]:
    accounts = open_accounts(ledger, 3, initial_minor=5_000)
    a, b, c = accounts
    ledger.set_offline_limits(txn_id="lim-1", member_limit_minor=10_000)
    # a at two tills past its balance: 4,000 + 3,000 of 5,000 -> a debt of 2,000
    assert ledger.offline_deduct(a, 4_000, txn_id="T1-f-1", terminal_id="T1", cashier_id="C1",
                                 made_at_ms=MADE_AT_MS).debt_minor == 0
    assert ledger.offline_deduct(a, 3_000, txn_id="T2-f-1", terminal_id="T2", cashier_id="C2",
                                 made_at_ms=MADE_AT_MS + 5).debt_minor == 2_000
    # b in debt and then paid off by a top-up; c covered
    assert ledger.offline_deduct(b, 6_000, txn_id="T1-f-2", terminal_id="T1", cashier_id="C1",
                                 made_at_ms=MADE_AT_MS + 10).debt_minor == 1_000
    assert ledger.credit(b, 1_500, txn_id="T3-c-1").debt_minor == 1_000
    assert ledger.offline_deduct(c, 100, txn_id="T1-f-3", terminal_id="T1", cashier_id="C1",
                                 made_at_ms=MADE_AT_MS + 20).applied
    return accounts


def test_book_verify_and_report_of_offline_debts(redis_url, pg_url, db, ledger, capsys):
    a, b, _ = _outage(ledger)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    report = verify(ledger, db)
    assert report.ok, report.violations
    assert report.checked["offline_debts"] == 2                 # a (open) and b (paid: 0 on both sides)
    debts = book.open_debts(db)
    assert [(d["account_id"], d["txn_id"], d["terminal_id"], d["cashier_id"], d["debt_delta_minor"],
             d["open_minor"]) for d in debts] == [(a, "T2-f-1", "T2", "C2", 2_000, 2_000)]
    assert abs(debts[0]["made_at"].timestamp() * 1000 - (MADE_AT_MS + 5)) < 1
    capsys.readouterr()
    assert run_cli("report", "debts", "--format", "json", redis_url=redis_url, database_url=pg_url) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(d["account_id"], d["terminal_id"], d["cashier_id"]) for d in listed] == [(a, "T2", "C2")]
    assert run_cli("report", "debts", "--lang", "zh_CN", redis_url=redis_url, database_url=pg_url) == 0
    assert "未结离线欠款" in capsys.readouterr().out

    # the top-up that pays the rest: verify still agrees, the report is empty
    assert ledger.credit(a, 2_000, txn_id="T3-c-2").debt_minor == 2_000
    assert verify(ledger, db).ok
    assert book.open_debts(db) == []


def test_verify_finds_a_debt_changed_outside_the_scripts(redis_url, pg_url, db, ledger):
    a, _, _ = _outage(ledger)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    ledger.client.hset(ledger.partitions[0].account(a), "dt", "1")         # forgiven by hand
    report = verify(ledger, db)
    found = [v for v in report.violations if v.kind == "debt_mismatch"]
    assert [(v.account_id, v.evidence["redis_debt_minor"], v.evidence["db_debt_minor"]) for v in found] == \
        [(a, 1, 2_000)]


def test_the_back_office_dashboard_lists_open_debts(redis_url, pg_url, ledger):
    """The dashboard (reconcile_service/web) lists each open debt with its till, cashier and times."""
    from zoneinfo import ZoneInfo

    from reconcile_service import db as dbmod
    from reconcile_service.web.app import create_app
    from reconcile_service.web.auth import set_password
    from tests.reconcile.test_backoffice_hardening import login
    a, _, _ = _outage(ledger)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    engine = dbmod.make_engine(pg_url)
    set_password(engine, "owner", "a long enough password 27")
    client = create_app(engine, ZoneInfo("Asia/Shanghai")).test_client()
    assert login(client, "a long enough password 27").status_code == 302
    body = client.get("/dashboard?lang=en").get_data(as_text=True)
    assert "Open offline debts" in body and 'data-debt-txn="T2-f-1"' in body
    row = body[body.index('data-debt-txn="T2-f-1"'):].split("</tr>")[0]
    assert a in row and "T2" in row and "C2" in row and 'data-minor="2000"' in row
    engine.dispose()


def test_restore_brings_the_open_debts_back(redis_url, pg_url, db, ledger):
    """Redis lost: restore gives every account its open offline debt back from the book, so
    the member still cannot spend until a top-up pays it, and verify agrees."""
    from core import Ledger, Status
    a, b, _ = _outage(ledger)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    ledger.client.flushdb()
    assert run_cli("restore", redis_url=redis_url, database_url=pg_url) == 0
    back = Ledger.from_url(redis_url, auto_init=False)
    assert back.offline_debt(a) == 2_000 and back.offline_debt(b) == 0
    assert back.deduct(a, 1, txn_id="after-restore").status is Status.DEBT_OPEN
    assert verify(back, db).ok
    back.close()
