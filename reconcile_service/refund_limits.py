"""The book's own check of refund limits (issue 25 item 4): per sale, the refunds booked
against it never add up to more than the sale, bucket by bucket.

Redis checks each refund against the refunds its sale's record lists (core/lua/refund.lua),
but anyone who can write Redis can rewrite that record; the book cannot be rewritten
(append-only, hash-chained). So the reconcile pass and `verify` read `ledger_entries`:
every refund row names its original (`original_txn_id`); the sale's row says what it took
(`amount_minor`, `principal_delta_minor`, `bonus_delta_minor`, all negative). A sale
refunded beyond what it took, in all or from one bucket, or a refund naming no refundable
sale of the same account, is reported with the sale and every refund as evidence.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import func, select
from sqlalchemy.engine import Connection
from sqlalchemy.orm import aliased

from core.kinds import REFUNDABLE_KINDS

from .models import LedgerEntry

KIND = "refund_exceeds_sale"
MAX_REFUNDS_IN_EVIDENCE = 50


@dataclass
class RefundOverrun:
    account_id: str
    sale_txn_id: str
    cause: str
    evidence: dict = field(default_factory=dict)


def refund_overruns(conn: Connection) -> list[RefundOverrun]:
    """Every sale of the book refunded beyond what it took (or a refund without its sale)."""
    refund = LedgerEntry.__table__.alias("refund")
    sums = (select(refund.c.original_txn_id, refund.c.account_id,
                   func.sum(refund.c.amount_minor).label("total"),
                   func.sum(refund.c.principal_delta_minor).label("principal"),
                   func.sum(refund.c.bonus_delta_minor).label("bonus"),
                   func.count().label("n"))
            .where(refund.c.kind == "refund")
            .group_by(refund.c.original_txn_id, refund.c.account_id)).subquery("sums")
    sale = aliased(LedgerEntry, name="sale")
    rows = conn.execute(
        select(sums, sale.kind, sale.account_id.label("sale_account_id"), sale.amount_minor,
               sale.principal_delta_minor, sale.bonus_delta_minor, sale.journal_partition, sale.journal_id)
        .join(sale, sale.txn_id == sums.c.original_txn_id, isouter=True)).all()
    out = []
    for r in rows:
        total, principal, bonus = int(r.total), int(r.principal), int(r.bonus)
        if r.kind is None or r.kind not in REFUNDABLE_KINDS or r.sale_account_id != r.account_id:
            problem = "names no refundable sale of the account in the book"
        else:
            took, took_p, took_b = -int(r.amount_minor), -int(r.principal_delta_minor), -int(r.bonus_delta_minor)
            over = [what for what, back, limit in (("in all", total, took), ("principal", principal, took_p),
                                                   ("bonus", bonus, took_b)) if back > limit]
            if not over:
                continue
            problem = (f"took {took} ({took_p} principal, {took_b} bonus) but {total} ({principal} principal, "
                       f"{bonus} bonus) was refunded: more than it took {', '.join(over)}")
        out.append(RefundOverrun(r.account_id, r.original_txn_id, problem, {
            "sale": {"txn_id": r.original_txn_id, "kind": r.kind, "account_id": r.sale_account_id,
                     "amount_minor": r.amount_minor, "principal_delta_minor": r.principal_delta_minor,
                     "bonus_delta_minor": r.bonus_delta_minor, "journal_partition": r.journal_partition,
                     "journal_id": r.journal_id},
            "refunded_minor": total, "refunded_principal_minor": principal, "refunded_bonus_minor": bonus,
            "refund_count": int(r.n)}))
    if out:
        _add_refund_rows(conn, out)
    return out


def _add_refund_rows(conn: Connection, overruns: list[RefundOverrun]) -> None:
    """The refunds of each reported sale, as evidence (only for the few sales reported)."""
    by_sale = {o.sale_txn_id: o for o in overruns}
    rows = conn.execute(select(LedgerEntry.original_txn_id, LedgerEntry.txn_id, LedgerEntry.amount_minor,
                               LedgerEntry.principal_delta_minor, LedgerEntry.bonus_delta_minor,
                               LedgerEntry.journal_partition, LedgerEntry.journal_id)
                        .where(LedgerEntry.kind == "refund", LedgerEntry.original_txn_id.in_(list(by_sale)))
                        .order_by(LedgerEntry.journal_pos)).all()
    refunds = defaultdict(list)
    for r in rows:
        refunds[r.original_txn_id].append({
            "txn_id": r.txn_id, "amount_minor": r.amount_minor, "principal_delta_minor": r.principal_delta_minor,
            "bonus_delta_minor": r.bonus_delta_minor, "journal_partition": r.journal_partition,
            "journal_id": r.journal_id})
    for sale, o in by_sale.items():
        o.evidence["refunds"] = refunds[sale][:MAX_REFUNDS_IN_EVIDENCE]


def by_account(overruns: list[RefundOverrun]) -> dict[str, list[RefundOverrun]]:
    """The overruns grouped per account (the pass keeps one open discrepancy per account and kind)."""
    out: dict[str, list[RefundOverrun]] = defaultdict(list)
    for o in overruns:
        out[o.account_id].append(o)
    return dict(out)
