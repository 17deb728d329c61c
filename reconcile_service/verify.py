"""The invariant checker (issue 8): judges a ledger run by reading Redis and the database
of record, and reports every violation with its evidence. Reusable from tests and from
`cashierctl verify`; it lives here because it reads the database (core never imports it).

For every account it checks: opening + credits + refunds + compensations - deductions
- captures (restores 0) == the Redis balance == the database balance (its `accounts`
row) == the sum of its ledger entries (+ recorded duplicates, the
identity of `reconcile_service.models`); each
kind's amount has its kind's sign; every journal entry still in Redis is in the database
exactly once (or recorded as a duplicate or quarantined) and every duplicate was
reversed, every compensating credit paired with the duplicate it reverses; no sale is refunded beyond what it took, in all or per bucket (refund_limits); no balance is negative, in Redis or in the database; no hold is resolved twice
(captured and voided, ...) in the database, nor resolved differently from its Redis
record where that still exists; every offline debt is in the book and equals Redis's
(check_offline_debts). It drains the journal first (or, with drain=False,
compares only accounts whose entries are all applied, like the reconcile pass).
"""
from __future__ import annotations

import os
import socket
from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from core import Ledger
from core.keys import CONSUMER_GROUP
from core.kinds import HOLD_RESOLUTIONS, MONEY_MOVING_KINDS, TABLE as KIND_TABLE

from .anchors import check_anchors
from .audit import check_audit
from .chain import verify_chain
from .journal import Consumer, Journal
from .members import verify_members
from .metrics import Metrics
from .applied_proof import FORGED_ENTRY
from .models import (Account, Discrepancy, DuplicateEntry, Hold, LedgerEntry, OfflineDebt, QuarantinedEntry,
                     journal_pos)
from .refund_limits import KIND as REFUND_OVERRUN, refund_overruns
from .sale_tenders import check_sales
from .store import account_balance_at

# The sign each journaled kind's amount must have (core.kinds' `amount_sign`): "+"
# positive, "-" negative, "0" zero, "-0" never positive (a close only pays out), "+-" either.
KIND_SIGN = {k.name: k.amount_sign for k in KIND_TABLE if k.amount_sign}
# opening + credits + refunds + compensations - deductions - captures - closes (restores
# 0): every kind that moves money by the direction of its sign, an opening balance
# (the one kind of either sign) as it is
FORMULA_IN_KINDS = tuple(k for k in MONEY_MOVING_KINDS if KIND_SIGN.get(k) in ("+", "+0", "0"))
FORMULA_OUT_KINDS = tuple(k for k in MONEY_MOVING_KINDS if KIND_SIGN.get(k) in ("-", "-0"))
FORMULA_AS_IS_KINDS = tuple(k for k, sign in KIND_SIGN.items() if sign == "+-")
HOLD_RESOLVING_KINDS = tuple(HOLD_RESOLUTIONS)
HOLD_RESOLVED = tuple(HOLD_RESOLUTIONS.values())
# The journal is read in pages: one XRANGE of the whole stream (it held 1.48M entries in
# the soak) blocked Redis for ~780 ms with a 116 MB reply and pushed its memory past
# maxmemory. A page of this many costs Redis about 5 ms; every entry is still read.
STREAM_PAGE_ENTRIES = 10_000


def stream_pages(client, stream: str, page_entries: int | None = None):
    """Every entry of `stream`, oldest first, read one bounded XRANGE page at a time (an
    entry trimmed between pages was booked already: trimming keeps what is not)."""
    page_entries = page_entries or STREAM_PAGE_ENTRIES
    start = "-"
    while True:
        page = client.xrange(stream, start, "+", count=page_entries)
        yield from page
        if len(page) < page_entries:
            return
        start = "(" + (page[-1][0] if isinstance(page[-1][0], str) else page[-1][0].decode())


@dataclass
class Violation:
    kind: str
    account_id: str | None
    detail: str
    evidence: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"kind": self.kind, "account_id": self.account_id, "detail": self.detail,
                "evidence": self.evidence}


@dataclass
class VerifyReport:
    checked: dict = field(default_factory=lambda: defaultdict(int))
    violations: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    def add(self, kind: str, account_id: str | None, detail: str, **evidence) -> None:
        self.violations.append(Violation(kind, account_id, detail, evidence))

    def as_dict(self) -> dict:
        return {"ok": self.ok, "checked": dict(self.checked),
                "violations": [v.as_dict() for v in self.violations]}


def drain(ledger: Ledger, engine: Engine) -> int:
    """Apply everything journaled so far (as a consumer of the group), then leave the group."""
    name = f"verify-{socket.gethostname()}-{os.getpid()}"
    consumer = Consumer(ledger, engine, name, batch_size=500, claim_idle_ms=30_000, metrics=Metrics())
    applied = consumer.drain(wait_for_pending=True)
    for part in ledger.partitions:
        mine = [c for c in ledger.client.xinfo_consumers(part.journal, CONSUMER_GROUP) if c["name"] == name]
        if mine and mine[0]["pending"] == 0:
            ledger.client.xgroup_delconsumer(part.journal, CONSUMER_GROUP, name)
    return applied


def verify(ledger: Ledger, engine: Engine, *, drain_first: bool = True) -> VerifyReport:
    report = VerifyReport()
    if drain_first:
        report.checked["entries_drained"] = drain(ledger, engine)
    journal = Journal(ledger)
    ids = [a for p in ledger.partitions for a in ledger.account_ids(p)]
    live = ledger.accounts(ids)
    states = {p.index: journal.state(p) for p in ledger.partitions}
    with engine.connect() as conn:
        accounts = {r.account_id: r for r in conn.execute(select(Account)).all()}
        by_account: dict[str, int] = defaultdict(int)
        formula: dict[str, int] = defaultdict(int)
        for table in (LedgerEntry, DuplicateEntry):
            for acct, kind, total, low, high, n in conn.execute(select(
                    table.account_id, table.kind, func.sum(table.amount_minor),
                    func.min(table.amount_minor), func.max(table.amount_minor), func.count())
                    .group_by(table.account_id, table.kind)):
                total = int(total)
                report.checked["entries" if table is LedgerEntry else "duplicates"] += int(n)
                by_account[acct] += total
                sign = KIND_SIGN.get(kind)
                if sign is None:
                    report.add("unknown_kind", acct, f"{n} entries of unknown kind {kind!r} on {acct}", total=total)
                elif ((sign == "+" and low <= 0) or (sign == "-" and high >= 0)
                      or (sign == "0" and (low, high) != (0, 0)) or (sign == "-0" and high > 0)
                      or (sign == "+0" and low < 0)):
                    report.add("wrong_sign", acct, f"{kind} entries of {acct} with amounts {low}..{high}",
                               kind=kind, low=int(low), high=int(high))
                if kind in FORMULA_AS_IS_KINDS:
                    formula[acct] += total
                elif kind in FORMULA_IN_KINDS:
                    formula[acct] += abs(total)
                elif kind in FORMULA_OUT_KINDS:
                    formula[acct] -= abs(total)
        check_compensations(conn, report)
        check_sales(conn, report)
        open_dups = conn.execute(select(DuplicateEntry).where(DuplicateEntry.status.in_(("open", "reported")))).all()
        positions = {(r[0], r[1]) for t in (LedgerEntry, DuplicateEntry, QuarantinedEntry)
                     for r in conn.execute(select(t.journal_partition, t.journal_id))}
        twice = conn.execute(select(LedgerEntry.original_txn_id, func.count(), func.min(LedgerEntry.kind),
                                    func.max(LedgerEntry.kind)).where(
            LedgerEntry.kind.in_(HOLD_RESOLVING_KINDS)).group_by(LedgerEntry.original_txn_id)
            .having(func.count() > 1)).all()
        holds = conn.execute(select(Hold)).all()
        check_chain(conn, report)
        check_audit(conn, report)
        check_anchors(conn, ledger, report)
        for o in refund_overruns(conn):
            report.add(REFUND_OVERRUN, o.account_id, f"sale {o.sale_txn_id} {o.cause}", **o.evidence)
        in_flight = set()
        for account_id, info in live.items():
            if info is None:
                continue
            report.checked["redis_accounts"] += 1
            part = ledger.schema.partition_of(account_id).index
            lj = info.last_journal_id or "0-0"
            if info.balance_minor < 0:
                report.add("negative_balance", account_id, f"Redis balance {info.balance_minor}")
            if not states[part].applied_through(lj):
                in_flight.add(account_id)
                continue
            row = accounts.get(account_id)
            if row is None:
                report.add("missing_in_db", account_id, "Redis has it, the database has no row for it",
                           redis_balance_minor=info.balance_minor)
                continue
            db_bal = row.balance_minor if row.last_journal_pos == journal_pos(lj) else \
                account_balance_at(conn, account_id, journal_pos(lj))
            if db_bal != info.balance_minor:
                report.add("balance_mismatch", account_id,
                           f"Redis {info.balance_minor} != database {db_bal} at journal position {lj}",
                           redis_balance_minor=info.balance_minor, db_balance_minor=db_bal, journal_id=lj)
    report.checked["in_flight_skipped"] = len(in_flight)
    for account_id, row in accounts.items():
        report.checked["accounts"] += 1
        if row.balance_minor < 0:
            report.add("negative_balance", account_id, f"database balance {row.balance_minor}")
        if not (row.balance_minor == by_account.get(account_id, 0) == formula.get(account_id, 0)):
            report.add("identity", account_id, f"accounts {row.balance_minor}, sum of entries "
                       f"{by_account.get(account_id, 0)}, opening + credits + refunds + compensations "
                       f"- deductions - captures {formula.get(account_id, 0)} differ",
                       db_balance_minor=row.balance_minor)
        if live.get(account_id) is None:
            report.add("missing_in_redis", account_id, "the database has it, Redis does not",
                       db_balance_minor=row.balance_minor)
            continue
        if account_id in in_flight:
            continue
        redis_balance = ledger.balance(account_id)
        if redis_balance != row.balance_minor:
            report.add("balance_mismatch", account_id, f"Redis balance {redis_balance} != database "
                       f"balance {row.balance_minor}", redis_balance_minor=redis_balance,
                       db_balance_minor=row.balance_minor)
    for dup in open_dups:
        # "reported" covers more than a double application (a credit applied twice, or an
        # entry Redis lost): its discrepancy holds the evidence, so say only what is certain
        what = ("is in the book twice and not reversed yet: the next reconcile pass repairs or reports it"
                if dup.status == "open" else
                "is in the book twice and waits for a person: its duplicate_txn discrepancy says why "
                "(a credit applied twice, or a first entry Redis lost) and what to correct")
        report.add("duplicate_not_reversed", dup.account_id, f"txn {dup.txn_id} ({dup.kind} "
                   f"{dup.amount_minor:+d}) {what} (status {dup.status})",
                   txn_id=dup.txn_id, journal_id=dup.journal_id)
    stream_entries = 0
    for part in ledger.partitions:
        for entry_id, _fields in stream_pages(ledger.client, part.journal):
            stream_entries += 1
            if (part.index, entry_id) not in positions and states[part.index].applied_through(entry_id):
                report.add("entry_missing_in_db", None, f"journal entry {part.index}/{entry_id} is "
                           "acknowledged but not in the database", fields=_fields)
    report.checked["stream_entries"] = stream_entries
    for hold_id, n, first, last in twice:
        report.add("hold_resolved_twice", None, f"hold {hold_id} resolved {n} times ({first} .. {last})",
                   hold_txn_id=hold_id)
    pipe = ledger.client.pipeline(transaction=False)
    for h in holds:
        pipe.hget(ledger.schema.partition_of(h.account_id).txn(h.hold_txn_id), "hs")
    redis_states = pipe.execute() if holds else []
    for h, hs in zip(holds, redis_states):
        report.checked["holds"] += 1
        if h.amount_minor is not None and h.captured_minor > h.amount_minor:
            report.add("capture_exceeds_hold", h.account_id, f"hold {h.hold_txn_id}: captured "
                       f"{h.captured_minor} of {h.amount_minor}")
        if hs in HOLD_RESOLVED and h.status in HOLD_RESOLVED and hs != h.status:
            report.add("hold_resolved_twice", h.account_id, f"hold {h.hold_txn_id} is {h.status} in the "
                       f"database but {hs} in Redis", hold_txn_id=h.hold_txn_id)
    check_offline_debts(ledger, engine, ids, in_flight, report)
    verify_members(ledger, engine, report)
    return report


def check_offline_debts(ledger: Ledger, engine: Engine, ids: list[str], in_flight: set[str],
                        report: VerifyReport) -> None:
    """Offline debts (issue 27): every offline_debt entry and every top-up that paid a debt
    has its offline_debts row; no account's debt (the sum of its rows) is negative; and it
    equals Redis's `dt` of the account (accounts in flight are left to the next run)."""
    with engine.connect() as conn:
        book = {a: int(d) for a, d in conn.execute(select(OfflineDebt.account_id,
                                                         func.sum(OfflineDebt.debt_delta_minor))
                                                  .group_by(OfflineDebt.account_id))}
        missing = conn.execute(select(LedgerEntry.txn_id, LedgerEntry.account_id).where(
            LedgerEntry.kind == "offline_debt",
            LedgerEntry.txn_id.not_in(select(OfflineDebt.txn_id)))).all()
    for txn_id, account_id in missing:
        report.add("debt_missing_in_db", account_id, f"offline debt {txn_id} is in the book's entries but "
                   "not in offline_debts", txn_id=txn_id)
    pipe = ledger.client.pipeline(transaction=False)
    for account_id in ids:
        pipe.hget(ledger.schema.partition_of(account_id).account(account_id), "dt")
    live = {a: int(d) for a, d in zip(ids, pipe.execute() if ids else []) if d}
    for account_id in sorted(set(book) | set(live)):
        report.checked["offline_debts"] += 1
        if book.get(account_id, 0) < 0:
            report.add("negative_debt", account_id, f"database offline debt {book[account_id]}")
        if account_id in in_flight:
            continue
        if book.get(account_id, 0) != live.get(account_id, 0):
            report.add("debt_mismatch", account_id, f"Redis offline debt {live.get(account_id, 0)} != "
                       f"database {book.get(account_id, 0)}", redis_debt_minor=live.get(account_id, 0),
                       db_debt_minor=book.get(account_id, 0))


def check_compensations(conn, report: VerifyReport) -> None:
    """Every compensating credit in the book is paired with its evidence: a duplicate that
    the reconcile pass proved applied in Redis (duplicate_entries, status compensated,
    naming this credit, same account, the opposite amount). A compensation without one
    moved money for nothing that happened (an internal kind called by hand, or a
    reversal of a forged entry); a forged entry still open is reported too."""
    dups = {d.compensation_txn_id: d for d in conn.execute(select(DuplicateEntry).where(
        DuplicateEntry.status == "compensated", DuplicateEntry.compensation_txn_id.is_not(None))).all()}
    for c in conn.execute(select(LedgerEntry).where(LedgerEntry.kind == "compensate")).all():
        report.checked["compensations"] += 1
        d = dups.get(c.txn_id)
        if d is None or (d.account_id, -d.amount_minor, d.txn_id) != (c.account_id, c.amount_minor,
                                                                        c.original_txn_id):
            report.add("unpaired_compensation", c.account_id,
                       f"compensating credit {c.txn_id} ({c.amount_minor:+d} for txn {c.original_txn_id}) "
                       "has no applied duplicate that it reverses", txn_id=c.txn_id, amount_minor=c.amount_minor,
                       original_txn_id=c.original_txn_id, journal_partition=c.journal_partition,
                       journal_id=c.journal_id,
                       duplicate=None if d is None else {"txn_id": d.txn_id, "account_id": d.account_id,
                                                         "amount_minor": d.amount_minor,
                                                         "journal_id": d.journal_id})
    for f in conn.execute(select(Discrepancy).where(Discrepancy.kind == FORGED_ENTRY,
                                                    Discrepancy.status == "open")).all():
        report.add(FORGED_ENTRY, f.account_id, f.cause, txn_id=f.txn_id, journal_partition=f.journal_partition,
                   journal_id=f.journal_id, evidence_json=f.evidence_json)


def check_chain(conn, report: VerifyReport) -> None:
    """The book's hash chain (reconcile_service.chain): every partition recomputed from
    its first row; the first broken row of each partition is a `chain_broken` violation."""
    chain = verify_chain(conn)
    report.checked["chained_entries"] = chain.rows_checked
    for b in chain.breaks:
        report.add("chain_broken", None, b.reason, **b.as_dict())
