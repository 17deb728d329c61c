"""Split-tender sales in the book (issue 31): `run --once` writes each sale's tenders to
sale_tenders with its entry (and each tender refund), `verify` is clean and finds a sale
that is not whole; the liability report shows the card legs of split sales on their own
line and the other tenders apart (never stored value); `report shifts` shows a Z
record's split-sale totals."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from zoneinfo import ZoneInfo

from sqlalchemy import select, update

from core.shifts import ShiftTotals, close_shift
from reconcile_service.models import LedgerEntry, SaleTender
from reconcile_service.reports import book, render
from reconcile_service.verify import verify
from tests.reconcile.conftest import run_cli


def _sales(ledger):
    assert ledger.open_account("M1", txn_id="o-m1", initial_minor=10_000).applied
    assert ledger.sale("M1", 3_850, {"cash": 1_350}, txn_id="T1-s-1", total_minor=5_200, change_minor=650,
                       terminal_id="T1", cashier_id="c1").applied
    assert ledger.sale("M1", 1_000, {"wechat": 500, "alipay": 200}, txn_id="T1-s-2", total_minor=1_700).applied
    assert ledger.sale("M1", 99_999, {"cash": 1}, txn_id="T1-s-3", total_minor=100_000).status.value == \
        "INSUFFICIENT_FUNDS"
    assert ledger.refund("M1", 850, txn_id="T1-r-1", original_txn_id="T1-s-1").applied
    assert ledger.tender_refund("M1", 350, txn_id="T1-t-1", original_txn_id="T1-s-1", method="cash").applied


def test_the_book_keeps_every_tender_and_verify_is_clean(ledger, redis_url, pg_url, db):
    _sales(ledger)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0     # redelivery harmless
    with db.connect() as conn:
        rows = sorted((r.txn_id, r.sale_txn_id, r.kind, r.method, r.amount_minor, r.change_minor)
                      for r in conn.execute(select(SaleTender)))
        kinds = {r.txn_id: r.kind for r in conn.execute(select(LedgerEntry))}
    assert rows == [("T1-s-1", "T1-s-1", "sale", "cash", 1_350, 650),
                    ("T1-s-2", "T1-s-2", "sale", "alipay", 200, 0),
                    ("T1-s-2", "T1-s-2", "sale", "wechat", 500, 0),
                    ("T1-t-1", "T1-s-1", "tender_refund", "cash", -350, 0)]
    assert "T1-s-3" not in kinds and kinds["T1-t-1"] == "tender_refund"
    report = verify(ledger, db)
    assert report.ok, report.as_dict()
    assert report.checked["sales_whole"] == 2

    # a tender row changed behind the book's back: the sale is no longer whole
    with db.begin() as conn:
        conn.execute(update(SaleTender).where(SaleTender.txn_id == "T1-s-2", SaleTender.method == "wechat")
                     .values(amount_minor=400))
    bad = verify(ledger, db, drain_first=False)
    assert [v.kind for v in bad.violations] == ["sale_not_whole"]


def test_the_liability_report_separates_card_legs_and_other_tenders(ledger, redis_url, pg_url, db):
    _sales(ledger)
    assert ledger.deduct("M1", 100, txn_id="T1-d-1").applied
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    now = datetime.now(timezone.utc)
    rep = book.liability(db, now - timedelta(hours=1), now + timedelta(hours=1))
    lines = {l.key: l.total_minor for l in rep.lines}
    assert lines["spent"] == 100 and lines["spent_sale_card"] == 4_850 and rep.balanced
    assert rep.other_tenders == {"cash": 1_000, "change": 650, "wechat": 500, "alipay": 200}
    _, rows, footer = render.liability_table(rep, "zh_CN", ZoneInfo("UTC"))
    assert any("组合支付的储值卡部分" in r[0] for r in rows)
    assert any(f.startswith("组合支付中储值卡以外的支付") and "现金 10.00" in f for f in footer)
    assert footer[-1].startswith("核对")


def test_report_shifts_shows_the_split_sale_totals(ledger, redis_url, pg_url, db, capsys):
    close_shift(ledger, terminal_id="T1", shift_no=1, closed_by="c1", cashier_id="c1", totals=ShiftTotals(),
                extra_totals={"sale_card_minor": 4_850, "tenders_cash_minor": 1_350, "tenders_wechat_minor": 500,
                              "change_minor": 650, "tender_refunds_cash_minor": 350})
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    capsys.readouterr()
    day = datetime.now(timezone.utc).date().isoformat()
    assert run_cli("report", "shifts", "--date", day, "--tz", "UTC", redis_url=redis_url, database_url=pg_url) == 0
    out = capsys.readouterr().out
    assert "card 48.50; cash 13.50; WeChat Pay 5.00; change 6.50" in out      # the text cuts cells at 60
    rows = book.shifts(db, *book.day_bounds(datetime.now(timezone.utc).date(), datetime.now(timezone.utc).date(),
                                            ZoneInfo("UTC")))
    header, body, _ = render.shifts_table(rows, "zh_CN", ZoneInfo("UTC"))
    assert header[-1] == "组合支付：储值卡 / 其他支付"
    assert body[0][-1] == "储值卡 48.50; 现金 13.50; 微信支付 5.00; 找零 6.50; 已退 现金 3.50"
