"""Issue 30: journal entries are one compact field (core.journal_codec, version 1), and
entries written before it (one stream field per name) are still read everywhere. A
stream mixing both forms drains into the same book as a stream of either; the codec
round-trips any extra value (names, JSON, '|' and '%' included); the drain's parser
reads the compact form exactly as core.JournalEntry does. The drain reads the stream raw
(Redis's flat field lists) on a standalone Redis and through redis-py's dicts on a
Cluster: both give the same book, and an entry deleted while pending is quarantined."""
from __future__ import annotations

from dataclasses import fields

import pytest
from hypothesis import given, settings, strategies as st
from sqlalchemy import select

from core import JournalEntry
from core.journal_codec import FIELD, decode, encode, read_range
from core.keys import CONSUMER_GROUP
from reconcile_service import journal
from reconcile_service.metrics import Metrics
from reconcile_service.models import LedgerEntry, QuarantinedEntry, journal_pos
from reconcile_service.store import BookEntry
from tests.reconcile.conftest import assert_books_agree, run_cli
from tests.reconcile.test_drain_paths import SAMPLES


@pytest.mark.parametrize("old", SAMPLES, ids=[f["txn"] for f in SAMPLES])
def test_compact_and_old_entries_parse_alike(old):
    compact = encode(old)
    assert list(compact) == [FIELD] and decode(compact) == {**dict.fromkeys(("term", "cash", "orig"), ""), **old}
    for parse in (JournalEntry.from_fields, BookEntry.parse):
        a, b = parse("1700000000000-3", 2, old), parse("1700000000000-3", 2, compact)
        for f in fields(JournalEntry):
            assert getattr(a, f.name) == getattr(b, f.name), f.name
    assert BookEntry.parse("1-0", 0, old) == BookEntry.parse("1-0", 0, compact)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=6).filter(lambda n: n not in ("txn", "kind", "acct", "amt",
                                                                                   "bal", "term", "cash", "orig")),
                       st.text(max_size=20), max_size=5))
def test_any_extra_value_round_trips(extra):
    entry = {"txn": "t-1", "kind": "open", "acct": "A-1", "amt": "5", "bal": "5", "term": "T1", "cash": "",
             "orig": "", **extra}
    assert decode(encode(entry)) == entry


@pytest.mark.parametrize("payload", ["t|deduct|A|-1|4|||", "t|deduct|A|-1|4|T|C|o|pd", "t|deduct|A|-1"])
def test_a_malformed_payload_is_refused(payload):
    with pytest.raises(ValueError):
        decode({FIELD: payload + ("" if payload.count("|") != 7 else "|x")})


def test_the_scripts_write_one_field_with_extras_escaped(ledger):
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=500, holder_name="Wang|Fang %7C 王芳")
    ledger.deduct("A-1", 120, txn_id="d-1", terminal_id="T1", cashier_id="C1")
    part = ledger.schema.partition_of("A-1")
    raw = ledger.client.xrange(part.journal)
    assert all(list(f) == [FIELD] for _, f in raw)
    assert raw[-1][1][FIELD] == "d-1|deduct|A-1|-120|380|T1|C1|"
    opened = decode(raw[0][1])
    assert (opened["name"], opened["kind"], opened["amt"]) == ("Wang|Fang %7C 王芳", "open", "500")
    assert [e.kind for e in ledger.journal("A-1")] == ["deduct", "open"]


@pytest.mark.parametrize("reader", ["raw", "redis-py"])
def test_a_stream_mixing_old_and_compact_entries_drains_into_one_book(ledger, redis_url, pg_url, db, reader,
                                                                      monkeypatch):
    """The journal of a shop that upgraded mid-day: its entries, rewritten with the same ids
    so every other one is in the old form (as a script before issue 30 wrote it). Read raw,
    and as on a Cluster (no raw reader: redis-py's dict per entry)."""
    if reader == "redis-py":
        monkeypatch.setattr(journal, "_raw_reader", lambda client: None)
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=5_000, holder_name="Li|Lei")
    ledger.open_account("B-2", txn_id="open-B-2", initial_minor=900)
    for i in range(6):
        ledger.deduct("A-1", 100 + i, txn_id=f"d-{i}", terminal_id="T1", cashier_id="C9")
        ledger.credit("B-2", 50, txn_id=f"c-{i}", terminal_id="T2", method="wechat")
    ledger.hold("A-1", 300, txn_id="h-1", ttl_s=600)
    ledger.capture("h-1", 200, txn_id="cap-1")
    ledger.refund("A-1", 40, txn_id="r-1", original_txn_id="d-2")
    part = ledger.schema.partition_of("A-1")
    assert part == ledger.schema.partition_of("B-2")
    entries = read_range(ledger.client, part.journal)
    ledger.client.delete(part.journal)
    for i, (eid, f) in enumerate(entries):
        ledger.client.xadd(part.journal, f if i % 2 else encode(f), id=eid)
    ledger.client.xgroup_create(part.journal, CONSUMER_GROUP, "0")
    raw = ledger.client.xrange(part.journal)
    assert {len(f) == 1 for _, f in raw} == {True, False}          # both forms in the stream

    assert run_cli("run", "--once", redis_url=redis_url, database_url=pg_url) == 0
    assert_books_agree(ledger, db, expected_entries=len(entries))
    with db.connect() as conn:
        rows = {r.txn_id: r for r in conn.execute(select(LedgerEntry))}
    for eid, f in entries:
        row = rows[f["txn"]]
        assert (row.journal_id, row.kind, row.amount_minor, row.balance_after_minor) == \
            (eid, f["kind"], int(f["amt"]), int(f["bal"]))
        assert (row.terminal_id or "", row.cashier_id or "", row.original_txn_id or "") == \
            (f["term"], f["cash"], f["orig"])
        assert (row.method or "") == f.get("m", "")
    assert rows["cap-1"].original_txn_id == "h-1" and rows["c-3"].method == "wechat"


@pytest.mark.parametrize("reader", ["raw", "redis-py"])
def test_an_entry_deleted_while_pending_is_quarantined_not_lost(ledger, redis_url, pg_url, db, reader,
                                                               monkeypatch):
    """A consumer holds entries it has not booked; one is deleted from the stream (XDEL): its
    next read gets the id without fields, which is quarantined (visible), the rest booked."""
    if reader == "redis-py":
        monkeypatch.setattr(journal, "_raw_reader", lambda client: None)
    ledger.open_account("A-1", txn_id="open-A-1", initial_minor=1_000)
    for i in range(3):
        ledger.deduct("A-1", 10, txn_id=f"d-{i}")
    part = ledger.schema.partition_of("A-1")
    assert run_cli("migrate", redis_url=redis_url, database_url=pg_url) == 0
    consumer = journal.Consumer(ledger, db, "c1", batch_size=100, claim_idle_ms=60_000, metrics=Metrics())
    assert (consumer._reader is None) == (reader == "redis-py")
    held = consumer._read_new(part, None)          # pending at c1, not booked (a crash here)
    assert len(held) == 4
    gone = held[2][0]
    ledger.client.xdel(part.journal, gone)
    consumer._own_pending[part.index] = True
    assert consumer.step(part) == 4
    with db.connect() as conn:
        booked = sorted(r.txn_id for r in conn.execute(select(LedgerEntry)))
        quarantined = [r.journal_id for r in conn.execute(select(QuarantinedEntry))]
    assert booked == ["d-0", "d-2", "open-A-1"] and quarantined == [gone]
    assert ledger.client.xpending(part.journal, CONSUMER_GROUP)["pending"] == 0


def _journal_pos_by_integers(journal_id: str) -> str:
    """journal_pos as first written: both parts through int(), range-checked."""
    ms, _, seq = journal_id.partition("-")
    ms_i, seq_i = int(ms), int(seq or 0)
    if ms_i < 0 or seq_i < 0 or ms_i >= 10 ** 15 or seq_i >= 10 ** 19:
        raise ValueError(journal_id)
    return f"{ms_i:015d}{seq_i:019d}"


@settings(max_examples=3000, deadline=None)
@given(st.one_of(st.text(alphabet="0123456789-+ ²x", max_size=40),
                 st.builds(lambda ms, seq: f"{ms}-{seq}", st.integers(0, 10 ** 16), st.integers(0, 10 ** 20)),
                 st.builds(lambda ms, seq: f"{ms}-{seq}", st.text("0123456789", min_size=1, max_size=17),
                           st.text("0123456789", min_size=1, max_size=21))))
def test_journal_pos_fast_path_equals_the_integer_form(journal_id):
    """The drain's per-entry position (a fast path for Redis's own ids) answers exactly what
    the integer form does, and refuses what it refuses (leading zeros, widths, signs)."""
    def answer(fn):
        try:
            return fn(journal_id)
        except ValueError:
            return "refused"
    assert answer(journal_pos) == answer(_journal_pos_by_integers)
