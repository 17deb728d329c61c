"""The ledger contract against the real Redis on 6379: every status, replays,
conflicts, refunds, freezing, NOSCRIPT recovery and the safety checks."""
from __future__ import annotations

import pytest

from core import (AccountNotFound, InvalidRequest, Ledger, LedgerNotInitialized, Status,
                  TxnConflict, UnsafeRedisConfig)
from core.keys import META_KEY


def opened(ledger: Ledger, account="A-1001", initial=5000):
    ledger.open_account(account, txn_id=f"open-{account}", initial_minor=initial)
    return account


def test_contract_example(ledger):
    r = ledger.open_account("A-1001", txn_id="open-A-1001", initial_minor=5000)
    assert (r.status, r.balance_minor, r.replayed, r.txn_id) == (Status.APPLIED, 5000, False, "open-A-1001")
    r = ledger.deduct("A-1001", 1250, txn_id="t-1", terminal_id="T1", cashier_id="c7")
    assert (r.status, r.balance_minor) == (Status.APPLIED, 3750)
    assert ledger.credit("A-1001", 500, txn_id="t-2", terminal_id="T1", cashier_id="c7").balance_minor == 4250
    r = ledger.refund("A-1001", 300, txn_id="t-3", original_txn_id="t-1", terminal_id="T1", cashier_id="c7")
    assert (r.status, r.balance_minor) == (Status.APPLIED, 4550)
    assert ledger.freeze("A-1001", txn_id="f-1").status is Status.APPLIED
    assert ledger.unfreeze("A-1001", txn_id="f-2").status is Status.APPLIED
    assert ledger.balance("A-1001") == 4550
    assert isinstance(ledger.balance("A-1001"), int)


def test_replay_answers_the_first_outcome_not_todays_balance(ledger):
    opened(ledger)
    first = ledger.deduct("A-1001", 1000, txn_id="t-1")
    ledger.credit("A-1001", 7000, txn_id="t-2")
    again = ledger.deduct("A-1001", 1000, txn_id="t-1")
    assert again.replayed and again.status is Status.APPLIED
    assert again.balance_minor == first.balance_minor == 4000
    assert again.journal_id == first.journal_id
    assert ledger.balance("A-1001") == 11000


def test_declines_are_stored_and_replayed(ledger):
    opened(ledger, initial=100)
    first = ledger.deduct("A-1001", 500, txn_id="t-1")
    assert (first.status, first.balance_minor) == (Status.INSUFFICIENT_FUNDS, 100)
    ledger.credit("A-1001", 1000, txn_id="t-2")
    again = ledger.deduct("A-1001", 500, txn_id="t-1")
    assert again.status is Status.INSUFFICIENT_FUNDS and again.replayed and again.balance_minor == 100
    assert ledger.balance("A-1001") == 1100


@pytest.mark.parametrize("change", [
    dict(account_id="A-2002", amount_minor=100),  # different account
    dict(account_id="A-1001", amount_minor=101),  # different amount
])
def test_reused_txn_id_with_another_request_conflicts(ledger, change):
    opened(ledger)
    opened(ledger, "A-2002")
    ledger.deduct("A-1001", 100, txn_id="t-1")
    with pytest.raises(TxnConflict) as info:
        ledger.deduct(change["account_id"], change["amount_minor"], txn_id="t-1")
    assert "t-1" in str(info.value)
    assert ledger.balance("A-1001") == 4900 and ledger.balance("A-2002") == 5000


def test_reused_txn_id_with_another_kind_conflicts(ledger):
    opened(ledger)
    ledger.deduct("A-1001", 100, txn_id="t-1")
    with pytest.raises(TxnConflict):
        ledger.credit("A-1001", 100, txn_id="t-1")
    assert ledger.balance("A-1001") == 4900


def test_every_decline_status(ledger):
    assert ledger.deduct("nobody", 1, txn_id="d-0").status is Status.ACCOUNT_NOT_FOUND
    assert ledger.credit("nobody", 1, txn_id="c-0").status is Status.ACCOUNT_NOT_FOUND
    opened(ledger, initial=10)
    assert ledger.open_account("A-1001", txn_id="open-again", initial_minor=5).status is Status.ACCOUNT_EXISTS
    assert ledger.deduct("A-1001", 11, txn_id="d-1").status is Status.INSUFFICIENT_FUNDS
    assert ledger.refund("A-1001", 1, txn_id="r-0", original_txn_id="never").status is Status.ORIGINAL_NOT_FOUND
    assert ledger.refund("A-1001", 1, txn_id="r-1", original_txn_id="d-1").status is Status.ORIGINAL_NOT_FOUND
    assert ledger.unfreeze("A-1001", txn_id="u-0").status is Status.ACCOUNT_NOT_FROZEN
    ledger.freeze("A-1001", txn_id="f-1")
    assert ledger.freeze("A-1001", txn_id="f-2").status is Status.ACCOUNT_FROZEN
    assert ledger.deduct("A-1001", 1, txn_id="d-2").status is Status.ACCOUNT_FROZEN
    assert ledger.credit("A-1001", 1, txn_id="c-1").status is Status.ACCOUNT_FROZEN
    assert ledger.balance("A-1001") == 10


def test_balance_limit(ledger):
    from core import MAX_AMOUNT_MINOR, MAX_BALANCE_MINOR
    opened(ledger, initial=0)
    for i in range(MAX_BALANCE_MINOR // MAX_AMOUNT_MINOR):
        ledger.credit("A-1001", MAX_AMOUNT_MINOR, txn_id=f"c-{i}")
    assert ledger.balance("A-1001") == MAX_BALANCE_MINOR
    r = ledger.credit("A-1001", 1, txn_id="one-more")
    assert r.status is Status.BALANCE_LIMIT_EXCEEDED and r.balance_minor == MAX_BALANCE_MINOR


def test_partial_refunds_add_up_to_the_original(ledger):
    opened(ledger, initial=1000)
    ledger.deduct("A-1001", 600, txn_id="sale")
    assert ledger.refund("A-1001", 200, txn_id="r-1", original_txn_id="sale").balance_minor == 600
    assert ledger.refund("A-1001", 300, txn_id="r-2", original_txn_id="sale").balance_minor == 900
    over = ledger.refund("A-1001", 101, txn_id="r-3", original_txn_id="sale")
    assert over.status is Status.REFUND_EXCEEDS_ORIGINAL and over.balance_minor == 900
    assert ledger.refund("A-1001", 100, txn_id="r-4", original_txn_id="sale").balance_minor == 1000
    # a replayed refund does not count twice
    assert ledger.refund("A-1001", 100, txn_id="r-4", original_txn_id="sale").replayed
    assert ledger.refund("A-1001", 1, txn_id="r-5", original_txn_id="sale").status is Status.REFUND_EXCEEDS_ORIGINAL


def test_refund_of_another_accounts_deduction_is_refused(ledger):
    opened(ledger)
    opened(ledger, "A-2002")
    ledger.deduct("A-1001", 100, txn_id="sale")
    assert ledger.refund("A-2002", 100, txn_id="r-1", original_txn_id="sale").status is Status.ORIGINAL_NOT_FOUND
    assert ledger.balance("A-2002") == 5000


def test_refund_goes_through_on_a_frozen_account(ledger):
    opened(ledger)
    ledger.deduct("A-1001", 100, txn_id="sale")
    ledger.freeze("A-1001", txn_id="f-1")
    assert ledger.refund("A-1001", 100, txn_id="r-1", original_txn_id="sale").balance_minor == 5000


def test_journal_has_one_entry_per_applied_change_and_none_for_declines(ledger):
    opened(ledger, initial=100)
    ledger.deduct("A-1001", 30, txn_id="d-1", terminal_id="T1", cashier_id="c7")
    ledger.deduct("A-1001", 30, txn_id="d-1", terminal_id="T1", cashier_id="c7")  # replay
    ledger.deduct("A-1001", 1000, txn_id="d-2")                                   # decline
    ledger.refund("A-1001", 10, txn_id="r-1", original_txn_id="d-1")
    ledger.freeze("A-1001", txn_id="f-1")
    entries = ledger.journal("A-1001")
    assert [e.kind for e in entries] == ["freeze", "refund", "deduct", "open"]
    deduct = entries[2]
    assert (deduct.txn_id, deduct.amount_minor, deduct.balance_after_minor, deduct.terminal_id,
            deduct.cashier_id) == ("d-1", -30, 70, "T1", "c7")
    assert entries[1].original_txn_id == "d-1" and entries[1].amount_minor == 10
    assert deduct.occurred_ms > 0
    assert ledger.account("A-1001").last_journal_id == entries[0].journal_id


def test_balance_of_unknown_account(ledger):
    with pytest.raises(AccountNotFound) as info:
        ledger.balance("nobody")
    assert isinstance(info.value, InvalidRequest) and info.value.field == "account_id"


def test_missing_function_after_function_flush_is_transparent(ledger):
    opened(ledger)
    ledger.client.function_flush()                 # what a restart without persistence does
    assert ledger.deduct("A-1001", 1, txn_id="t-1").balance_minor == 4999
    assert ledger.scripts.loaded_on(ledger.client)


def test_scripts_are_called_by_name_not_sent_every_time(ledger):
    opened(ledger)
    before = ledger.client.info("commandstats")
    for i in range(5):
        ledger.deduct("A-1001", 1, txn_id=f"t-{i}")
    after = ledger.client.info("commandstats")
    calls = lambda stats, name: stats.get(f"cmdstat_{name}", {}).get("calls", 0)
    assert calls(after, "fcall") - calls(before, "fcall") == 5
    assert calls(after, "eval") == calls(before, "eval")
    assert calls(after, "function|load") == calls(before, "function|load")


def test_no_ttl_on_balances_and_retention_on_records(redis_url):
    ledger = Ledger.from_url(redis_url, retention_s=3600)
    opened(ledger)
    ledger.deduct("A-1001", 1, txn_id="t-1")
    part = ledger.schema.partition_of("A-1001")
    assert ledger.client.ttl(part.account("A-1001")) == -1
    assert 3500 < ledger.client.ttl(part.txn("t-1")) <= 3600


def test_retry_after_retention_applies_again(redis_url):
    """Documented behaviour: after retention the txn id is new again (the reconcile
    service detects the duplicate txn id and reverses it)."""
    ledger = Ledger.from_url(redis_url, retention_s=1)
    opened(ledger)
    ledger.deduct("A-1001", 100, txn_id="t-1")
    ledger.client.delete(ledger.schema.partition_of("A-1001").txn("t-1"))  # as if expired
    assert not ledger.deduct("A-1001", 100, txn_id="t-1").replayed
    assert [e.txn_id for e in ledger.journal("A-1001")].count("t-1") == 2


def test_evicting_policy_is_refused(ledger):
    opened(ledger)
    ledger.client.config_set("maxmemory-policy", "allkeys-lru")
    try:
        fresh = Ledger(ledger.client)
        with pytest.raises(UnsafeRedisConfig) as info:
            fresh.deduct("A-1001", 1, txn_id="t-1")
        assert "noeviction" in str(info.value) and "allkeys-lru" in str(info.value)
        assert fresh.balance("A-1001") == 5000   # reads still work
        overridden = Ledger(ledger.client, allow_evicting_policy=True)
        assert overridden.deduct("A-1001", 1, txn_id="t-1").applied
    finally:
        ledger.client.config_set("maxmemory-policy", "noeviction")


def test_a_redis_without_ledger_data_is_not_mistaken_for_a_new_one(ledger):
    opened(ledger)
    ledger.client.flushdb()                    # as if Redis restarted empty
    with pytest.raises(LedgerNotInitialized):
        ledger.deduct("A-1001", 1, txn_id="t-1")
    terminal = Ledger(ledger.client, auto_init=False)
    with pytest.raises(LedgerNotInitialized) as info:
        terminal.deduct("A-1001", 1, txn_id="t-1")
    assert "restore" in str(info.value)
    assert ledger.client.dbsize() == 0         # nothing was written


def test_init_is_idempotent_and_keeps_the_first_partition_count(ledger):
    ledger.init(partitions=4)
    again = Ledger(ledger.client, partitions=8)
    assert len(again.partitions) == 4 and ledger.client.hget(META_KEY, "partitions") == "4"
    opened(again)
    assert Ledger(ledger.client).balance("A-1001") == 5000


def test_money_is_never_a_float(ledger):
    opened(ledger)
    with pytest.raises(InvalidRequest) as info:
        ledger.deduct("A-1001", 12.5, txn_id="t-1")
    assert info.value.field == "amount_minor" and "float" in info.value.reason
    with pytest.raises(InvalidRequest):
        ledger.deduct("A-1001", True, txn_id="t-1")
    assert ledger.balance("A-1001") == 5000


def test_holder_name_is_kept_journaled_and_validated(ledger):
    from core import InvalidRequest
    ledger.open_account("A-1", txn_id="o-1", initial_minor=5, holder_name=" 张三 ")
    assert ledger.account("A-1").holder_name == "张三"
    assert ledger.journal("A-1")[0].holder_name == "张三"
    ledger.open_account("A-2", txn_id="o-2")
    assert ledger.account("A-2").holder_name == ""
    for bad in ("x" * 65, "a\nb", 5):
        with pytest.raises(InvalidRequest) as info:
            ledger.open_account("A-3", txn_id="o-3", holder_name=bad)
        assert info.value.field == "holder_name"
    with pytest.raises(Exception):
        ledger.balance("A-3")
