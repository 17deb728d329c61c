"""The book's chain heads anchored outside the database (issue 25 item 9), on real Redis
and PostgreSQL: the drain anchors each partition's head in Redis after each batch; a
book whose tail was deleted (rows removed and chain_heads moved back, by the database's
owner) is found by `verify`, which names the missing rows; the anchor never moves back;
the liability report prints each head's seq and first 16 hex digits."""
from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import func, select, text

from reconcile_service import anchors, db as dbmod
from reconcile_service.models import ChainHead, LedgerEntry
from reconcile_service.reports import book, commands
from reconcile_service.verify import verify
from tests.reconcile.conftest import open_accounts, run_cli, workload


def _drained(ledger, redis_url, url):
    accounts = open_accounts(ledger, 6)
    workload(ledger, accounts, 200, seed=9)
    assert run_cli("run", "--once", redis_url=redis_url, database_url=url) == 0
    return accounts


def test_the_drain_anchors_every_head_and_the_anchor_never_moves_back(ledger, redis_url, pg_url):
    _drained(ledger, redis_url, pg_url)
    eng = dbmod.make_engine(pg_url)
    try:
        with eng.connect() as conn:
            heads = {r.journal_partition: (r.last_seq, r.last_hash) for r in conn.execute(select(ChainHead))}
        found = anchors.read_anchors(ledger)
        assert heads and {i: (a.seq, a.row_hash) for i, a in found.items()} == heads
        part = ledger.partitions[next(iter(heads))]
        seq, row_hash = heads[part.index]
        assert anchors.write_anchor(ledger, part, 1, "0" * 64) == seq      # an older head is ignored
        assert anchors.read_anchors(ledger)[part.index].row_hash == row_hash
        assert verify(ledger, eng, drain_first=False).ok
    finally:
        eng.dispose()


def test_a_deleted_tail_is_found_by_verify_naming_the_missing_rows(ledger, redis_url, pg_url):
    _drained(ledger, redis_url, pg_url)
    eng = dbmod.make_engine(pg_url)
    try:
        assert verify(ledger, eng, drain_first=False).ok
        with eng.begin() as conn:
            part, last = conn.execute(select(LedgerEntry.journal_partition, func.max(LedgerEntry.chain_seq))
                                      .group_by(LedgerEntry.journal_partition)
                                      .order_by(func.max(LedgerEntry.chain_seq).desc())).first()
            keep = last - 3
            prev = conn.execute(select(LedgerEntry.row_hash).where(
                LedgerEntry.journal_partition == part, LedgerEntry.chain_seq == keep)).scalar_one()
            # the database's owner: the append-only trigger off, the tail deleted, the head moved back
            conn.execute(text("ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only"))
            conn.execute(text("DELETE FROM ledger_entries WHERE journal_partition = :p AND chain_seq > :s"),
                         {"p": part, "s": keep})
            conn.execute(text("ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only"))
            conn.execute(text("UPDATE chain_heads SET last_seq = :s, last_hash = :h WHERE journal_partition = :p"),
                         {"p": part, "s": keep, "h": prev})
        report = verify(ledger, eng, drain_first=False)
        behind = [v for v in report.violations if v.kind == "chain_behind_anchor"]
        assert len(behind) == 1, report.as_dict()
        v = behind[0]
        assert (v.evidence["missing_from_seq"], v.evidence["missing_to_seq"]) == (keep + 1, last)
        assert f"seq {keep + 1}..{last}" in v.detail and f"partition {part}" in v.detail
        assert not [b for b in report.violations if b.kind == "chain_broken"]   # the chain alone is silent
    finally:
        eng.dispose()


def test_the_liability_report_prints_each_chain_head(ledger, redis_url, pg_url):
    _drained(ledger, redis_url, pg_url)
    eng = dbmod.make_engine(pg_url)
    try:
        with eng.connect() as conn:
            heads = conn.execute(select(ChainHead).order_by(ChainHead.journal_partition)).all()
        today = datetime.now(timezone.utc).date().isoformat()
        zone = book.shop_zone("UTC")
        payload, rep = commands.build("liability", eng, zone, "en", "text", date=today)
        printed = payload.decode()
        for h in heads:
            assert f"{h.journal_partition}: {h.last_seq} {h.last_hash[:16]}" in printed
        assert rep.as_dict()["chain_heads"][0]["hash_digits"] == heads[0].last_hash[:16]
    finally:
        eng.dispose()
