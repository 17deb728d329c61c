"""The book's chain heads anchored outside the database (issue 25 item 9).

The hash chain (`chain`) makes an edited or removed row *inside* the book visible, but a
writer with the database's owner credentials can delete the last rows and move
`chain_heads` back: the shorter chain verifies. So the head is also kept where that
writer cannot reach it:

* in Redis: after each batch's COMMIT the drain stores the partition's new head (seq,
  row hash) in `cs:{<tag>}:anchor` through `core/lua/chain_anchor.lua`, which only moves
  it forward (`anchor_batch`);
* on paper: the liability report and the shift report print each partition's head as
  seq and the first 16 hex digits of its hash (`head_digits`), so yesterday's printout
  proves what the book held then.

`anchor_problems` compares the book with the Redis anchors: a book behind its anchor
names the missing rows (seq a..b); a row at the anchor's seq with another hash means the
chain was rewritten from there. `verify` and the periodic pass report both.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from redis.exceptions import RedisError
from sqlalchemy import func, select

from core import Ledger, LedgerUnavailable
from core.keys import Partition

from .models import ChainHead, LedgerEntry

log = logging.getLogger(__name__)

DIGITS = 16          # hex digits of a head's hash printed on the reports
SCRIPT = "chain_anchor"


@dataclass(frozen=True)
class Anchor:
    partition: int
    seq: int
    row_hash: str
    anchored_ms: int


@dataclass(frozen=True)
class AnchorProblem:
    kind: str            # chain_behind_anchor | chain_anchor_mismatch
    partition: int
    detail: str
    evidence: dict


def write_anchor(ledger: Ledger, part: Partition, seq: int, row_hash: str) -> int:
    """Anchor `part`'s head at (seq, row_hash) unless a later head is anchored already;
    answers the seq anchored now."""
    reply = ledger._with_retry(ledger._script, SCRIPT, [part.chain_anchor], [str(seq), row_hash], txn_id=None)
    return int(reply[1])


def anchor_batch(ledger: Ledger, part: Partition, chain_head: tuple[int, str] | None) -> None:
    """After a batch's COMMIT: anchor the head it left (None: it chained no row). A
    failure is logged and left to the next batch (the anchor lags, the drain goes on:
    the entries are in the book, and an anchor behind the book is harmless)."""
    if not chain_head or chain_head[0] <= 0:
        return
    try:
        write_anchor(ledger, part, *chain_head)
    except (RedisError, OSError, LedgerUnavailable) as exc:   # e.g. replicas did not confirm it
        log.warning("chain anchor not written", extra={"partition": part.index, "chain_seq": chain_head[0],
                                                       "error": f"{type(exc).__name__}: {exc}"[:300]})


def read_anchors(ledger: Ledger) -> dict[int, Anchor]:
    """Every partition's anchor in Redis (partitions never anchored are left out)."""
    pipe = ledger.client.pipeline(transaction=False)
    for part in ledger.partitions:
        pipe.hmget(part.chain_anchor, "seq", "hash", "ms")
    out = {}
    for part, (seq, row_hash, ms) in zip(ledger.partitions, pipe.execute()):
        if seq is not None and row_hash:
            out[part.index] = Anchor(part.index, int(seq), row_hash, int(ms or 0))
    return out


def anchor_problems(conn, ledger: Ledger) -> list[AnchorProblem]:
    """The book against the Redis anchors, partition by partition. The anchor is written
    after the COMMIT, so the book may be ahead of it, never behind."""
    anchors = read_anchors(ledger)
    if not anchors:
        return []
    heads = {r.journal_partition: (int(r.last_seq), r.last_hash) for r in conn.execute(select(ChainHead))}
    out: list[AnchorProblem] = []
    for index, anchor in sorted(anchors.items()):
        last_row = conn.execute(select(func.max(LedgerEntry.chain_seq)).where(
            LedgerEntry.journal_partition == index)).scalar() or 0
        head_seq = heads.get(index, (0, ""))[0]
        book_seq = min(int(last_row), head_seq)
        evidence = {"journal_partition": index, "anchor_seq": anchor.seq, "anchor_hash": anchor.row_hash,
                    "anchored_ms": anchor.anchored_ms, "chain_head_seq": head_seq, "last_row_seq": int(last_row)}
        if book_seq < anchor.seq:
            first = book_seq + 1
            out.append(AnchorProblem(
                "chain_behind_anchor", index,
                f"partition {index}: the book ends at row {book_seq} but row {anchor.seq} was anchored in "
                f"Redis: rows seq {first}..{anchor.seq} are missing from the book (its tail was deleted)",
                dict(evidence, missing_from_seq=first, missing_to_seq=anchor.seq)))
            continue
        stored = conn.execute(select(LedgerEntry.row_hash).where(
            LedgerEntry.journal_partition == index, LedgerEntry.chain_seq == anchor.seq)).scalar()
        if stored != anchor.row_hash:
            out.append(AnchorProblem(
                "chain_anchor_mismatch", index,
                f"partition {index}: row {anchor.seq} has hash {str(stored)[:DIGITS]}..., its anchor "
                f"{anchor.row_hash[:DIGITS]}...: the chain was rewritten from row {anchor.seq} or before",
                dict(evidence, book_hash=stored)))
    return out


def head_digits(conn) -> list[dict]:
    """Each partition's chain head as printed on the reports: partition, seq and the
    first DIGITS hex digits of the head's hash."""
    return [{"journal_partition": r.journal_partition, "chain_seq": int(r.last_seq),
             "hash_digits": r.last_hash[:DIGITS]}
            for r in conn.execute(select(ChainHead).order_by(ChainHead.journal_partition))]


def check_anchors(conn, ledger: Ledger, report) -> None:
    """`verify`'s check: every anchor problem is a violation of its kind."""
    problems = anchor_problems(conn, ledger)
    report.checked["chain_anchors"] += len(read_anchors(ledger))
    for p in problems:
        report.add(p.kind, None, p.detail, **p.evidence)
