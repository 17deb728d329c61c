"""Members, cards, settings and closed accounts through the reconcile service, on real
Redis and PostgreSQL: each new kind reaches the database exactly once (cards and
settings in their own tables, no balance row), a flushed Redis gets members, phones,
cards, settings and closed accounts back from `restore`, and `verify` is green after
it and finds a card changed behind the ledger's back."""
from __future__ import annotations

from sqlalchemy import func, select, text

from core import Ledger, Status
from core.members import card_key
from reconcile_service.models import Account, Card, LedgerEntry, ShopSetting
from reconcile_service.verify import verify
from tests.reconcile.conftest import assert_books_agree, run_cli


def _shop(ledger: Ledger) -> None:
    ledger.init()
    ledger.set_spend_order("bonus_first", txn_id="set-order")
    ledger.open_account("M-1", txn_id="open-M-1", initial_minor=10_000, holder_name="张三", phone="13800138000")
    ledger.open_account("M-2", txn_id="open-M-2", initial_minor=5_000, holder_name="李四")
    ledger.open_account("M-3", txn_id="open-M-3", initial_minor=2_500, holder_name="王五", phone="13900000003")
    ledger.issue_card("M-1", "CARD-1", txn_id="card-1")
    ledger.block_card("CARD-1", txn_id="block-1", reason="lost")
    ledger.issue_card("M-1", "CARD-2", txn_id="card-2")
    ledger.block_card("M-2", txn_id="block-M-2", reason="damaged")      # the account id used as a card
    ledger.credit("M-1", 10_000, txn_id="top-M-1", method="wechat", bonus_minor=2_000)
    ledger.deduct("M-1", 10_000, txn_id="d-M-1")
    ledger.refund("M-1", 5_000, txn_id="r-M-1", original_txn_id="d-M-1")
    ledger.deduct("M-3", 500, txn_id="d-M-3")
    close = ledger.close_account("M-3", txn_id="close-M-3")
    assert close.payout_minor == 2_000
    ledger.add_promotion(10_000, 2_000, txn_id="promo-1")
    ledger.add_promotion(50_000, 15_000, txn_id="promo-2")
    ledger.remove_promotion("min50000-bonus15000", txn_id="promo-2-off")


def test_member_kinds_reach_the_database_once_and_verify_is_green(redis_url, pg_url, db, ledger):
    _shop(ledger)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0   # nothing twice
    with db.connect() as conn:
        cards = {r.card_no: (r.account_id, r.status, r.block_reason) for r in conn.execute(select(Card))}
        settings = dict(conn.execute(select(ShopSetting.name, ShopSetting.value)).all())
        accounts = {r.account_id: (r.balance_minor, r.status, r.phone) for r in conn.execute(select(Account))}
        buckets = {r.account_id: (r.principal_minor, r.bonus_minor) for r in conn.execute(select(Account))}
        kinds = dict(conn.execute(select(LedgerEntry.kind, func.count()).group_by(LedgerEntry.kind)).all())
        close = conn.execute(text("select amount_minor from ledger_entries where kind = 'close'")).scalar_one()
    assert cards == {"CARD-1": ("M-1", "blocked", "lost"), "CARD-2": ("M-1", "active", None),
                     "M-2": ("M-2", "blocked", "damaged")}
    assert settings == {"spend_order": "bonus_first", "promo:min10000-bonus2000": "10000:2000",
                        "promo:min50000-bonus15000": ""}
    assert accounts == {"M-1": (17_000, "active", "13800138000"), "M-2": (5_000, "active", None),
                        "M-3": (0, "closed", "13900000003")}
    assert buckets == {"M-1": (16_000, 1_000), "M-2": (5_000, 0), "M-3": (0, 0)}
    assert set(accounts) == {"M-1", "M-2", "M-3"}               # no balance row for 'shop' or a card
    assert kinds["card_issue"] == 2 and kinds["card_block"] == 2 and kinds["close"] == 1
    assert kinds["setting"] == 4 * len(ledger.partitions) - 3 * (len(ledger.partitions) - 1)
    assert close == -2_000
    assert_books_agree(ledger, db)
    report = verify(ledger, db)
    assert report.ok, report.violations
    assert report.checked["cards"] == 3 and report.checked["settings"] == 3 and report.checked["buckets"] == 3


def test_restore_brings_back_members_cards_settings_and_closed_accounts(redis_url, pg_url, db, ledger):
    _shop(ledger)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    ledger.client.flushdb()
    assert run_cli("restore", redis_url=redis_url, database_url=pg_url) == 0
    back = Ledger.from_url(redis_url, auto_init=False)
    assert back.resolve_card("CARD-2").account_id == "M-1" and back.resolve_card("CARD-2").active
    assert back.resolve_card("CARD-1").status is Status.CARD_BLOCKED
    assert back.resolve_card("M-2").status is Status.CARD_BLOCKED
    assert [m.account_id for m in back.find_members("13800138000")] == ["M-1"]
    assert [m.account_id for m in back.find_members("ls")] == ["M-2"]
    assert back.find_members("13900000003") == []                     # closed: not found
    assert back.account("M-3").status == "closed" and back.balance("M-3") == 0
    assert back.credit("M-3", 100, txn_id="after-restore").status is Status.ACCOUNT_CLOSED
    assert back.shop_settings().spend_order == "bonus_first"
    assert back.balance("M-1") == 17_000 and back.account("M-1").bonus_minor == 1_000    # buckets back
    assert [p.promo_id for p in back.promotions()] == ["min10000-bonus2000"]
    assert run_cli("restore", redis_url=redis_url, database_url=pg_url) == 0      # again: nothing changes
    assert verify(back, db).ok


def test_verify_finds_a_card_changed_behind_the_ledgers_back(redis_url, pg_url, db, ledger):
    _shop(ledger)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    part = ledger.schema.partition_of("CARD-2")
    ledger.client.hset(card_key(part, "CARD-2"), "a", "M-2")           # re-pointed outside the scripts
    ledger.client.hset(ledger.partitions[0].prefix + "cfg", "spend_order", "proportional")
    assert {v.kind for v in verify(ledger, db).violations} == {"card_mismatch", "setting_mismatch"}
    ledger.client.hset(ledger.partitions[0].account("M-2"), "bo", 9_999_999)            # bonus > balance
    kinds = {v.kind for v in verify(ledger, db).violations}
    assert kinds == {"card_mismatch", "setting_mismatch", "bucket_out_of_range", "bucket_mismatch"}, kinds


def test_a_changed_name_and_phone_reach_the_book_and_come_back_after_a_restore(redis_url, pg_url, db, ledger):
    ledger.init()
    ledger.open_account("M-9", txn_id="open-M-9", initial_minor=1_000, holder_name="张三", phone="13800000009")
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0     # the open first
    assert ledger.update_member("M-9", txn_id="upd-M-9", holder_name="李四", phone="13900000009",
                                terminal_id="backoffice", cashier_id="boss").applied
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    with db.connect() as conn:
        row = conn.execute(select(Account.holder_name, Account.phone, Account.balance_minor)
                           .where(Account.account_id == "M-9")).one()
        kinds = conn.execute(select(LedgerEntry.kind, LedgerEntry.amount_minor).where(
            LedgerEntry.account_id == "M-9").order_by(LedgerEntry.journal_pos)).all()
    assert tuple(row) == ("李四", "13900000009", 1_000)
    assert [tuple(k) for k in kinds] == [("open", 1_000), ("member_update", 0)]
    assert verify(ledger, db).ok
    ledger.client.flushdb()
    assert run_cli("restore", redis_url=redis_url, database_url=pg_url) == 0
    back = Ledger.from_url(redis_url, auto_init=False)
    assert back.account("M-9").holder_name == "李四"
    assert [m.account_id for m in back.find_members("13900000009")] == ["M-9"]
    assert back.find_members("13800000009") == []
    assert verify(back, db).ok
