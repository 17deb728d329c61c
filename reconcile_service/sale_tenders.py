"""The book's side of split-tender sales (issue 31): the `sale_tenders` rows of a batch's
`sale` and `tender_refund` entries (written by the transaction that writes the entries),
the sums the reports show (card legs and the other tenders apart), and verify's check that
every sale in the book is whole (card leg + tenders = its total, no tender row without its
entry, no tender given back past what it paid)."""
from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Iterable

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from core.sales import decode_tenders

from .dialect import insert_for, ms_to_datetime
from .models import LedgerEntry, SaleTender

TENDER_KINDS = ("sale", "tender_refund")


def tender_rows(entries: Iterable) -> list[dict]:
    """The sale_tenders rows of the entries (BookEntry) of kind sale / tender_refund."""
    rows = []
    for e in entries:
        common = dict(txn_id=e.txn_id, kind=e.kind, account_id=e.account_id, terminal_id=e.terminal_id or None,
                      cashier_id=e.cashier_id or None, occurred_at=ms_to_datetime(e.occurred_ms),
                      journal_partition=e.partition, journal_id=e.journal_id)
        if e.kind == "sale":
            for method, amount in decode_tenders(e.tenders).items():
                rows.append(dict(common, sale_txn_id=e.txn_id, method=method, amount_minor=amount,
                                 change_minor=e.change_minor if method == "cash" else 0,
                                 sale_total_minor=e.sale_total_minor))
        elif e.kind == "tender_refund":
            rows.append(dict(common, sale_txn_id=e.original_txn_id, method=e.tender_method,
                             amount_minor=-e.tender_minor, change_minor=0, sale_total_minor=0))
    return rows


def insert_tenders(conn: Connection, entries: Iterable) -> None:
    """Write the tenders of the batch's new sale / tender_refund entries (a redelivery
    changes nothing)."""
    rows = tender_rows(e for e in entries if e.kind in TENDER_KINDS)
    if rows:
        conn.execute(insert_for(conn, SaleTender).on_conflict_do_nothing(
            index_elements=["journal_partition", "journal_id", "method"]), rows)


def tender_sums(conn: Connection, start: datetime, end: datetime) -> dict[str, int]:
    """Over [start, end): the other tenders of split sales per method, net of what was given
    back ({'cash': ..., 'wechat': ...}), and 'change' (cash handed back)."""
    out: dict[str, int] = defaultdict(int)
    rows = conn.execute(select(SaleTender.method, func.sum(SaleTender.amount_minor), func.sum(SaleTender.change_minor))
                        .where(SaleTender.occurred_at >= start, SaleTender.occurred_at < end)
                        .group_by(SaleTender.method))
    for method, amount, change in rows:
        out[method] += int(amount or 0)
        if change:
            out["change"] += int(change)
    return dict(out)


def check_sales(conn: Connection, report) -> None:
    """verify: every sale entry of the book is whole (its tender rows + its card leg = its
    total), every tender row has its entry, a tender is never given back past what it paid."""
    sales = {r.txn_id: r for r in conn.execute(select(LedgerEntry.txn_id, LedgerEntry.amount_minor)
                                                 .where(LedgerEntry.kind == "sale"))}
    refunds = {r.txn_id for r in conn.execute(select(LedgerEntry.txn_id).where(LedgerEntry.kind == "tender_refund"))}
    paid: dict[str, dict[str, int]] = defaultdict(dict)
    back: dict[tuple[str, str], int] = defaultdict(int)
    totals: dict[str, int] = {}
    for r in conn.execute(select(SaleTender.__table__)):
        if r.kind == "sale":
            if r.txn_id not in sales:
                report.add("sale_tender_orphan", r.account_id, f"tender row of sale {r.txn_id} without its entry")
                continue
            paid[r.txn_id][r.method] = r.amount_minor
            totals[r.txn_id] = r.sale_total_minor
        elif r.txn_id not in refunds:
            report.add("sale_tender_orphan", r.account_id, f"tender refund row {r.txn_id} without its entry")
        else:
            back[(r.sale_txn_id, r.method)] += -r.amount_minor
    for txn, entry in sales.items():
        report.checked["sales_whole"] += 1
        if not paid.get(txn) or -entry.amount_minor + sum(paid[txn].values()) != totals.get(txn):
            report.add("sale_not_whole", None, f"sale {txn}: card {-entry.amount_minor} + tenders "
                       f"{paid.get(txn)} != total {totals.get(txn)}")
    for (sale, method), given in back.items():
        if given > paid.get(sale, {}).get(method, 0):
            report.add("tender_refund_exceeds", None, f"{method} given back of sale {sale}: {given} > "
                       f"{paid.get(sale, {}).get(method, 0)}")
