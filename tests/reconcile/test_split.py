"""Split accounts in the database of record, against real PostgreSQL and Redis: shards
with rebalancing transfers and a transfer left half done, then `run --once`: the
account shows as one (its total), each sub-balance reconciles like any account, and
database total == Redis total == sum of entries. Restore leaves a split account out
with a clear message instead of inventing shards."""
from __future__ import annotations

import json
import random

from sqlalchemy import func, select

from core import Ledger, Status
from reconcile_service.models import Account, LedgerEntry, SubBalance
from tests.reconcile.conftest import assert_books_agree, open_accounts, run_cli


def _split_workload(ledger: Ledger, seed: int) -> None:
    rng = random.Random(seed)
    ledger.open_account("HOT", txn_id="open-HOT", initial_minor=200_000)
    assert ledger.split_account("HOT", shards=4, txn_id="split-HOT").applied
    for i in range(300):
        roll = rng.random()
        if roll < 0.6:
            ledger.deduct("HOT", rng.randint(100, 9000), txn_id=f"s-d-{i}")   # large ones rebalance
        elif roll < 0.85:
            ledger.credit("HOT", rng.randint(1, 3000), txn_id=f"s-c-{i}")
        elif roll < 0.95:
            held = ledger.hold("HOT", rng.randint(1, 500), txn_id=f"s-h-{i}", ttl_s=600)
            if held.applied:
                ledger.capture(f"s-h-{i}", 1, txn_id=f"s-hc-{i}")
        else:
            ledger.freeze("HOT", txn_id=f"s-f-{i}")
            ledger.unfreeze("HOT", txn_id=f"s-u-{i}")


def test_split_account_with_rebalancing_reconciles_as_one(redis_url, pg_url, db, ledger, capsys):
    open_accounts(ledger, 3)
    _split_workload(ledger, seed=7)
    # a process died between the two halves of a transfer: money in flight
    state = ledger.split_state("HOT")
    src = max(state.shard_subs(), key=lambda s: s.available_minor)
    ledger.transfer_out_only("HOT", src.id, "HOT#0" if src.id != "HOT#0" else "HOT#1", 50, "half-1")
    total = ledger.balance("HOT")
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    summary = assert_books_agree(ledger, db)
    assert summary["accounts"] == 4 and summary["sub_balances"] == 4 + 4
    assert ledger.split_state("HOT").in_flight_minor == 0        # settled by the pass
    with db.connect() as conn:
        row = conn.execute(select(Account).where(Account.account_id == "HOT")).one()
        assert row.balance_minor == total == ledger.balance("HOT")
        subs = {s.account_id: s for s in conn.execute(select(SubBalance).where(
            SubBalance.root_account_id == "HOT"))}
        assert set(subs) == {"HOT", "HOT#0", "HOT#1", "HOT#2", "HOT#3"}
        assert subs["HOT"].shards == 4 and not subs["HOT#2"].closed
        assert sum(s.balance_minor for s in subs.values()) == total
        moves = conn.execute(select(func.count()).select_from(LedgerEntry).where(
            LedgerEntry.kind == "xfer_out", LedgerEntry.root_account_id == "HOT")).scalar_one()
        assert moves > 4 + 1, "no rebalancing happened: make the deductions bigger"

    # a shard's own balance corrupted outside the scripts is found like any account's
    part = ledger.schema.partition_of("HOT#2")
    ledger.client.hincrby(part.account("HOT#2"), "bal", 5)
    capsys.readouterr()
    assert run_cli("reconcile", "--json", redis_url=redis_url, database_url=pg_url) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["kind"], f["account_id"]) for f in findings] == [("balance_mismatch", "HOT#2")]
    ledger.client.hincrby(part.account("HOT#2"), "bal", -5)

    # merge folds it back: one plain account again, shards empty and closed
    assert ledger.merge_account("HOT", txn_id="merge-HOT").applied
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert_books_agree(ledger, db)
    with db.connect() as conn:
        subs = {s.account_id: s for s in conn.execute(select(SubBalance).where(
            SubBalance.root_account_id == "HOT"))}
        assert subs["HOT"].shards == 0 and subs["HOT#1"].closed and subs["HOT#1"].balance_minor == 0


def test_restore_leaves_split_accounts_out_and_says_why(redis_url, pg_url, db, ledger, capsys):
    accounts = open_accounts(ledger, 3)
    ledger.open_account("HOT", txn_id="open-HOT", initial_minor=50_000)
    ledger.split_account("HOT", shards=2, txn_id="split-HOT")
    ledger.open_account("WAS", txn_id="open-WAS", initial_minor=8_000)
    ledger.split_account("WAS", shards=2, txn_id="split-WAS")
    ledger.deduct("WAS", 300, txn_id="was-d")
    assert ledger.merge_account("WAS", txn_id="merge-WAS").applied
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    ledger.client.flushdb()
    capsys.readouterr()
    assert run_cli("restore", redis_url=redis_url, database_url=pg_url) == 4
    captured = capsys.readouterr()
    assert "NOT restored: HOT: split into 2 shards" in captured.out and "not restored" in captured.err
    fresh = Ledger.from_url(redis_url, auto_init=False)
    assert [fresh.balance(a) for a in accounts] == [100_000] * 3
    assert fresh.balance("WAS") == 7_700                   # merged back: restored as the plain account it is
    assert fresh.deduct("HOT", 1, txn_id="after").status is Status.ACCOUNT_NOT_FOUND   # nothing invented
