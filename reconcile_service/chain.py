"""The tamper-evident book: each `ledger_entries` row carries a SHA-256 hash chained to
the previous row of its journal partition, so an edited, inserted or deleted row breaks
the chain from that row on and `verify_chain` names the first broken one.

Canonical form, version 1 (frozen: rows hashed under it must verify forever)::

    canonical = JSON array, no spaces, UTF-8, of
        [journal_partition, chain_seq, journal_id, txn_id, account_id, kind,
         amount_minor, principal_delta_minor, bonus_delta_minor, method,
         balance_after_minor, terminal_id, cashier_id, original_txn_id, occurred_us]
    row_hash  = hex(SHA-256(prev_hash + "\\n" + canonical))

where `occurred_us` is `occurred_at` in whole microseconds since the Unix epoch (UTC),
NULL columns are JSON null, `chain_seq` numbers a partition's rows 1, 2, 3, ... in the
order the book was written (batches of one partition are serialised by a row lock on
`chain_heads`, see `store.apply_batch`), and the first row's `prev_hash` is
`GENESIS_HASH` (64 zeros). `applied_at` (when the database wrote the row) is not
covered (nor were the split-account columns that migration 0010 dropped, so rows written
before it verify unchanged). Within a batch rows are chained in journal order.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from operator import itemgetter
from datetime import datetime, timedelta, timezone
from typing import Sequence

GENESIS_HASH = "0" * 64
HASH_LEN = 64
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# The columns of the canonical form, in order (occurred_at as microseconds).
CANONICAL_COLUMNS = ("journal_partition", "chain_seq", "journal_id", "txn_id", "account_id", "kind",
                     "amount_minor", "principal_delta_minor", "bonus_delta_minor", "method",
                     "balance_after_minor", "terminal_id", "cashier_id", "original_txn_id", "occurred_at")

_SLOW_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_SAMPLE = [1, 2, "1-0", "t\u00e9\"\\\n", "\u4e2d", None, -3, 10 ** 18]


def _fast_dumps():
    """json's C encoder made once (JSONEncoder.encode builds one per call: half the cost
    of a row's canonical form), with the same options; used only if it gives the same
    text as the encoder above on a sample of the values a row holds."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return _SLOW_DUMPS
    try:
        encoder = make(None, None, json.encoder.encode_basestring, None, ":", ",", False, False, True)
    except TypeError:
        return _SLOW_DUMPS
    dumps = lambda values: "".join(encoder(values, 0))
    return dumps if dumps(_SAMPLE) == _SLOW_DUMPS(_SAMPLE) else _SLOW_DUMPS


_dumps = _fast_dumps()


def occurred_us(value: datetime | str) -> int:
    """Microseconds since the epoch; a naive datetime (SQLite returns those) is UTC, and
    text (SQLite's storage, read without a column type, as in a migration) is parsed."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def utc_day(value: datetime | str):
    """The UTC calendar day of an instant (naive and text as in `occurred_us`)."""
    from datetime import date
    us = occurred_us(value)
    return date(1970, 1, 1) + timedelta(days=us // 86_400_000_000)


def canonical_values(row) -> list:
    """The canonical values of a row (a dict or a result row with the columns above), in
    CANONICAL_COLUMNS order, occurred_at as microseconds."""
    get = row.__getitem__ if isinstance(row, dict) else row._mapping.__getitem__
    values = [get(c) for c in CANONICAL_COLUMNS[:-1]]
    values.append(occurred_us(get("occurred_at")))
    return values


def canonical(row) -> bytes:
    """The canonical bytes of a row (a dict or a result row with the columns above)."""
    return _dumps(canonical_values(row)).encode("utf-8")


def hash_values(prev_hash: str, values: list) -> str:
    """THE row hash (version 1): of a row's canonical values, chained after `prev_hash`.
    The chainer (`link`, `Linker`) writes it and the verifier (`verify_chain`, which
    `verify` runs) recomputes it, both through this one function."""
    return hashlib.sha256(b"%s\n%s" % (prev_hash.encode("ascii"), _dumps(values).encode("utf-8"))).hexdigest()


def row_hash(prev_hash: str, row) -> str:
    """The row hash of a row given as a dict or a result row."""
    return hash_values(prev_hash, canonical_values(row))


def link(rows: list[dict], last_seq: int, last_hash: str) -> tuple[int, str]:
    """Give `rows` (in chain order) their chain_seq and row_hash after (last_seq,
    last_hash); answers the new head."""
    seq, prev = last_seq, last_hash
    for row in rows:
        seq += 1
        row["chain_seq"] = seq
        prev = row["row_hash"] = row_hash(prev, row)
    return seq, prev


class Linker:
    """`link` one row at a time, for rows given as lists in the order of `columns` (which
    name every canonical column, chain_seq and row_hash): the drain hashes each row as
    it streams it to the database. The same hashes as `link`; `seq` and `last_hash` are
    the head after the rows linked so far."""

    def __init__(self, columns: Sequence[str], last_seq: int, last_hash: str):
        at = {c: i for i, c in enumerate(columns)}
        self._seq_at, self._hash_at, self._occurred_at = at["chain_seq"], at["row_hash"], at["occurred_at"]
        self._pick = itemgetter(*(at[c] for c in CANONICAL_COLUMNS[:-1]))
        self._instants: dict[datetime, int] = {}     # rows of one instant share its microseconds
        self.seq, self.last_hash = last_seq, last_hash

    def __call__(self, row: list) -> None:
        self.seq += 1
        row[self._seq_at] = self.seq
        values = list(self._pick(row))
        occurred = row[self._occurred_at]
        us = self._instants.get(occurred)
        if us is None:
            us = self._instants[occurred] = occurred_us(occurred)
        values.append(us)
        self.last_hash = row[self._hash_at] = hash_values(self.last_hash, values)


@dataclass
class ChainBreak:
    journal_partition: int
    chain_seq: int | None         # the first row whose stored hash or number is wrong
    txn_id: str | None
    journal_id: str | None
    reason: str
    stored_hash: str | None = None
    expected_hash: str | None = None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class ChainReport:
    rows_checked: int
    partitions: int
    breaks: list[ChainBreak]

    @property
    def ok(self) -> bool:
        return not self.breaks


def verify_chain(conn, page_rows: int = 20_000) -> ChainReport:
    """Recompute every partition's chain from the genesis and report, per partition, the
    first row that does not match (edited, inserted or reordered rows; a missing row as a
    gap in chain_seq), and a head (`chain_heads`) that disagrees with the last row (rows
    deleted at the end). Reads in pages of `page_rows` in chain order."""
    from sqlalchemy import select
    from .models import ChainHead, LedgerEntry

    cols = [getattr(LedgerEntry, c) for c in CANONICAL_COLUMNS] + [LedgerEntry.row_hash]
    heads = {r.journal_partition: r for r in conn.execute(select(ChainHead))}
    parts = sorted(set(heads) | {r[0] for r in conn.execute(
        select(LedgerEntry.journal_partition).distinct())})
    breaks: list[ChainBreak] = []
    checked = 0
    for part in parts:
        seq, prev, broken = 0, GENESIS_HASH, None
        while broken is None:
            page = conn.execute(select(*cols).where(LedgerEntry.journal_partition == part,
                                                    LedgerEntry.chain_seq > seq)
                                .order_by(LedgerEntry.chain_seq).limit(page_rows)).all()
            for r in page:
                checked += 1
                if r.chain_seq != seq + 1:
                    broken = ChainBreak(part, seq + 1, r.txn_id, r.journal_id,
                                        f"row {seq + 1} of partition {part} is missing "
                                        f"(next stored row is {r.chain_seq})")
                    break
                expected = row_hash(prev, r)
                if expected != r.row_hash:
                    broken = ChainBreak(part, r.chain_seq, r.txn_id, r.journal_id,
                                        f"row {r.chain_seq} of partition {part} (txn {r.txn_id}) does not "
                                        "match its hash: it or the row before it was changed",
                                        r.row_hash, expected)
                    break
                seq, prev = r.chain_seq, r.row_hash
            if len(page) < page_rows:
                break
        head = heads.get(part)
        if broken is None and head is not None and (head.last_seq, head.last_hash) != (seq, prev):
            broken = ChainBreak(part, seq + 1 if head.last_seq > seq else head.last_seq, None, None,
                                f"partition {part}: the chain head says row {head.last_seq}, the table "
                                f"ends at row {seq}: rows were removed or added outside the service",
                                head.last_hash, prev)
        if broken is not None:
            breaks.append(broken)
    return ChainReport(checked, len(parts), breaks)
