"""Issue 25 items 4 and 5 against real Redis and PostgreSQL, attacked with a plain Redis
client (what any holder of a Redis login can do) and, for a tampered book, rows written
straight into the database by its owner:

- a copy of a booked sale XADDed into the journal is not "reversed" by a compensating
  credit (that would create money): it is an open `forged_entry` with its evidence;
- `verify` pairs every compensating credit with the applied duplicate it reverses;
- the pass and `verify` find a sale refunded beyond what it took, in all or per bucket,
  in the book."""
from __future__ import annotations

import json

import pytest
import redis
from sqlalchemy import func, insert, select
from sqlalchemy import text as sql_text

from reconcile_service.models import Discrepancy, DuplicateEntry, LedgerEntry
from reconcile_service.verify import verify
from tests.reconcile.conftest import run_cli


@pytest.fixture
def raw(redis_url):
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


def _compensations(db) -> int:
    with db.connect() as conn:
        return conn.execute(select(func.count()).select_from(LedgerEntry)
                            .where(LedgerEntry.kind == "compensate")).scalar_one()


def test_a_copy_of_a_booked_sale_is_a_forged_entry_not_a_credit(redis_url, pg_url, db, ledger, raw):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=5_000)
    sale = ledger.deduct("A-1", 1_200, txn_id="t-1", terminal_id="T1")
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    part = ledger.schema.partition_of("A-1")
    [(_, fields)] = raw.xrange(part.journal, sale.journal_id, sale.journal_id)
    copy_id = raw.xadd(part.journal, fields)                  # the attack: the same entry again
    assert raw.hget(part.txn("t-1"), "j") == sale.journal_id   # the record still names the first

    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 1   # open discrepancy
    assert ledger.balance("A-1") == 3_800 and _compensations(db) == 0           # no money moved
    with db.connect() as conn:
        dup = conn.execute(select(DuplicateEntry)).one()
        assert (dup.txn_id, dup.journal_id, dup.status, dup.compensation_txn_id) == ("t-1", copy_id, "forged", None)
        forged = conn.execute(select(Discrepancy).where(Discrepancy.kind == "forged_entry")).one()
        assert forged.status == "open" and forged.account_id == "A-1" and forged.journal_id == copy_id
        assert "never applied" in forged.cause
        evidence = json.loads(forged.evidence_json)
        assert evidence["txn_record"]["j"] == sale.journal_id
        assert evidence["duplicate"]["first_journal_id"] == sale.journal_id
        assert conn.execute(select(Discrepancy.status).where(Discrepancy.kind == "duplicate_txn")
                            ).scalar_one() == "cleared"
    # later passes do not compensate it either
    assert run_cli("reconcile", redis_url=redis_url, database_url=pg_url) == 1
    assert ledger.balance("A-1") == 3_800 and _compensations(db) == 0
    kinds = {v.kind for v in verify(ledger, db).violations}
    assert "forged_entry" in kinds and "unpaired_compensation" not in kinds


def test_an_applied_duplicate_is_still_compensated_and_paired(redis_url, pg_url, db, ledger):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=5_000)
    ledger.deduct("A-1", 1_200, txn_id="t-1")
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    ledger.client.delete(ledger.schema.partition_of("A-1").txn("t-1"))     # retention passed
    assert ledger.deduct("A-1", 1_200, txn_id="t-1").applied               # the late retry applies
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert ledger.balance("A-1") == 3_800 and _compensations(db) == 1
    with db.connect() as conn:
        d = conn.execute(select(Discrepancy).where(Discrepancy.kind == "duplicate_txn")).one()
    proof = json.loads(d.evidence_json)["applied_proof"]
    assert d.status == "repaired" and proof["how"] == "txn_record"
    assert proof["txn_record"]["j"] == d.journal_id
    report = verify(ledger, db)
    assert report.ok, report.violations
    assert report.checked["compensations"] == 1


def test_verify_reports_a_compensation_without_its_duplicate(redis_url, pg_url, db, ledger):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=5_000)
    ledger.deduct("A-1", 1_200, txn_id="t-1")
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    # the issue-24 attack: a compensating credit called by hand, nothing applied twice
    assert ledger.compensate("A-1", 5_000_000, txn_id="@cmp:0:1-1", original_txn_id="t-1").applied
    report = verify(ledger, db)
    [v] = [v for v in report.violations if v.kind == "unpaired_compensation"]
    assert v.account_id == "A-1" and v.evidence["txn_id"] == "@cmp:0:1-1"
    assert v.evidence["amount_minor"] == 5_000_000 and v.evidence["duplicate"] is None


def _tamper_book(db, template_txn: str, **changes) -> None:
    """Insert a row into ledger_entries as only the book's owner can (trigger off)."""
    with db.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sql_text("ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only"))
        row = conn.execute(select(LedgerEntry).where(LedgerEntry.txn_id == template_txn)).one()._asdict()
        row.pop("id")
        row.update(journal_id="1-1", journal_pos="0" * 33 + "1", chain_seq=row["chain_seq"] + 10 ** 9, **changes)
        conn.execute(insert(LedgerEntry).values(**row))
        if conn.dialect.name == "postgresql":
            conn.execute(sql_text("ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only"))


def test_a_sale_refunded_beyond_what_it_took_in_the_book(redis_url, pg_url, db, ledger):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=5_000)
    ledger.deduct("A-1", 500, txn_id="sale")
    ledger.refund("A-1", 300, txn_id="r-1", original_txn_id="sale")
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert verify(ledger, db).ok
    _tamper_book(db, "r-1", txn_id="r-forged", amount_minor=400, principal_delta_minor=400)

    [v] = [v for v in verify(ledger, db).violations if v.kind == "refund_exceeds_sale"]
    assert v.account_id == "A-1" and v.evidence["refunded_minor"] == 700
    assert v.evidence["sale"]["txn_id"] == "sale" and v.evidence["sale"]["amount_minor"] == -500
    assert {r["txn_id"] for r in v.evidence["refunds"]} == {"r-1", "r-forged"}
    assert run_cli("reconcile", redis_url=redis_url, database_url=pg_url) == 1
    with db.connect() as conn:
        d = conn.execute(select(Discrepancy).where(Discrepancy.kind == "refund_exceeds_sale")).one()
    assert d.status == "open" and d.account_id == "A-1" and "sale sale" in d.cause
    assert json.loads(d.evidence_json)["sales"][0]["refunded_minor"] == 700


def test_a_bucket_refunded_beyond_what_the_sale_took_from_it(redis_url, pg_url, db, ledger):
    ledger.open_account("A-1", txn_id="open-A-1")
    ledger.add_promotion(1_000, 500, txn_id="promo")         # the bonus the pass expects
    ledger.credit("A-1", 1_000, txn_id="top", bonus_minor=500)
    ledger.set_spend_order("bonus_first", txn_id="order")
    ledger.deduct("A-1", 600, txn_id="sale")                  # 500 bonus, 100 principal
    ledger.refund("A-1", 60, txn_id="r-1", original_txn_id="sale")
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert verify(ledger, db).ok
    # within the sale in all, but 200 principal back of the 100 it took
    _tamper_book(db, "r-1", txn_id="r-forged", amount_minor=200, principal_delta_minor=200, bonus_delta_minor=0)
    [v] = [v for v in verify(ledger, db).violations if v.kind == "refund_exceeds_sale"]
    assert "principal" in v.detail and "in all" not in v.detail
    assert v.evidence["refunded_minor"] == 260 <= 600


def test_without_the_record_the_balance_chain_decides(redis_url, pg_url, db, ledger, raw):
    """A txn applied three times (its record expired twice): the record names only the last
    application, so the earlier duplicate is proven by the book's balance chain. A copy of
    the sale written after the record expired carries the sale's balance, which does not
    follow the entry before it: forged."""
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=5_000)
    sale = ledger.deduct("A-1", 1_200, txn_id="t-1")
    record = ledger.schema.partition_of("A-1").txn("t-1")
    for _ in range(2):
        ledger.client.delete(record)
        assert ledger.deduct("A-1", 1_200, txn_id="t-1").applied
    assert ledger.balance("A-1") == 1_400
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert ledger.balance("A-1") == 3_800 and _compensations(db) == 2
    with db.connect() as conn:
        hows = sorted(json.loads(d.evidence_json)["applied_proof"]["how"] for d in conn.execute(
            select(Discrepancy).where(Discrepancy.kind == "duplicate_txn")))
    assert hows == ["balance_chain", "txn_record"]

    ledger.client.delete(record)                                # expired once more
    part = ledger.schema.partition_of("A-1")
    [(_, fields)] = raw.xrange(part.journal, sale.journal_id, sale.journal_id)
    raw.xadd(part.journal, fields)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 1
    assert ledger.balance("A-1") == 3_800 and _compensations(db) == 2
    with db.connect() as conn:
        forged = conn.execute(select(Discrepancy).where(Discrepancy.kind == "forged_entry")).one()
    evidence = json.loads(forged.evidence_json)
    assert evidence["txn_record"] is None and evidence["balance_chain"]["balance_after_minor"] == 3_800
