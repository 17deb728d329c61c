"""Read-only lookups of past operations in Redis, for receipts and refunds at the till.

`History.load(txn_id)` finds one operation by its txn id (the receipt number) on any
terminal: its idempotency record (what was decided, the balance after, the journal id,
how much of a charge is refunded already) and, while the journal still holds it, its
journal entry (terminal, cashier, principal/bonus split, payment method).
`History.recent(account_id)` lists an account's last operations from every terminal,
newest first, from the journal entries Redis still holds. Nothing here writes, and
nothing reads the database of record: a terminal never touches it.

The windows are Redis's own: an idempotency record lives for the ledger's retention
(7 days by default), which is also how long a refund can name its original (refund.lua
needs the record); a journal entry stays until the reconcile service trims it
(`trim_keep_s`, 1 hour by default), so older operations come back without terminal,
cashier and bucket split, and an account's recent history reaches back that far.
Outside the window the lookup raises `OperationNotFound` / reports `OUTSIDE_WINDOW`
with what the cashier can do instead.
"""
from __future__ import annotations


from . import validation as v
from .errors import InvalidRequest, OperationNotFound
from .journal_codec import decode
from .keys import Partition
from .kinds import ORIGINAL_NAMING_KINDS, REFUNDABLE_KINDS
from .records import PastOperation, RefundCheck  # noqa: F401  (also importable from here)
from .result import status_of

# REFUNDABLE_KINDS (core.kinds, still importable from here): the kinds a refund can name
# (refund.lua accepts deductions and captured holds only).
DEFAULT_RECENT_COUNT = 20
MAX_RECENT_COUNT = 200
DEFAULT_SCAN_LIMIT = 20_000        # journal entries read at most for one account's history


def _journal_ms(journal_id: str) -> int:
    head = journal_id.partition("-")[0]
    return int(head) if head.isdigit() else 0


def _optional_int(text: str | None) -> int | None:
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        return None


class History:
    """Lookups on the ledger's Redis (a `core.Ledger`: its client, schema, and its runner's
    retries)."""

    def __init__(self, ledger):
        self.ledger = ledger

    @property
    def retention_s(self) -> int:
        return self.ledger.retention_s

    def load(self, txn_id: str) -> PastOperation:
        """The operation with this txn id, from any terminal. Raises InvalidRequest for a
        malformed id, OperationNotFound when Redis no longer (or never) held it."""
        v.check_id(txn_id, "txn_id")
        ledger = self.ledger
        partitions = ledger.partitions

        def read():
            pipe = ledger.client.pipeline(transaction=False)
            for part in partitions:
                pipe.hmget(part.txn(txn_id), "f", "s", "b", "j", "r")
                pipe.ttl(part.txn(txn_id))
            return pipe.execute()
        replies = ledger.runner.with_retry(read, txn_id=None)
        for i, part in enumerate(partitions):
            (fingerprint, stored, balance, journal_id, refunded), ttl_s = replies[2 * i], replies[2 * i + 1]
            if fingerprint:
                return self._from_record(part, txn_id, fingerprint, stored, balance, journal_id or "",
                                         refunded, int(ttl_s))
        raise OperationNotFound(txn_id, self.retention_s)

    def _from_record(self, part: Partition, txn_id, fingerprint, stored, balance, journal_id,
                     refunded, ttl_s) -> PastOperation:
        kind, account_id, amount, *rest = fingerprint.split("|") + ["", "", ""]
        original = rest[0] if kind in ORIGINAL_NAMING_KINDS else ""
        fields: dict[str, str] = {}
        if journal_id:
            page = self.ledger.runner.with_retry(self.ledger.client.xrange, part.journal, journal_id,
                                                 journal_id, 1, txn_id=None)
            if page:
                fields = decode(page[0][1])
        tenders = ""
        if kind == "sale" and status_of(stored) == "APPLIED":
            left = self.ledger.sale_tenders(account_id, txn_id) or {}
            tenders = ";".join(f"{m}:{a}" for m, a in left.items() if m != "card")
        return PastOperation(
            tenders=tenders,
            txn_id=txn_id, kind=kind, account_id=account_id,
            amount_minor=int(amount) if amount.isdigit() else 0,
            status=status_of(stored) or "", balance_after_minor=int(balance or 0),
            journal_id=journal_id, occurred_ms=int(fields.get("ts", 0)) or _journal_ms(journal_id),
            refunded_minor=int(refunded or 0), original_txn_id=original or fields.get("orig", ""),
            terminal_id=fields.get("term", ""), cashier_id=fields.get("cash", ""),
            principal_delta_minor=_optional_int(fields.get("pd")),
            bonus_delta_minor=_optional_int(fields.get("bd")), method=fields.get("m", ""),
            has_entry=bool(fields), record_ttl_s=ttl_s)

    def recent(self, account_id: str, *, count: int = DEFAULT_RECENT_COUNT,
               scan_limit: int = DEFAULT_SCAN_LIMIT) -> list[PastOperation]:
        """The account's last `count` (1..200) applied operations, all terminals, newest
        first, as far back as the journal in Redis reaches; charges carry what is
        refunded of them. Bounded: at most `scan_limit` journal entries are read."""
        v.check_id(account_id, "account_id")
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_RECENT_COUNT:
            raise InvalidRequest("count", f"must be a whole number from 1 to {MAX_RECENT_COUNT}")
        entries = self.ledger.journal(account_id, count=count, scan_limit=scan_limit)
        part = self.ledger.schema.partition_of(account_id)
        charges = [e.txn_id for e in entries if e.kind in REFUNDABLE_KINDS]

        def read_refunded():
            pipe = self.ledger.client.pipeline(transaction=False)
            for txn in charges:
                pipe.hmget(part.txn(txn), "r", "f")
            return pipe.execute()
        refunded = dict(zip(charges, self.ledger.runner.with_retry(read_refunded, txn_id=None))) if charges else {}
        # a top-up's method and bucket split are journal fields JournalEntry does not carry
        # (the drain reads them itself): read those entries' fields in one pipeline
        credits = [e.journal_id for e in entries if e.kind == "credit"]

        def read_credits():
            pipe = self.ledger.client.pipeline(transaction=False)
            for jid in credits:
                pipe.xrange(part.journal, jid, jid, 1)
            return pipe.execute()
        extra = {jid: (decode(page[0][1]) if page else {}) for jid, page in
                 zip(credits, self.ledger.runner.with_retry(read_credits, txn_id=None))} if credits else {}
        out = []
        for e in entries:
            fields = extra.get(e.journal_id, {})
            r, fingerprint = refunded.get(e.txn_id, (None, None))
            # a charge whose record has expired can no longer be refunded: say so by
            # counting it as refunded in full (refund.lua would answer ORIGINAL_NOT_FOUND)
            gone = e.kind in REFUNDABLE_KINDS and not fingerprint
            out.append(PastOperation(
                txn_id=e.txn_id, kind=e.kind, account_id=e.account_id, amount_minor=abs(e.amount_minor),
                status="APPLIED", balance_after_minor=e.balance_after_minor, journal_id=e.journal_id,
                occurred_ms=e.occurred_ms, refunded_minor=abs(e.amount_minor) if gone else int(r or 0),
                original_txn_id=e.original_txn_id, terminal_id=e.terminal_id, cashier_id=e.cashier_id,
                principal_delta_minor=_optional_int(fields.get("pd")),
                bonus_delta_minor=_optional_int(fields.get("bd")),
                method=fields.get("m", ""), has_entry=True))
        return out
