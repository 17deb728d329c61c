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
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.engine import Connection

from core import Ledger
from core.kinds import BOOK_ONLY_KINDS

from .members import NON_BALANCE_KINDS
from .models import DuplicateEntry, LedgerEntry

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
        return Proof(True, "txn_record", evidence)
    if journal_id is not None and (dup.first_journal_partition, dup.first_journal_id) == (
            dup.journal_partition, journal_id):
        return Proof(False, "the txn record names the first entry, not this one", evidence)
    prev = _previous_balance(conn, dup)
    evidence["balance_chain"] = prev
    if prev is not None and prev["balance_after_minor"] + dup.amount_minor == dup.balance_after_minor:
        return Proof(True, "balance_chain", evidence)
    return Proof(False, "neither the txn record nor the balance chain shows it applied", evidence)


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
