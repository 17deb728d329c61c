"""Journal entries as the book of record reads them: `BookEntry` (core.JournalEntry's
fields and the book's own: bucket deltas, payment method, a shift_close's Z record, an
audit entry's record, the sortable position), `parse_entries` (good entries and quarantine rows of a batch), and
the ledger_entries row of an entry (`LEDGER_COLUMNS`, `ledger_values`, `ledger_rows`).
Nothing here talks to a database.
"""
from __future__ import annotations

import json
import re
from collections import namedtuple
from dataclasses import MISSING, fields as dataclass_fields
from datetime import datetime
from typing import Iterable, Sequence

from core import JournalEntry
from core.audit import record_digest_ok
from core.journal_codec import FIELD as JOURNAL_FIELD, decode_payload

from .dialect import ms_to_datetime, utcnow
from .models import METHOD_LEN, journal_pos

# the book's method of an imported opening balance (journal field `imp`: core/member_import.py)
IMPORT_METHOD = "import"

_INT_RE = re.compile(r"-?[0-9]{1,19}")
# the totals of a Z record (core.shifts), each a whole number
SHIFT_TOTALS = ("sales_count", "sales_minor", "refunds_count", "refunds_minor", "topups_count", "topups_minor")


def _book_entry_fields():
    """A named tuple of core.JournalEntry's fields (same names, order and defaults) and
    the book's own (see BookEntry)."""
    core = dataclass_fields(JournalEntry)
    names = [f.name for f in core] + ["principal_delta_minor", "bonus_delta_minor", "method", "shift", "pos",
                                       "audit", "debt_delta_minor", "made_at_ms"]
    defaults = [f.default for f in core if f.default is not MISSING] + [0, 0, "", None, "", None, 0, None]
    return namedtuple("BookEntryFields", names, defaults=defaults), len(core)


_BookEntryFields, _CORE_FIELDS = _book_entry_fields()
# The compact entry's fast path (BookEntry.parse) fills core.JournalEntry's fields up to
# original_txn_id from the eight fixed fields and the rest with their defaults, as
# from_fields does for an entry without extras; valid while JournalEntry starts with these.
_FIXED_CORE = ("journal_id", "partition", "txn_id", "kind", "account_id", "amount_minor", "balance_after_minor",
               "terminal_id", "cashier_id", "occurred_ms", "original_txn_id")
_FAST_PATH = _BookEntryFields._fields[:len(_FIXED_CORE)] == _FIXED_CORE
_CORE_REST = _BookEntryFields._field_defaults
# the kinds whose book entry is its fixed fields alone when it has no extras; any other
# kind (shift_close, open, kinds added later with checks of their own) takes the
# generic path below, whatever it carries
_FAST_KINDS = frozenset({"deduct", "credit", "refund", "capture", "compensate", "void", "hold_expire",
                         "freeze", "unfreeze"})
_CORE_TAIL = tuple(_CORE_REST[n] for n in _BookEntryFields._fields[len(_FIXED_CORE):_CORE_FIELDS]) \
    if _FAST_PATH else ()
# the book's fields after `pos` (an audit record, an offline debt's change, ...): their
# defaults, which a fast-path kind without extras always has
_BOOK_TAIL = tuple(_CORE_REST[n] for n in _BookEntryFields._fields[_BookEntryFields._fields.index("pos") + 1:])
_core_from_fields = JournalEntry.from_fields.__func__
_AMOUNT_AT, _KIND_AT = _BookEntryFields._fields.index("amount_minor"), _BookEntryFields._fields.index("kind")
_TXN_AT = _BookEntryFields._fields.index("txn_id")


def _args_tuple(*values):
    """What from_fields builds when given this as its class: the core fields as a plain
    tuple, so BookEntry.parse makes one tuple per entry instead of two."""
    return values


class BookEntry(_BookEntryFields):
    """A journal entry with what the book of record adds: the bucket deltas and payment
    method (journal fields `pd`, `bd`, `m`; absent: pd = amt, bd = 0, no method), for
    a `shift_close` the Z record, an `audit` entry its record (`audit`), and `pos`, the sortable
    journal position; the change of the account's offline debt (`debt_delta_minor`: `dt` of an
    offline_debt entry, minus `dp` of a top-up that paid one; issue 27) and an offline sale's time (`om`).

    It has every field of core.JournalEntry, read from the stream fields by core's own
    `JournalEntry.from_fields` (which builds whatever it is called on from those fields:
    here a plain tuple of them),
    but is a named tuple rather than a frozen dataclass: building one costs a quarter
    (a frozen dataclass sets its 19 fields one object.__setattr__ at a time), and the
    drain builds one per entry (profiling: 20% of its time went into that)."""
    __slots__ = ()

    @classmethod
    def parse(cls, journal_id: str, partition: int, f: dict[str, str] | list[str]) -> "BookEntry":
        """`f`: the stream entry's fields, in either encoding (core.journal_codec). A
        compact entry without extras (a plain deduction or refund: most of a day) goes
        straight from its eight parts to the tuple, no dict of fields in between."""
        if f.__class__ is list:         # the raw reader's [name, value, ...] (journal.py)
            payload = f[1] if len(f) == 2 and f[0] == JOURNAL_FIELD else None
            if payload is None:
                f = _fields_dict(f)
                payload = f.get(JOURNAL_FIELD)
        else:
            payload = f.get(JOURNAL_FIELD)
        if payload is not None:
            parts = payload.split("|")
            if len(parts) == 8 and _FAST_PATH and "%" not in payload:
                txn, kind, acct, amt, bal, term, cash, orig = parts
                amount = int(amt)
                if kind in _FAST_KINDS:
                    return tuple.__new__(cls, (journal_id, partition, txn, kind, acct, amount, int(bal), term,
                                               cash, int(journal_id[:journal_id.index("-")]), orig) + _CORE_TAIL
                                         + (amount, 0, "", None, journal_pos(journal_id)) + _BOOK_TAIL)
            f = decode_payload(payload)
        core = _core_from_fields(_args_tuple, journal_id, partition, f)    # the core fields, in order
        if len(core) != _CORE_FIELDS:
            raise RuntimeError("JournalEntry.from_fields must pass every field")  # a bug, never data
        amt = core[_AMOUNT_AT]
        pd = _int_field(f, "pd") if "pd" in f else amt
        bd = _int_field(f, "bd") if "bd" in f else 0
        if pd + bd != amt:
            raise ValueError(f"pd {pd} + bd {bd} != amt {amt}")
        method = f.get("m") or ""
        if not method and "imp" in f and core[_KIND_AT] == "open":
            method = IMPORT_METHOD      # an opening balance moved in from an old system
        if len(method) > METHOD_LEN:
            raise ValueError(f"payment method {method[:20]!r} longer than {METHOD_LEN}")
        kind = core[_KIND_AT]
        shift = _parse_shift(f) if kind == "shift_close" else None
        audit = _parse_audit(f, core[_TXN_AT]) if kind == "audit" else None
        debt = 0
        if "dt" in f or "dp" in f:
            added = _int_field(f, "dt") if "dt" in f else 0
            paid = _int_field(f, "dp") if "dp" in f else 0
            if added < 0 or paid < 0:
                raise ValueError(f"dt {added} / dp {paid} must not be negative")
            debt = added - paid
        made_at = _int_field(f, "om") if "om" in f else None
        return tuple.__new__(cls, core + (pd, bd, method, shift, journal_pos(journal_id), audit, debt, made_at))


def _int_field(f: dict, name: str) -> int:
    value = f[name]
    if not isinstance(value, str) or not _INT_RE.fullmatch(value):
        raise ValueError(f"{name} {str(value)[:24]!r} is not a whole number")
    return int(value)


def _parse_shift(f: dict) -> dict:
    """A shift_close entry's Z record (core.shifts writes it): number, who closed it,
    when it opened, the totals (JSON object `z`)."""
    if f.get("amt") != "0":
        raise ValueError("a shift_close moves no money (amt must be 0)")
    shift_no = _int_field(f, "shift")
    if shift_no < 1 or not f.get("term") or not f.get("by") or len(f["by"]) > 64:
        raise ValueError("a shift_close needs shift >= 1, term and by")
    record = json.loads(f["z"])
    if not isinstance(record, dict):
        raise ValueError("z is not a JSON object")
    totals = {}
    for name in SHIFT_TOTALS:
        value = record.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 2 ** 63:
            raise ValueError(f"z.{name} is not a whole number")
        totals[name] = value
    opened = _int_field(f, "opened") if f.get("opened") else None
    return dict(shift_no=shift_no, closed_by=f["by"], opened_ms=opened, totals=totals, record=f["z"])


def _parse_audit(f: dict, txn_id: str) -> dict:
    """An audit entry's record (core.audit writes it): a JSON object whose SHA-256 the
    txn id commits to; an entry whose record does not match it is quarantined."""
    if f.get("amt") != "0":
        raise ValueError("an audit entry moves no money (amt must be 0)")
    text = f["rec"]
    if not record_digest_ok(txn_id, text):
        raise ValueError("the audit record is not the one its txn id commits to")
    record = json.loads(text)
    if not isinstance(record, dict) or not all(isinstance(record.get(k), str) for k in
                                               ("who", "action", "target", "summary", "address")):
        raise ValueError("rec is not an audit record")
    return dict(record, record=text)


def _fields_dict(flat: list) -> dict:
    """A stream entry's flat [name, value, ...] as redis-py's dict of it."""
    return dict(zip(flat[::2], flat[1::2]))


def parse_entries(partition: int, raw: Sequence[tuple[str, dict | list]]) -> tuple[list[BookEntry], list[dict]]:
    """Split stream entries into parsed entries and quarantine rows (malformed ones).
    An entry's fields: redis-py's dict, or the flat list Redis sent (the drain's raw reader)."""
    good, bad = [], []
    now = utcnow()
    for entry_id, fields_ in raw:
        try:
            entry = BookEntry.parse(entry_id, partition, fields_)
            if not entry.txn_id or not entry.account_id or not entry.kind:
                raise ValueError("empty txn, acct or kind")
            if len(entry.txn_id) > 64 or len(entry.account_id) > 64 or len(entry.kind) > 32:
                raise ValueError("id longer than the schema allows")
            good.append(entry)
        except (KeyError, ValueError, TypeError, json.JSONDecodeError) as exc:
            if fields_.__class__ is list:
                fields_ = _fields_dict(fields_)
            bad.append(dict(journal_partition=partition, journal_id=entry_id,
                            fields_json=json.dumps(fields_, sort_keys=True, default=str),
                            error=f"{type(exc).__name__}: {exc}", quarantined_at=now))
    return good, bad


# ledger_entries' columns as the drain writes them (the chain's two last)
LEDGER_COLUMNS = ("txn_id", "account_id", "kind", "amount_minor", "balance_after_minor", "terminal_id",
                  "cashier_id", "original_txn_id", "occurred_at", "journal_partition", "journal_id",
                  "journal_pos", "principal_delta_minor", "bonus_delta_minor", "method", "applied_at",
                  "chain_seq", "row_hash")


def ledger_values(entry: BookEntry, now: datetime, occurred: datetime | None = None) -> list:
    """An entry's ledger_entries values in LEDGER_COLUMNS order, the chain's left 0 and ''."""
    return [entry.txn_id, entry.account_id, entry.kind, entry.amount_minor, entry.balance_after_minor,
            entry.terminal_id or None, entry.cashier_id or None, entry.original_txn_id or None,
            occurred or ms_to_datetime(entry.occurred_ms), entry.partition, entry.journal_id, entry.pos,
            entry.principal_delta_minor, entry.bonus_delta_minor, entry.method or None, now, 0, ""]


def ledger_row(entry: BookEntry, now: datetime) -> dict:
    """An entry's ledger_entries row as a dict (without the chain's columns)."""
    return dict(zip(LEDGER_COLUMNS[:-2], ledger_values(entry, now)))


def ledger_rows(entries: Iterable[BookEntry], now: datetime, link, totals):
    """The ledger_entries rows of `entries` (lists in LEDGER_COLUMNS order), each chained
    by `link` (a `chain.Linker`, or what the book's chain gives instead) and added to
    `totals` (a `totals.BatchTotals`) as it is made, so a COPY streams the rows already
    built while the next is built."""
    instants: dict[int, datetime] = {}       # entries of one millisecond share its datetime
    for e in entries:
        occurred = instants.get(e.occurred_ms)
        if occurred is None:
            occurred = instants[e.occurred_ms] = ms_to_datetime(e.occurred_ms)
        row = ledger_values(e, now, occurred)
        link(row)
        totals.add(e)
        yield row
