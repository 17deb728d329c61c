"""`verify` reads the whole journal in bounded pages (issue 33 item 6): it used to read
at most 500,000 entries in one XRANGE (a 116 MB reply that stalled Redis) and say "ok"
having checked part of a longer stream. Here the page is 7 entries: every entry is still
checked, in pages, and an entry missing from the book on the last page is still found."""
from __future__ import annotations

from sqlalchemy import create_engine

from reconcile_service import db as dbmod
from reconcile_service import verify as verify_mod
from reconcile_service.verify import verify
from tests.reconcile.conftest import open_accounts, workload


def test_verify_pages_through_a_journal_longer_than_its_page(redis_url, pg_url, ledger, monkeypatch):
    monkeypatch.setattr(verify_mod, "STREAM_PAGE_ENTRIES", 7)
    accounts = open_accounts(ledger, 5)
    workload(ledger, accounts, 55, seed=3)
    length = sum(ledger.client.xlen(p.journal) for p in ledger.partitions)
    assert length > 3 * 7
    engine = create_engine(pg_url)
    dbmod.migrate(engine)
    ledger.client.config_resetstat()
    report = verify(ledger, engine)
    assert report.ok, report.violations
    assert report.checked["stream_entries"] == length
    xranges = int(ledger.client.info("commandstats").get("cmdstat_xrange", {}).get("calls", 0))
    assert xranges >= length // 7, f"{xranges} XRANGE calls for {length} entries in pages of 7"
    engine.dispose()


def test_stream_pages_yields_every_entry_once(ledger):
    stream = "cs:{t}:pages"
    ids = [ledger.client.xadd(stream, {"n": str(i)}) for i in range(23)]
    seen = [entry_id for entry_id, _ in verify_mod.stream_pages(ledger.client, stream, page_entries=5)]
    assert seen == ids
    assert list(verify_mod.stream_pages(ledger.client, "cs:{t}:empty", page_entries=5)) == []
