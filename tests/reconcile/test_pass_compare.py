"""The periodic pass compares more than balance and status (issue 25 items 6-9), on real
Redis and PostgreSQL: a promotion forged in Redis, a top-up whose bonus is not the
promotion's, a bonus bucket changed by HSET, a card map entry pointing elsewhere, a TTL
on a journal stream or an account, and a deleted book tail are each an open discrepancy
of the pass (not only of `verify`), and a clean shop gives none."""
from __future__ import annotations

from sqlalchemy import select, text

from core import Ledger
from core.cashiers import CashierRegistry
from reconcile_service import db as dbmod
from reconcile_service.metrics import Metrics
from reconcile_service.models import Discrepancy, LedgerEntry
from reconcile_service.reconcile import Reconciler
from tests.reconcile.conftest import run_cli


def _shop(ledger: Ledger) -> None:
    ledger.init()
    ledger.add_promotion(10_000, 2_000, txn_id="promo-1")
    ledger.open_account("M-1", txn_id="open-M-1", initial_minor=10_000)
    ledger.open_account("M-2", txn_id="open-M-2", initial_minor=5_000)
    ledger.issue_card("M-1", "100200", txn_id="card-1")
    ledger.credit("M-1", 10_000, txn_id="top-1", bonus_minor=2_000)       # the promotion's bonus
    ledger.deduct("M-1", 500, txn_id="d-1")
    CashierRegistry(ledger.client).add("c1", "Ann", "1234")


def _pass(ledger, pg_url, redis_url) -> dict:
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) in (0, 1)
    eng = dbmod.make_engine(pg_url)
    try:
        Reconciler(ledger, eng, Metrics(), "test").run_pass()
        with eng.connect() as conn:
            rows = conn.execute(select(Discrepancy).where(Discrepancy.status == "open")).all()
    finally:
        eng.dispose()
    return {(r.kind, r.account_id): r for r in rows}


def _kinds(found: dict) -> set[str]:
    return {k for k, _ in found}


def test_a_clean_shop_has_no_finding(ledger, redis_url, pg_url):
    _shop(ledger)
    assert _pass(ledger, pg_url, redis_url) == {}


def test_a_forged_promotion_in_redis_is_found_by_the_pass(ledger, redis_url, pg_url):
    _shop(ledger)
    _pass(ledger, pg_url, redis_url)
    ledger.client.hset(ledger.partitions[0].settings, "promo:free", "1:100000")     # no journal entry
    found = _pass(ledger, pg_url, redis_url)
    assert _kinds(found) == {"setting_mismatch"}, found
    assert "promo:free" in found[("setting_mismatch", None)].cause
    ledger.client.hdel(ledger.partitions[0].settings, "promo:free")
    assert _pass(ledger, pg_url, redis_url) == {}                                      # cleared


def test_a_bonus_that_is_not_the_promotions_is_found(ledger, redis_url, pg_url):
    _shop(ledger)
    ledger.credit("M-2", 10_000, txn_id="top-greedy", bonus_minor=9_000)     # the promotion gives 2000
    found = _pass(ledger, pg_url, redis_url)
    assert _kinds(found) == {"bonus_mismatch"}, found
    assert "top-greedy" in found[("bonus_mismatch", "M-2")].cause
    assert _pass(ledger, pg_url, redis_url).keys() == found.keys()           # stays open


def test_a_bonus_bucket_changed_by_hset_is_found_by_the_pass(ledger, redis_url, pg_url):
    _shop(ledger)
    _pass(ledger, pg_url, redis_url)
    ledger.client.hset(ledger.schema.partition_of("M-1").account("M-1"), "bo", 100)    # balance unchanged
    found = _pass(ledger, pg_url, redis_url)
    assert _kinds(found) == {"bucket_mismatch"}, found


def test_a_card_map_pointing_elsewhere_is_found_by_the_pass(ledger, redis_url, pg_url):
    _shop(ledger)
    _pass(ledger, pg_url, redis_url)
    ledger.client.hset(ledger.schema.partition_of("100200").cards, "100200", "M-2")
    found = _pass(ledger, pg_url, redis_url)
    assert _kinds(found) == {"card_mismatch"}, found
    assert "M-2" in found[("card_mismatch", "M-1")].cause


def test_a_ttl_on_a_stream_or_an_account_is_found_by_the_pass(ledger, redis_url, pg_url):
    _shop(ledger)
    _pass(ledger, pg_url, redis_url)
    stream, account = ledger.partitions[0].journal, ledger.schema.partition_of("M-2").account("M-2")
    ledger.client.expire(stream, 86_400)
    ledger.client.expire(account, 3_600)
    found = _pass(ledger, pg_url, redis_url)
    assert _kinds(found) == {"ttl_on_ledger_key"}, found
    eng = dbmod.make_engine(pg_url)
    with eng.connect() as conn:
        causes = " ".join(conn.execute(select(Discrepancy.cause).where(Discrepancy.status == "open")).scalars())
    eng.dispose()
    assert stream in causes and account in causes and "expires in" in causes


def test_a_deleted_tail_is_found_by_the_pass(ledger, redis_url, pg_url):
    _shop(ledger)
    _pass(ledger, pg_url, redis_url)
    eng = dbmod.make_engine(pg_url)
    try:
        with eng.begin() as conn:
            last = conn.execute(select(LedgerEntry.chain_seq).where(LedgerEntry.journal_partition == 0)
                                .order_by(LedgerEntry.chain_seq.desc()).limit(1)).scalar_one()
            prev = conn.execute(select(LedgerEntry.row_hash).where(
                LedgerEntry.journal_partition == 0, LedgerEntry.chain_seq == last - 1)).scalar_one()
            conn.execute(text("ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only"))
            conn.execute(text("DELETE FROM ledger_entries WHERE journal_partition = 0 AND chain_seq = :s"),
                         {"s": last})
            conn.execute(text("ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only"))
            conn.execute(text("UPDATE chain_heads SET last_seq = :s, last_hash = :h WHERE journal_partition = 0"),
                         {"s": last - 1, "h": prev})
    finally:
        eng.dispose()
    found = _pass(ledger, pg_url, redis_url)
    assert "chain_behind_anchor" in _kinds(found), found
    assert f"seq {last}..{last}" in found[("chain_behind_anchor", None)].cause


def test_the_member_pin_threshold_is_booked_compared_and_restored(ledger, redis_url, pg_url, db):
    from reconcile_service.models import ShopSetting
    from reconcile_service.verify import verify
    _shop(ledger)
    assert ledger.set_member_pin_threshold(20_000, txn_id="mpin-above-1").applied
    assert _pass(ledger, pg_url, redis_url) == {}
    with db.connect() as conn:
        assert conn.execute(select(ShopSetting.value).where(ShopSetting.name == "member_pin_above")).scalar_one() \
            == "20000"
    assert verify(ledger, db).ok
    for part in ledger.partitions:                   # lowered behind the ledger's back, on every partition
        ledger.client.hset(part.settings, "member_pin_above", "100000000")
    found = _pass(ledger, pg_url, redis_url)
    assert _kinds(found) == {"setting_mismatch"} and "member_pin_above" in found[("setting_mismatch", None)].cause
    assert not verify(ledger, db).ok
    ledger.client.flushdb()
    assert run_cli("restore", redis_url=redis_url, database_url=pg_url) == 0
    back = Ledger.from_url(redis_url, auto_init=False)
    assert back.shop_settings().member_pin_above_minor == 20_000
    assert verify(back, db).ok


def test_a_bonus_is_judged_by_the_promotions_in_force_when_it_was_given(ledger, redis_url, pg_url):
    import time as _time
    ledger.init()
    now_ms = int(_time.time() * 1000)
    ledger.open_account("D-1", txn_id="open-D-1", initial_minor=0)
    ledger.add_promotion(10_000, 3_000, promo_id="now", txn_id="p-now", starts_ms=now_ms - 60_000,
                         ends_ms=now_ms + 3_600_000)
    ledger.add_promotion(10_000, 9_000, promo_id="past", txn_id="p-past", starts_ms=1_000, ends_ms=2_000)
    assert ledger.bonus_for(10_000).promo_id == "now"
    ledger.credit("D-1", 10_000, txn_id="top-in-window", bonus_minor=3_000)      # the one in force
    assert _pass(ledger, pg_url, redis_url) == {}
    ledger.credit("D-1", 10_000, txn_id="top-past-promo", bonus_minor=9_000)     # one that had ended
    found = _pass(ledger, pg_url, redis_url)
    assert _kinds(found) == {"bonus_mismatch"} and "top-past-promo" in found[("bonus_mismatch", "D-1")].cause
