"""The ledger on a real 3-master Redis Cluster started by the fixtures: keys hash to
one slot per script, partitions spread over the primaries, NOSCRIPT recovery."""
from __future__ import annotations

import pytest
from redis.crc import key_slot

from core import DeductRequest, Ledger, Status, TxnConflict

pytestmark = pytest.mark.cluster


def test_contract_flow_on_cluster(cluster_ledger):
    led = cluster_ledger
    accounts = [f"A-{i}" for i in range(40)]      # many accounts: many partitions and nodes
    for a in accounts:
        assert led.open_account(a, txn_id=f"open-{a}", initial_minor=1000).applied
    for a in accounts:
        assert led.deduct(a, 100, txn_id=f"d-{a}").balance_minor == 900
        assert led.deduct(a, 100, txn_id=f"d-{a}").replayed
        assert led.refund(a, 50, txn_id=f"r-{a}", original_txn_id=f"d-{a}").balance_minor == 950
        assert led.credit(a, 50, txn_id=f"c-{a}").balance_minor == 1000
        assert led.freeze(a, txn_id=f"f-{a}").applied
        assert led.deduct(a, 1, txn_id=f"x-{a}").status is Status.ACCOUNT_FROZEN
    assert sum(led.balance(a) for a in accounts) == 40 * 1000
    with pytest.raises(TxnConflict):
        led.deduct("A-1", 5, txn_id="d-A-1")


def test_partitions_spread_over_every_primary(cluster_ledger, redis_cluster):
    parts = cluster_ledger.partitions
    assert len(parts) == 16
    owners = set()
    for part in parts:
        slot = key_slot(part.journal.encode())
        assert key_slot(part.account("x").encode()) == slot == key_slot(part.txn("y").encode())
        owners.add(cluster_ledger.client.get_node_from_key(part.journal).name)
    assert len(owners) == 3


def test_missing_function_on_cluster_is_transparent(cluster_ledger):
    cluster_ledger.open_account("A-1", txn_id="o", initial_minor=10)
    cluster_ledger.client.function_flush()              # every primary forgets the library
    assert cluster_ledger.deduct("A-1", 3, txn_id="d").balance_minor == 7


def test_a_primary_without_the_library_is_reported_and_reloaded(cluster_ledger):
    from core.doctor import diagnose
    led = cluster_ledger
    led.init()
    assert led.scripts.loaded_on(led.client)
    scripts = [f for f in diagnose(led, "redis+cluster://x") if f.check == "scripts"]
    assert [f.level for f in scripts] == ["ok"], scripts
    lost = led.client.get_primaries()[0]
    lost.redis_connection.function_flush()                      # one primary restarted without its AOF
    assert not led.scripts.loaded_on(led.client)
    (finding,) = [f for f in diagnose(led, "redis+cluster://x") if f.check == "scripts"]
    assert finding.level == "warn" and lost.name in finding.detail
    led.scripts.load_all(led.client)                            # loads where it is missing
    assert led.scripts.loaded_on(led.client)


def test_deduct_many_groups_by_node(cluster_ledger):
    led = cluster_ledger
    accounts = [f"B-{i}" for i in range(30)]
    for a in accounts:
        led.open_account(a, txn_id=f"open-{a}", initial_minor=500)
    led.client.function_flush()                                # the batch reloads the library itself
    reqs = [DeductRequest(a, 200, f"b-{a}") for a in accounts] + [DeductRequest("B-0", 400, "big")]
    results = led.deduct_many(reqs)
    assert [r.status for r in results[:-1]] == [Status.APPLIED] * 30
    assert results[-1].status is Status.INSUFFICIENT_FUNDS
    again = led.deduct_many(reqs[:5])
    assert all(r.replayed for r in again)
    assert sum(led.balance(a) for a in accounts) == 30 * 300


def test_cluster_url_form(cluster_url):
    assert cluster_url.startswith("redis+cluster://")
    led = Ledger.from_url(cluster_url)
    led.open_account("C-1", txn_id="o", initial_minor=1)
    assert led.balance("C-1") == 1
