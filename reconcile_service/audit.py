"""The audit trail as the book keeps it: `audit_records` (one per back-office management
action, core.audit) beside their chained rows in ledger_entries (kind `audit`).

`audit_trail(...)` lists them for the back office's Audit page (newest first, by user and
dates); `check_audit(conn, report)` is verify's check that every record is the one its
chained row commits to (the txn id is the SHA-256 prefix of the record's text) and that
every chained audit row has its record: an edited, removed or added record is reported.
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import select

from core.audit import AUDIT_KIND, record_digest_ok

from .models import AuditRecord, LedgerEntry

AUDIT_PAGE_ROWS = 500
AUDIT_MISMATCH = "audit_record_mismatch"


def audit_trail(engine, *, username: str | None = None, start: datetime | None = None,
                end: datetime | None = None, limit: int = AUDIT_PAGE_ROWS) -> list:
    stmt = select(AuditRecord).order_by(AuditRecord.occurred_at.desc(), AuditRecord.journal_id.desc())
    if username:
        stmt = stmt.where(AuditRecord.username == username)
    if start is not None:
        stmt = stmt.where(AuditRecord.occurred_at >= start)
    if end is not None:
        stmt = stmt.where(AuditRecord.occurred_at < end)
    with engine.connect() as conn:
        return conn.execute(stmt.limit(limit)).all()


def check_audit(conn, report) -> None:
    """Each audit record against its chained ledger_entries row (see the module doc)."""
    chained = {r.txn_id: r for r in conn.execute(
        select(LedgerEntry.txn_id, LedgerEntry.cashier_id, LedgerEntry.journal_id)
        .where(LedgerEntry.kind == AUDIT_KIND))}
    records = {r.txn_id: r for r in conn.execute(
        select(AuditRecord.txn_id, AuditRecord.record_json, AuditRecord.journal_id))}
    report.checked["audit_records"] = len(records)
    for txn_id, rec in records.items():
        row = chained.get(txn_id)
        if row is None:
            report.add(AUDIT_MISMATCH, None, f"audit record {txn_id} has no entry in the chained book",
                       txn_id=txn_id)
        elif not record_digest_ok(txn_id, rec.record_json) or rec.journal_id != row.journal_id:
            report.add(AUDIT_MISMATCH, None, f"audit record {txn_id} is not the record its chained entry "
                       "commits to (edited)", txn_id=txn_id, journal_id=row.journal_id)
    for txn_id in chained.keys() - records.keys():
        report.add(AUDIT_MISMATCH, None, f"the chained audit entry {txn_id} has no record (removed)",
                   txn_id=txn_id)
