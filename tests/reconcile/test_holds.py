"""Holds in the database of record, against real PostgreSQL and Redis: every hold's
amount, expiry and resolution (capture, void, expiry) land in `holds` whatever order
the batches commit in; the service journals the release of expired holds through
`Ledger.expire_holds`; `status` shows active holds per account."""
from __future__ import annotations

import json
import time

from sqlalchemy import select

from core import Ledger, Status
from reconcile_service.models import Hold, LedgerEntry
from reconcile_service.store import apply_batch
from tests.reconcile.conftest import assert_books_agree, run_cli


def _holds(db) -> dict:
    with db.connect() as conn:
        return {h.hold_txn_id: h for h in conn.execute(select(Hold)).all()}


def test_holds_captures_voids_and_expiry_reach_the_database(redis_url, pg_url, db, ledger, capsys):
    ledger.open_account("H-1", txn_id="open-H-1", initial_minor=10_000)
    ledger.open_account("H-2", txn_id="open-H-2", initial_minor=5_000)
    # migrate first: the short hold below must still be active when the next run sweeps
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert ledger.hold("H-1", 3000, txn_id="h-cap", ttl_s=600).applied
    assert ledger.hold("H-1", 1000, txn_id="h-void", ttl_s=600).applied
    assert ledger.hold("H-1", 500, txn_id="h-open", ttl_s=600).applied
    assert ledger.hold("H-2", 700, txn_id="h-exp", ttl_s=5).applied
    assert ledger.capture("h-cap", 2500, txn_id="c-1").applied             # partial: 500 released
    assert ledger.void("h-void", txn_id="v-1").applied
    assert ledger.capture("h-void", 10, txn_id="c-2").status is Status.HOLD_ALREADY_VOIDED
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    holds = _holds(db)
    assert (holds["h-cap"].status, holds["h-cap"].amount_minor, holds["h-cap"].captured_minor,
            holds["h-cap"].resolved_txn_id) == ("captured", 3000, 2500, "c-1")
    assert (holds["h-void"].status, holds["h-void"].resolved_txn_id) == ("voided", "v-1")
    assert holds["h-open"].status == "active" and holds["h-open"].expires_at is not None
    assert_books_agree(ledger, db)

    capsys.readouterr()
    time.sleep(6.0)                                     # h-exp (5 s) lapses; Redis stops counting it
    assert ledger.available("H-2") == 5000
    assert run_cli("status", "--json", redis_url=redis_url, database_url=pg_url) == 0
    info = json.loads(capsys.readouterr().out)["holds"]
    assert info["expired_unreleased"] == 1
    assert info["by_account"] == [{"account_id": "H-1", "count": 1, "sum_minor": 500}]
    # the service asks the ledger to journal the release; the entry comes back through the journal
    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    h = _holds(db)["h-exp"]
    assert (h.status, h.resolved_kind, h.captured_minor) == ("expired", "hold_expire", 0)
    with db.connect() as conn:
        entry = conn.execute(select(LedgerEntry).where(LedgerEntry.txn_id == h.resolved_txn_id)).one()
        assert entry.kind == "hold_expire" and entry.original_txn_id == "h-exp" and entry.amount_minor == 0
    capsys.readouterr()
    assert run_cli("status", redis_url=redis_url, database_url=pg_url) == 0
    out = capsys.readouterr().out
    assert "active holds: 1 holding 500" in out and "0 expired" in out
    assert_books_agree(ledger, db)


def test_hold_rows_do_not_depend_on_the_commit_order(redis_url, pg_url, db, ledger):
    """Two consumers may commit batches of one partition out of order: the capture's
    batch first, then the hold's. The row ends the same as in order."""
    assert run_cli("migrate", redis_url=redis_url, database_url=pg_url) == 0
    ledger.open_account("H-9", txn_id="open-H-9", initial_minor=9_000)
    ledger.hold("H-9", 4000, txn_id="h-1", ttl_s=600)
    ledger.capture("h-1", 4000, txn_id="c-1")
    ledger.hold("H-9", 100, txn_id="h-2", ttl_s=600)
    ledger.void("h-2", txn_id="v-2")
    part = ledger.partitions[0]
    raw = ledger.client.xrange(part.journal)
    for entry in reversed(raw):                          # newest first, one batch each
        apply_batch(db, part.index, [entry])
    apply_batch(db, part.index, raw)                     # redelivered in order: changes nothing
    holds = _holds(db)
    assert (holds["h-1"].status, holds["h-1"].amount_minor, holds["h-1"].captured_minor) == ("captured", 4000, 4000)
    assert (holds["h-2"].status, holds["h-2"].amount_minor, holds["h-2"].resolved_txn_id) == ("voided", 100, "v-2")
    assert holds["h-1"].expires_at is not None and holds["h-1"].hold_journal_id == raw[1][0]
