"""The display cache: off by default, bounded in age and size, dropped by this
process's own writes, never used to decide."""
from __future__ import annotations

import time

from core import Ledger, Status


def test_off_by_default(ledger):
    ledger.open_account("A-1", txn_id="o", initial_minor=100)
    assert ledger.balance("A-1") == 100
    Ledger(ledger.client).deduct("A-1", 40, txn_id="other-terminal")
    assert ledger.balance("A-1") == 60


def test_other_processes_writes_show_after_max_age(redis_url):
    mine = Ledger.from_url(redis_url, read_cache_max_age_s=0.2)
    other = Ledger.from_url(redis_url)
    mine.open_account("A-1", txn_id="o", initial_minor=100)
    assert mine.balance("A-1") == 100
    other.deduct("A-1", 40, txn_id="d-1")
    assert mine.balance("A-1") == 100                  # cached, within 0.2 s
    assert mine.read_cache.hits >= 1
    time.sleep(0.25)
    assert mine.balance("A-1") == 60
    assert mine.available("A-1") == 60


def test_own_writes_invalidate_and_decisions_are_live(redis_url):
    mine = Ledger.from_url(redis_url, read_cache_max_age_s=60)
    other = Ledger.from_url(redis_url)
    mine.open_account("A-1", txn_id="o", initial_minor=100)
    assert mine.available("A-1") == 100
    other.deduct("A-1", 90, txn_id="d-1")
    assert mine.available("A-1") == 100                # stale display value...
    r = mine.deduct("A-1", 50, txn_id="d-2")           # ...but the script decides on the live balance
    assert r.status is Status.INSUFFICIENT_FUNDS and r.balance_minor == 10
    assert mine.available("A-1") == 10                 # own write dropped the entry


def test_bounded(redis_url):
    led = Ledger.from_url(redis_url, read_cache_max_age_s=60, read_cache_max_entries=5)
    for i in range(20):
        led.open_account(f"A-{i}", txn_id=f"o-{i}", initial_minor=i)
        led.balance(f"A-{i}")
    assert len(led.read_cache._entries) <= 5
