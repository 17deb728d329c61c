"""Reconciliation passes: prove that Redis and the database agree, repair what is proven wrong.

A pass (1) reverses every recorded duplicate deduction with a journaled, idempotent
compensating credit (`Ledger.compensate`, txn id derived from the duplicate's journal
position, so a crash or a second instance never compensates twice; one whose first entry
Redis lost, so that Redis applied the txn once, is reported with that proof instead:
`applied_proof.FIRST_ENTRY_LOST`); a repair that fails
is recorded as an open `repair_failed` discrepancy with its evidence, counted in the
metrics, retried by the next pass, and never stops the pass: (2) compares every
Redis account with the database *as of the account's last journal id*: only when the
consumer group has durably applied everything up to that id (else the account is
"in flight" and skipped, never a false alarm), and (3) reports accounts the database
knows that Redis lost, and (4) compares the rest at the same journal position
(`compare`: buckets, cards, settings and promotions, bonus credits, cashier records,
TTLs on ledger keys, the chain's anchors). Every pass and every discrepancy is recorded with its cause and
evidence; nothing is ever overwritten.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.engine import Engine

from redis.exceptions import RedisError

from core import Ledger, LedgerError, Status
from core.validation import internal_txn_id
from core.keys import Partition

from . import compare, refund_limits
from .applied_proof import FIRST_ENTRY_LOST, FORGED_ENTRY, FORGED_STATUS, applied_proof
from .journal import Journal
from .metrics import Metrics
from .dialect import utcnow
from .models import Account, Discrepancy, DuplicateEntry, LedgerEntry, ReconcilePass, journal_pos
from .store import account_balance_at

log = logging.getLogger(__name__)

PAGE_SIZE = 500
COMPARED_KINDS = ("balance_mismatch", "status_mismatch", "missing_in_redis", "missing_in_db",
                  refund_limits.KIND) + compare.KINDS
REPAIR_FAILED = "repair_failed"     # a compensation that could not be made (one row per duplicate)


def compensation_txn_id(journal_partition: int, journal_id: str) -> str:
    """Deterministic: the same duplicate always gets the same compensating txn id, in the
    reserved namespace ('@cmp:<partition>:<journal id>') that no client id can enter."""
    return internal_txn_id("cmp", journal_partition, journal_id)


def legacy_compensation_txn_id(journal_partition: int, journal_id: str) -> str:
    """The form used before the reserved namespace: a compensation made under it must
    not be made again under the new id."""
    return f"cmp:{journal_partition}:{journal_id}"


@dataclass
class Finding:
    kind: str
    account_id: str
    cause: str
    redis_balance_minor: int | None = None
    db_balance_minor: int | None = None
    journal_partition: int | None = None
    journal_id: str | None = None
    evidence: dict = field(default_factory=dict)
    subject: str | None = None      # what the finding is about when not one account (compare.py)

    @property
    def key(self) -> tuple[str, str | None]:
        """One open discrepancy per kind and subject."""
        return self.kind, self.subject or self.account_id


@dataclass
class PassReport:
    pass_id: int
    accounts_checked: int = 0
    accounts_in_flight: int = 0
    findings: list[Finding] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)     # compensating txn ids applied
    repairs_failed: list[str] = field(default_factory=list)   # duplicate txn ids whose repair failed
    forged: list[str] = field(default_factory=list)   # txn ids of duplicates Redis never applied
    open_discrepancies: int = 0

    @property
    def clean(self) -> bool:
        return self.open_discrepancies == 0

    def as_dict(self) -> dict:
        return {"pass_id": self.pass_id, "accounts_checked": self.accounts_checked,
                "accounts_in_flight": self.accounts_in_flight,
                "discrepancies_found": len(self.findings), "repairs_made": len(self.repairs),
                "repairs_failed": len(self.repairs_failed), "forged_entries": len(self.forged),
                "open_discrepancies": self.open_discrepancies,
                "findings": [{"kind": f.kind, "account_id": f.account_id, "cause": f.cause,
                              "redis_balance_minor": f.redis_balance_minor,
                              "db_balance_minor": f.db_balance_minor} for f in self.findings]}


class Reconciler:
    def __init__(self, ledger: Ledger, engine: Engine, metrics: Metrics, consumer_name: str):
        self.ledger, self.engine, self.metrics = ledger, engine, metrics
        self.journal = Journal(ledger)
        self.consumer_name = consumer_name

    # ------------------------------------------------------------ the pass

    def run_pass(self, progress=None) -> PassReport:
        with self.engine.begin() as conn:
            pass_id = conn.execute(ReconcilePass.__table__.insert().values(
                started_at=utcnow(), outcome="running", accounts_checked=0, accounts_in_flight=0,
                discrepancies_found=0, repairs_made=0, consumer=self.consumer_name)
                .returning(ReconcilePass.id)).scalar_one()
        report = PassReport(pass_id)
        try:
            report.repairs = self.repair_duplicates(pass_id, failures=report.repairs_failed, forged=report.forged)
            in_flight: set[str] = set()
            for part in self.ledger.partitions:
                self._compare_partition(part, report, in_flight, progress)
            self._find_lost_in_redis(report)
            compare.Comparer(self.ledger, self.engine, report, in_flight).run()
            self._check_refund_limits(report)
            self._record(report, in_flight)
        except BaseException as exc:
            with self.engine.begin() as conn:
                conn.execute(update(ReconcilePass).where(ReconcilePass.id == pass_id).values(
                    finished_at=utcnow(), outcome="failed", detail=f"{type(exc).__name__}: {exc}"[:2000]))
            raise
        return report

    def _compare_partition(self, part: Partition, report: PassReport, in_flight: set[str], progress) -> None:
        page: list[str] = []
        for account_id in self.ledger.account_ids(part, page_size=PAGE_SIZE):
            page.append(account_id)
            if len(page) >= PAGE_SIZE:
                self._compare_page(part, page, report, in_flight)
                page = []
                if progress:
                    progress(report.accounts_checked + report.accounts_in_flight)
        if page:
            self._compare_page(part, page, report, in_flight)
            if progress:
                progress(report.accounts_checked + report.accounts_in_flight)

    def _compare_page(self, part: Partition, ids: list[str], report: PassReport, in_flight: set[str]) -> None:
        # Order matters: Redis balances first, then the group's state. If the state read
        # afterwards says an account's last entry is applied, the database has it.
        redis_accounts = self.ledger.accounts(ids)
        state = self.journal.state(part)
        with self.engine.connect() as conn:
            # every Redis account against its row in accounts (kept by the consumer with
            # the entry positions of the account's partition)
            rows = {r.account_id: r for r in conn.execute(select(
                Account.account_id, Account.balance_minor, Account.status,
                Account.last_journal_id, Account.last_journal_pos).where(Account.account_id.in_(ids)))}
            for account_id, info in redis_accounts.items():
                if info is None:
                    continue  # vanished since SSCAN; the database-side scan reports it
                lj = info.last_journal_id or "0-0"
                if not state.applied_through(lj):
                    report.accounts_in_flight += 1
                    in_flight.add(account_id)
                    continue
                report.accounts_checked += 1
                row = rows.get(account_id)
                evidence = {"redis": {"balance_minor": info.balance_minor, "status": info.status,
                                      "last_journal_id": info.last_journal_id},
                            "group": {"last_delivered_id": state.last_delivered_id,
                                      "pending": state.pending, "min_pending_id": state.min_pending_id}}
                if row is None:
                    report.findings.append(Finding(
                        "missing_in_db", account_id, "Redis has the account but the database never "
                        "received an entry for it although the journal is applied up to its last entry",
                        info.balance_minor, None, part.index, info.last_journal_id, evidence))
                    continue
                evidence["database"] = {"balance_minor": row.balance_minor, "status": row.status,
                                        "last_journal_id": row.last_journal_id}
                pos = journal_pos(lj)
                if row.last_journal_pos == pos:
                    db_balance, compare_status = row.balance_minor, True
                elif row.last_journal_pos > pos:
                    # The database already has newer entries: sum up to the same position.
                    db_balance, compare_status = account_balance_at(conn, account_id, pos), False
                    evidence["database"]["balance_at_redis_position_minor"] = db_balance
                else:
                    report.findings.append(Finding(
                        "balance_mismatch", account_id,
                        f"the database's last entry for the account is {row.last_journal_id} but Redis "
                        f"is at {info.last_journal_id}, which the group has acknowledged: an entry was "
                        "lost or quarantined", info.balance_minor, row.balance_minor, part.index,
                        info.last_journal_id, evidence))
                    continue
                if db_balance != info.balance_minor:
                    report.findings.append(Finding(
                        "balance_mismatch", account_id,
                        f"Redis balance {info.balance_minor} != database balance {db_balance} at journal "
                        f"position {info.last_journal_id} (difference {info.balance_minor - db_balance:+d})",
                        info.balance_minor, db_balance, part.index, info.last_journal_id, evidence))
                elif compare_status and row.status != info.status:
                    report.findings.append(Finding(
                        "status_mismatch", account_id,
                        f"Redis status {info.status!r} != database status {row.status!r}",
                        info.balance_minor, db_balance, part.index, info.last_journal_id, evidence))
            compare.Comparer(self.ledger, self.engine, report, in_flight).compare_buckets(
                conn, part, redis_accounts, state)

    def _find_lost_in_redis(self, report: PassReport) -> None:
        after = ""
        while True:
            with self.engine.connect() as conn:
                rows = conn.execute(select(Account.account_id, Account.balance_minor, Account.status,
                                           Account.last_journal_id)
                                    .where(Account.account_id > after)
                                    .order_by(Account.account_id).limit(PAGE_SIZE)).all()
            if not rows:
                return
            after = rows[-1].account_id
            present = self.ledger.accounts([r.account_id for r in rows])
            for r in rows:
                if present[r.account_id] is None:
                    report.findings.append(Finding(
                        "missing_in_redis", r.account_id,
                        "the database has the account but Redis does not: Redis lost data; "
                        "run `reconcile-service restore`", None, r.balance_minor,
                        evidence={"database": {"balance_minor": r.balance_minor, "status": r.status,
                                               "last_journal_id": r.last_journal_id}}))

    def _check_refund_limits(self, report: PassReport) -> None:
        """Σ refunds per sale <= the sale, bucket by bucket, in the book (refund_limits)."""
        with self.engine.connect() as conn:
            overruns = refund_limits.refund_overruns(conn)
        for account_id, sales in refund_limits.by_account(overruns).items():
            report.findings.append(Finding(
                refund_limits.KIND, account_id,
                "; ".join(f"sale {o.sale_txn_id} {o.cause}" for o in sales)[:2000],
                evidence={"sales": [o.evidence for o in sales]}))

    def _record(self, report: PassReport, in_flight: set[str]) -> None:
        now = utcnow()
        found_keys = {f.key for f in report.findings}
        with self.engine.begin() as conn:
            open_rows = {(r.kind, _subject(r)): r.id for r in conn.execute(
                select(Discrepancy.id, Discrepancy.kind, Discrepancy.account_id, Discrepancy.evidence_json).where(
                    Discrepancy.status == "open", Discrepancy.kind.in_(COMPARED_KINDS)))}
            for f in report.findings:
                values = dict(cause=f.cause, evidence_json=json.dumps(f.evidence, sort_keys=True, default=str),
                              redis_balance_minor=f.redis_balance_minor, db_balance_minor=f.db_balance_minor,
                              journal_partition=f.journal_partition, journal_id=f.journal_id,
                              last_pass_id=report.pass_id)
                existing = open_rows.get(f.key)
                if existing is not None:   # still there: one row per problem, not one per pass
                    conn.execute(update(Discrepancy).where(Discrepancy.id == existing).values(**values))
                else:
                    conn.execute(Discrepancy.__table__.insert().values(
                        kind=f.kind, account_id=f.account_id, status="open", first_pass_id=report.pass_id,
                        found_at=now, **values))
                    self.metrics.discrepancies_found.labels(f.kind).inc()
                log.error("discrepancy", extra={"kind": f.kind, "account_id": f.account_id, "cause": f.cause,
                                                "redis_balance_minor": f.redis_balance_minor,
                                                "db_balance_minor": f.db_balance_minor})
            # Open comparison findings no longer observed (and not merely in flight) are cleared.
            for (kind, subject), row_id in open_rows.items():
                if (kind, subject) not in found_keys and subject not in in_flight \
                        and compare.unjudged(kind) not in in_flight:
                    conn.execute(update(Discrepancy).where(Discrepancy.id == row_id).values(
                        status="cleared", resolved_at=now, last_pass_id=report.pass_id))
            report.open_discrepancies = conn.execute(
                select(Discrepancy.id).where(Discrepancy.status == "open")).all().__len__()
            outcome = "clean" if report.open_discrepancies == 0 else "discrepancies"
            conn.execute(update(ReconcilePass).where(ReconcilePass.id == report.pass_id).values(
                finished_at=utcnow(), outcome=outcome, accounts_checked=report.accounts_checked,
                accounts_in_flight=report.accounts_in_flight, discrepancies_found=len(report.findings),
                repairs_made=len(report.repairs)))
        self.metrics.discrepancies_open.set(report.open_discrepancies)
        self.metrics.last_pass.set(utcnow().timestamp())
        self.metrics.last_pass_outcome_ok.set(1 if report.clean else 0)
        log.info("reconciliation pass finished", extra={
            "pass_id": report.pass_id, "accounts_checked": report.accounts_checked,
            "accounts_in_flight": report.accounts_in_flight, "discrepancies_found": len(report.findings),
            "repairs_made": len(report.repairs), "open_discrepancies": report.open_discrepancies})

    # ------------------------------------------------------------ duplicates

    def repair_duplicates(self, pass_id: int | None = None, failures: list[str] | None = None,
                          forged: list[str] | None = None) -> list[str]:
        """Reverse every open duplicate deduction; report duplicated credits. Idempotent.

        Only a duplicate that Redis is proven to have applied (`applied_proof`: its txn
        record names it, or the book's balance chain shows it) is acted on; any other is a
        copy written into the journal, reported as an open `forged_entry` with its
        evidence, and no money is moved for it.

        A compensation that fails (refused, declined, Redis out of memory or away) is
        recorded as an open `repair_failed` discrepancy and the next duplicate is tried:
        one entry that cannot be repaired must never blind the rest of the pass.
        Refused or unanswered repairs stay open and are tried again by the next pass."""
        with self.engine.connect() as conn:
            dups = conn.execute(select(DuplicateEntry).where(DuplicateEntry.status == "open")
                                .order_by(DuplicateEntry.id)).all()
        repaired = []
        for dup in dups:
            try:
                with self.engine.connect() as conn:
                    proof = applied_proof(self.ledger, conn, dup)
            except RedisError as exc:
                self._repair_failed(dup, pass_id, f"{type(exc).__name__}: {exc}", retried=True)
                if failures is not None:
                    failures.append(dup.txn_id)
                continue
            if proof.how == FIRST_ENTRY_LOST:
                # Redis applied the txn once (this entry) and lost the first: no refund
                self._resolve(dup, "reported", None,
                              f"txn {dup.txn_id} ({dup.kind} {dup.amount_minor:+d} on {dup.account_id}) is in the "
                              f"book twice but Redis applied it once: it no longer holds the first entry "
                              f"{dup.first_journal_partition}/{dup.first_journal_id} although its stream still "
                              f"holds older entries (lost in a failover, or deleted). Not reversed: the book "
                              "holds an entry Redis lost; correct it by hand", proof)
            elif not proof.applied:
                self._forged(dup, pass_id, proof)
                if forged is not None:
                    forged.append(dup.txn_id)
            elif dup.amount_minor < 0:
                try:
                    txn = self._compensate(dup, pass_id, proof)
                except (LedgerError, RedisError) as exc:
                    txn = None
                    self._repair_failed(dup, pass_id, f"{type(exc).__name__}: {exc}", retried=True)
                if txn:
                    repaired.append(txn)
                elif failures is not None:
                    failures.append(dup.txn_id)
            else:
                self._resolve(dup, "reported", None,
                              f"txn {dup.txn_id} ({dup.kind} {dup.amount_minor:+d}) was applied twice in Redis. "
                              "A duplicated credit is not reversed automatically (that would be a "
                              "deduction the customer may already have spent): decide and correct it by hand")
        return repaired

    def _compensate(self, dup, pass_id: int | None = None, proof=None) -> str | None:
        txn = compensation_txn_id(dup.journal_partition, dup.journal_id)
        legacy = legacy_compensation_txn_id(dup.journal_partition, dup.journal_id)
        with self.engine.connect() as conn:
            already = conn.execute(select(LedgerEntry.txn_id).where(
                (LedgerEntry.txn_id == txn) | ((LedgerEntry.txn_id == legacy) & (LedgerEntry.kind == "compensate")
                                               & (LedgerEntry.original_txn_id == dup.txn_id)))).first()
        if already:
            txn = already.txn_id
        else:
            result = self.ledger.compensate(dup.account_id, -dup.amount_minor, txn_id=txn,
                                            original_txn_id=dup.txn_id)
            if result.status is not Status.APPLIED:
                # a stored decline replays for ever: the duplicate needs a person now
                self._resolve(dup, "reported", None,
                              f"the compensating credit {txn} for duplicate txn {dup.txn_id} was declined "
                              f"({result.status.value}); correct it by hand")
                self._repair_failed(dup, pass_id, f"declined: {result.status.value} (balance "
                                    f"{result.balance_minor})", retried=False)
                return None
            log.warning("duplicate reversed by a compensating credit", extra={
                "txn_id": dup.txn_id, "account_id": dup.account_id, "compensation_txn_id": txn,
                "amount_minor": -dup.amount_minor, "replayed": result.replayed})
        self._resolve(dup, "compensated", txn, None, proof)
        self.metrics.repairs.inc()
        return txn

    def _forged(self, dup, pass_id: int | None, proof) -> None:
        """A duplicate Redis never applied: an open `forged_entry` with the evidence, the
        duplicate marked forged (never compensated), its duplicate_txn row cleared."""
        now = utcnow()
        cause = (f"journal entry {dup.journal_partition}/{dup.journal_id} repeats txn {dup.txn_id} ({dup.kind} "
                 f"{dup.amount_minor:+d} on {dup.account_id}, first at {dup.first_journal_partition}/"
                 f"{dup.first_journal_id}) but Redis never applied it ({proof.how}): written into the journal "
                 "outside the scripts; no money moved for it")
        with self.engine.begin() as conn:
            conn.execute(update(DuplicateEntry).where(DuplicateEntry.id == dup.id, DuplicateEntry.status == "open")
                         .values(status=FORGED_STATUS))
            conn.execute(update(Discrepancy).where(
                Discrepancy.kind == "duplicate_txn", Discrepancy.journal_partition == dup.journal_partition,
                Discrepancy.journal_id == dup.journal_id, Discrepancy.status == "open").values(
                status="cleared", resolved_at=now, last_pass_id=pass_id,
                cause=f"not applied by Redis: see the forged_entry of {dup.journal_partition}/{dup.journal_id}"))
            conn.execute(Discrepancy.__table__.insert().values(
                kind=FORGED_ENTRY, account_id=dup.account_id, txn_id=dup.txn_id,
                journal_partition=dup.journal_partition, journal_id=dup.journal_id, status="open",
                cause=cause, evidence_json=json.dumps(proof.evidence, sort_keys=True, default=str),
                first_pass_id=pass_id, last_pass_id=pass_id, found_at=now))
        self.metrics.discrepancies_found.labels(FORGED_ENTRY).inc()
        log.error("forged journal entry", extra={"txn_id": dup.txn_id, "account_id": dup.account_id,
                                                 "journal_id": dup.journal_id, "proof": proof.how})

    def _repair_failed(self, dup, pass_id: int | None, error: str, *, retried: bool) -> None:
        """Record (or update) the open `repair_failed` discrepancy of this duplicate, with
        the evidence a person needs, and count it in the metrics (the pass then ends as
        'discrepancies', which alerts through reconcile_discrepancies_open / _last_pass_clean)."""
        txn = compensation_txn_id(dup.journal_partition, dup.journal_id)
        now = utcnow()
        cause = (f"the compensating credit {txn} for duplicate txn {dup.txn_id} ({dup.kind} "
                 f"{dup.amount_minor:+d} on {dup.account_id}) failed: {error}"[:1800]
                 + ("; it is tried again by every pass" if retried else "; correct it by hand"))
        evidence = {"duplicate": {"txn_id": dup.txn_id, "account_id": dup.account_id, "kind": dup.kind,
                                  "amount_minor": dup.amount_minor, "journal_partition": dup.journal_partition,
                                  "journal_id": dup.journal_id, "first_journal_id": dup.first_journal_id},
                    "compensation_txn_id": txn, "compensation_amount_minor": -dup.amount_minor,
                    "error": error[:2000], "retried_by_next_pass": retried}
        values = dict(cause=cause, evidence_json=json.dumps(evidence, sort_keys=True), last_pass_id=pass_id,
                      repair_txn_id=txn)
        with self.engine.begin() as conn:
            existing = conn.execute(select(Discrepancy.id).where(
                Discrepancy.kind == REPAIR_FAILED, Discrepancy.status == "open",
                Discrepancy.journal_partition == dup.journal_partition,
                Discrepancy.journal_id == dup.journal_id)).first()
            if existing is not None:        # still failing: one row per problem, not one per pass
                conn.execute(update(Discrepancy).where(Discrepancy.id == existing.id).values(**values))
            else:
                conn.execute(Discrepancy.__table__.insert().values(
                    kind=REPAIR_FAILED, account_id=dup.account_id, txn_id=dup.txn_id,
                    journal_partition=dup.journal_partition, journal_id=dup.journal_id, status="open",
                    first_pass_id=pass_id, found_at=now, **values))
                self.metrics.discrepancies_found.labels(REPAIR_FAILED).inc()
        log.error("repair failed", extra={"txn_id": dup.txn_id, "account_id": dup.account_id,
                                          "compensation_txn_id": txn, "error": error[:300]})

    def _resolve(self, dup, status: str, repair_txn: str | None, cause: str | None, proof=None) -> None:
        now = utcnow()
        with self.engine.begin() as conn:
            conn.execute(update(DuplicateEntry).where(DuplicateEntry.id == dup.id, DuplicateEntry.status == "open")
                         .values(status=status, compensation_txn_id=repair_txn,
                                 resolved_at=now if status == "compensated" else None))
            where = (Discrepancy.kind == "duplicate_txn", Discrepancy.journal_partition == dup.journal_partition,
                     Discrepancy.journal_id == dup.journal_id)
            values: dict = {}
            row = conn.execute(select(Discrepancy.evidence_json).where(*where)).first()
            if proof is not None and row is not None:
                # the evidence of what Redis applied, kept beside the repair or the report
                evidence = json.loads(row.evidence_json or "{}")
                evidence["applied_proof"] = {"how": proof.how, **{k: v for k, v in proof.evidence.items()
                                                                 if k != "duplicate"}}
                values["evidence_json"] = json.dumps(evidence, sort_keys=True, default=str)
            if status == "compensated":
                values.update(status="repaired", repair_txn_id=repair_txn, resolved_at=now)
                conn.execute(update(Discrepancy).where(*where).values(**values))
                # an earlier failed attempt at this very repair is repaired now too
                conn.execute(update(Discrepancy).where(
                    Discrepancy.kind == REPAIR_FAILED, Discrepancy.status == "open",
                    Discrepancy.journal_partition == dup.journal_partition,
                    Discrepancy.journal_id == dup.journal_id).values(
                    status="repaired", repair_txn_id=repair_txn, resolved_at=now))
            elif cause:
                conn.execute(update(Discrepancy).where(*where).values(cause=cause, **values))
        if status == "reported":
            log.error("duplicate txn needs a person", extra={"txn_id": dup.txn_id, "account_id": dup.account_id,
                                                             "amount_minor": dup.amount_minor, "cause": cause})


def _subject(row) -> str | None:
    """The subject of an open discrepancy: compare.py's findings keep it in their evidence."""
    if row.kind in compare.KINDS:
        try:
            return json.loads(row.evidence_json).get("subject") or row.account_id
        except (ValueError, AttributeError):
            return row.account_id
    return row.account_id


def open_discrepancies(engine: Engine, limit: int = 50) -> tuple[int, list[dict]]:
    with engine.connect() as conn:
        rows = conn.execute(select(Discrepancy).where(Discrepancy.status == "open")
                            .order_by(Discrepancy.id)).all()
    out = []
    for d in rows[:limit]:
        out.append({"id": d.id, "kind": d.kind, "account_id": d.account_id, "txn_id": d.txn_id,
                    "redis_balance_minor": d.redis_balance_minor, "db_balance_minor": d.db_balance_minor,
                    "journal_id": d.journal_id, "cause": d.cause,
                    "found_at": d.found_at.isoformat() if isinstance(d.found_at, datetime) else d.found_at})
    return len(rows), out
