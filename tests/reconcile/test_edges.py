"""The reconcile service at the ledger's edges (issue 12), against real PostgreSQL and
Redis: balances of 10^14 and more, up to MAX_BALANCE_MINOR, are booked exactly by
`run --once`; internal txn ids (hold expiry, compensation) are booked as the ledger's own."""
from __future__ import annotations

from sqlalchemy import func, select

from core import MAX_AMOUNT_MINOR, MAX_BALANCE_MINOR, Ledger, Status
from reconcile_service.models import Account, LedgerEntry, QuarantinedEntry
from reconcile_service.verify import verify
from tests.reconcile.conftest import assert_books_agree, run_cli


def _top_up(ledger: Ledger, account_id: str, amount_minor: int, tag: str) -> int:
    """Credits of at most MAX_AMOUNT_MINOR each; answers how many."""
    n = 0
    while amount_minor:
        step = min(amount_minor, MAX_AMOUNT_MINOR)
        assert ledger.credit(account_id, step, txn_id=f"{tag}-{n}").applied
        amount_minor -= step
        n += 1
    return n


def test_balances_up_to_the_limit_are_booked_exactly(redis_url, pg_url, db, ledger):
    big = 987_654_321_098_765          # 15 significant digits: tostring wrote 9.8765432109877e+14
    opening = big % MAX_AMOUNT_MINOR
    ledger.open_account("BIG", txn_id="open-BIG", initial_minor=opening)
    entries = 1 + _top_up(ledger, "BIG", big - opening, "up")
    assert ledger.balance("BIG") == big
    assert ledger.deduct("BIG", MAX_AMOUNT_MINOR, txn_id="d-max").applied
    assert ledger.hold("BIG", MAX_AMOUNT_MINOR - 1, txn_id="h-max", ttl_s=600).applied
    assert ledger.capture("h-max", 12_345_678_901, txn_id="c-max", account_id="BIG").applied
    assert ledger.refund("BIG", MAX_AMOUNT_MINOR - 7, txn_id="r-max", original_txn_id="d-max").applied
    entries += 4
    entries += _top_up(ledger, "BIG", MAX_BALANCE_MINOR - ledger.balance("BIG"), "fill")
    assert ledger.balance("BIG") == MAX_BALANCE_MINOR
    assert ledger.credit("BIG", 1, txn_id="over").status is Status.BALANCE_LIMIT_EXCEEDED
    ledger.open_account("SMALL", txn_id="open-SMALL", initial_minor=MAX_AMOUNT_MINOR)
    assert ledger.deduct("SMALL", MAX_AMOUNT_MINOR, txn_id="d-all").balance_minor == 0
    entries += 2

    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert_books_agree(ledger, db, expected_entries=entries)
    with db.connect() as conn:
        assert conn.execute(select(func.count()).select_from(QuarantinedEntry)).scalar_one() == 0
        assert conn.execute(select(Account.balance_minor).where(Account.account_id == "BIG")).scalar_one() \
            == MAX_BALANCE_MINOR
        row = conn.execute(select(LedgerEntry).where(LedgerEntry.txn_id == "c-max")).one()
        assert row.amount_minor == -12_345_678_901
        assert row.balance_after_minor == big - MAX_AMOUNT_MINOR - 12_345_678_901
        last = conn.execute(select(LedgerEntry.balance_after_minor).where(
            LedgerEntry.account_id == "BIG").order_by(LedgerEntry.journal_pos.desc()).limit(1)).scalar_one()
        assert last == MAX_BALANCE_MINOR
    report = verify(ledger, db)
    assert report.ok, report.violations
