"""Whether Redis really applied a duplicate journal entry, before any money is moved for it
(issue 25 item 5).

A duplicate (a txn id already booked at another journal position) is reversed by a
compensating credit only if it changed a Redis balance. A script that applies a txn
writes its record ('t:<txn>', field j = the journal id of that application) in the same
atomic step, so the record is the proof: j equal to the duplicate's journal id means the
duplicate was applied (its record had expired, the late retry applied again, or a txn id
was reused in another partition). A record still naming the first, booked entry means
the duplicate was never applied: someone wrote a copy into the stream (XADD), and a
credit for it would create money. With no record (expired since) or one naming a later
application, the book's balance chain decides: the account's entry before the duplicate
plus the duplicate's amount must give the balance the duplicate says it left; a copy of
an older entry carries that entry's balance, not one that follows its predecessor.

Anything not proven applied is a `forged_entry`: reported with this evidence, no money moved.

One applied duplicate is not a second application: when Redis no longer holds the *first*
entry although its stream still holds entries older than it (so it was not trimmed),
Redis lost that first application (a failover to a replica that never received it, or
the entry deleted), and the duplicate is the only time this Redis applied the txn. A
compensating credit would then refund a charge made once: `FIRST_ENTRY_LOST`, which the
pass reports with the evidence (`first_entry`) for a person to correct the book.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.engine import Connection

from core import Ledger
from core.kinds import BOOK_ONLY_KINDS

from .members import NON_BALANCE_KINDS
from .models import DuplicateEntry, LedgerEntry, journal_pos

FIRST_ENTRY_LOST = "first_entry_lost_in_redis"   # Proof.how: applied, but not a second time
FORGED_ENTRY = "forged_entry"
FORGED_STATUS = "forged"          # duplicate_entries.status of a copy Redis never applied
_NO_BALANCE = (*NON_BALANCE_KINDS, *BOOK_ONLY_KINDS)


@dataclass
class Proof:
    applied: bool
    how: str                      # txn_record | balance_chain | what refuted it
    evidence: dict = field(default_factory=dict)


def applied_proof(ledger: Ledger, conn: Connection, dup) -> Proof:
    """Whether the duplicate `dup` (a duplicate_entries row) was applied by Redis, and why."""
    evidence: dict = {"duplicate": {"txn_id": dup.txn_id, "account_id": dup.account_id, "kind": dup.kind,
                                    "amount_minor": dup.amount_minor, "balance_after_minor": dup.balance_after_minor,
                                    "journal_partition": dup.journal_partition, "journal_id": dup.journal_id,
                                    "first_journal_partition": dup.first_journal_partition,
                                    "first_journal_id": dup.first_journal_id}}
    if not 0 <= dup.journal_partition < len(ledger.partitions):
        return Proof(False, "no such partition", evidence)
    part = ledger.partitions[dup.journal_partition]
    fingerprint, stored, journal_id = ledger.client.hmget(part.txn(dup.txn_id), "f", "s", "j")
    evidence["txn_record"] = None if fingerprint is None else {
        "key": part.txn(dup.txn_id), "f": fingerprint, "s": stored, "j": journal_id}
    if journal_id == dup.journal_id:
        lost = first_entry_lost(ledger, dup)
        if lost is not None:
            evidence["first_entry"] = lost
            return Proof(True, FIRST_ENTRY_LOST, evidence)
        return Proof(True, "txn_record", evidence)
    if journal_id is not None and (dup.first_journal_partition, dup.first_journal_id) == (
            dup.journal_partition, journal_id):
        return Proof(False, "the txn record names the first entry, not this one", evidence)
    prev = _previous_balance(conn, dup)
    evidence["balance_chain"] = prev
    if prev is not None and prev["balance_after_minor"] + dup.amount_minor == dup.balance_after_minor:
        return Proof(True, "balance_chain", evidence)
    return Proof(False, "neither the txn record nor the balance chain shows it applied", evidence)


def first_entry_lost(ledger: Ledger, dup) -> dict | None:
    """Evidence that Redis lost the duplicate's first entry (None: it holds it, or cannot
    tell): its stream no longer has it although it still has an older entry, so the
    entry was not trimmed away (XTRIM removes the oldest entries only)."""
    if not 0 <= dup.first_journal_partition < len(ledger.partitions):
        return None
    stream = ledger.partitions[dup.first_journal_partition].journal
    oldest = ledger.client.xrange(stream, "-", "+", count=1)
    if not oldest or journal_pos(oldest[0][0]) >= journal_pos(dup.first_journal_id):
        return None
    if ledger.client.xrange(stream, dup.first_journal_id, dup.first_journal_id):
        return None
    return {"stream": stream, "first_journal_id": dup.first_journal_id, "held": False,
            "oldest_entry_held": oldest[0][0]}


def _previous_balance(conn: Connection, dup) -> dict | None:
    """The account's last balance-carrying row in the book before the duplicate's position."""
    parts = []
    for table, extra in ((LedgerEntry, ()), (DuplicateEntry, (DuplicateEntry.status != FORGED_STATUS,))):
        parts.append(select(table.txn_id, table.kind, table.journal_id, table.journal_pos,
                            table.balance_after_minor).where(
            table.account_id == dup.account_id, table.journal_partition == dup.journal_partition,
            table.journal_pos < dup.journal_pos, table.kind.not_in(_NO_BALANCE), *extra)
            .order_by(table.journal_pos.desc()).limit(1))
    rows = [conn.execute(q).first() for q in parts]
    rows = [r for r in rows if r is not None]
    if not rows:
        return None
    r = max(rows, key=lambda r: r.journal_pos)
    return {"txn_id": r.txn_id, "kind": r.kind, "journal_id": r.journal_id,
            "balance_after_minor": int(r.balance_after_minor)}
