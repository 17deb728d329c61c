"""Shift closes (Z records) journaled by the terminal: `close_shift` appends one
`shift_close` entry (amount 0, no account) with the terminal, the shift number, the
cashier, who closed it and the shift's totals, through core/lua/shift_close.lua, so the
back office gets a numbered, immutable record of every shift (reconcile_service keeps it
in `shift_closes` and in the hash-chained ledger_entries).

Like every ledger operation it is idempotent by txn id: a retry reuses the txn id and
changes nothing; by default the txn id is derived from the terminal and the shift number
(`shift_txn_id`), so a shift is closed once however often the till retries. The entry
goes to the terminal's partition.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from . import validation as v
from .errors import InvalidRequest
from .result import Result

SHIFT_BOOK_ACCOUNT = "~"     # the `acct` of a shift_close entry: no account ('~' is never an account id)
MAX_SHIFT_NO = 10 ** 12
MAX_TOTAL = 10 ** 15
MAX_TOTALS_BYTES = 4096


@dataclass(frozen=True, slots=True)
class ShiftTotals:
    """What a Z report adds up: counts and sums (minor units) of the shift's operations."""
    sales_count: int = 0
    sales_minor: int = 0
    refunds_count: int = 0
    refunds_minor: int = 0
    topups_count: int = 0
    topups_minor: int = 0


def shift_txn_id(terminal_id: str, shift_no: int, *, opened_ms: int | None = None) -> str:
    """The default txn id of closing `shift_no` on `terminal_id` (stable across retries).
    A till whose shift numbers can start again at 1 (reinstalled, its local outbox new)
    passes the shift's `opened_ms` too, so its new shift 1 is not taken for the old one
    (which would answer TxnConflict and leave the new shift without a Z record)."""
    key = f"{terminal_id}|{shift_no}" if opened_ms is None else f"{terminal_id}|{shift_no}|{opened_ms}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return f"z-{digest}"


def _totals_json(totals: ShiftTotals | dict, extra: dict | None) -> str:
    record = asdict(totals) if isinstance(totals, ShiftTotals) else dict(totals)
    record.update(extra or {})
    for name, value in record.items():
        if not isinstance(name, str) or not name:
            raise InvalidRequest("totals", "names must be non-empty text")
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) > MAX_TOTAL:
            raise InvalidRequest("totals", f"{name} must be a whole number (minor units or a count)")
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if len(text.encode()) > MAX_TOTALS_BYTES:
        raise InvalidRequest("totals", f"longer than {MAX_TOTALS_BYTES} bytes")
    return text


def close_shift(ledger, *, terminal_id: str, shift_no: int, closed_by: str,
                totals: ShiftTotals | dict, cashier_id: str | None = None,
                opened_ms: int | None = None, txn_id: str | None = None,
                extra_totals: dict | None = None) -> Result:
    """Journal the Z record of `shift_no` on `terminal_id`. `closed_by`: the cashier or
    supervisor who closed it; `cashier_id`: who worked the shift; `extra_totals`: more
    whole-number totals (e.g. top-ups per payment method). Result.kind is 'shift_close',
    `journal_id` the entry's id. Raises InvalidRequest naming the field on bad input."""
    v.check_id(terminal_id, "terminal_id")
    v.check_id(closed_by, "closed_by")
    v.check_id(cashier_id, "cashier_id", optional=True)
    if isinstance(shift_no, bool) or not isinstance(shift_no, int) or not 1 <= shift_no <= MAX_SHIFT_NO:
        raise InvalidRequest("shift_no", "must be a whole number from 1 to 10^12")
    if opened_ms is not None and (isinstance(opened_ms, bool) or not isinstance(opened_ms, int)
                                  or not 1 <= opened_ms < 10 ** 15):
        raise InvalidRequest("opened_ms", "must be milliseconds since the epoch")
    txn_id = shift_txn_id(terminal_id, shift_no) if txn_id is None else txn_id
    v.check_id(txn_id, "txn_id")
    z = _totals_json(totals, extra_totals)
    part = ledger.schema.partition_of(terminal_id)
    keys = [part.txn(txn_id), part.journal]
    args = [txn_id, terminal_id, str(shift_no), ledger.retention_s, cashier_id or "", closed_by,
            "" if opened_ms is None else str(opened_ms), z]
    return ledger.runner.run("shift_close", "shift_close", keys, args, SHIFT_BOOK_ACCOUNT, 0, txn_id)
