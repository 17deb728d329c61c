"""The journal entry encoding (docs/ledger.md, "Journal entry encoding"): one stream field
per entry instead of one per name, so XADD in every script and the drain both do less.

Version 1: the stream field `j1` holds

    txn|kind|acct|amt|bal|term|cash|orig[|name|value]...

the eight fixed fields in that order (integers as exact digits, '' for none), then any
extra name/value pairs a script adds (`pd`, `bd`, `m`, `held`, `exp`, `name`, ...), each
name and value escaped: '%' as '%25', '|' as '%7C'. The fixed fields are ids (A-Z a-z 0-9
. _ : - and the ledger's own '@'), kinds and digits, which never hold '|'; the scripts
off the hot path escape them anyway. An entry written before issue 30 has one stream
field per name (`txn`, `kind`, ...); every reader takes both, through `decode`.
"""
from __future__ import annotations

from typing import Iterable

FIELD = "j1"                       # the stream field of an encoded entry (version 1)
FIELD_B = FIELD.encode()
FIXED = ("txn", "kind", "acct", "amt", "bal", "term", "cash", "orig")
SEP = "|"
_N_FIXED = len(FIXED)


def _unescape(text: str) -> str:
    # '%7C' first: after encoding every '%' starts an escape, so this finds only real ones
    return text.replace("%7C", "|").replace("%25", "%") if "%" in text else text


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("|", "%7C")


def decode_payload(payload: str) -> dict[str, str]:
    """The fields of one encoded entry (the value of its `j1` field). Raises ValueError
    on a malformed one (the reconcile service quarantines it)."""
    parts = payload.split(SEP)
    n = len(parts)
    if n < _N_FIXED or (n - _N_FIXED) % 2:
        raise ValueError(f"journal entry of {n} parts: needs {_N_FIXED} fixed ones, then name/value pairs")
    if "%" in payload:
        parts = [_unescape(p) for p in parts]
    out = dict(zip(FIXED, parts))
    for i in range(_N_FIXED, n, 2):
        out[parts[i]] = parts[i + 1]
    return out


def decode(fields: dict) -> dict:
    """An entry's fields by name, whichever form it was written in: an encoded entry's
    fields, or an old entry's own dict (as it is). Bytes (a client without
    decode_responses) are decoded as UTF-8 first."""
    payload = fields.get(FIELD)
    if payload is None:
        payload = fields.get(FIELD_B)
        if payload is None:
            if fields and isinstance(next(iter(fields)), bytes):
                return {k.decode(): v.decode() for k, v in fields.items()}
            return fields
    if isinstance(payload, bytes):
        payload = payload.decode()
    return decode_payload(payload)


def encode(fields: dict[str, object]) -> dict[str, str]:
    """The stream fields of an entry in version 1 (what the scripts write; for tests and
    tools that write an entry themselves). `fields` needs txn, kind, acct, amt, bal."""
    fixed = [_escape(str(fields.get(name, ""))) for name in FIXED]
    extra = [_escape(str(x)) for name, value in fields.items() if name not in FIXED for x in (name, value)]
    return {FIELD: SEP.join(fixed + extra)}


def read_range(client, stream: str, start: str = "-", end: str = "+", count: int | None = None
               ) -> list[tuple[str, dict]]:
    """XRANGE of a journal stream, each entry's fields decoded (`decode`)."""
    return decoded(client.xrange(stream, start, end, count))


def decoded(page: Iterable[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """Stream entries (id, fields) with their fields decoded (`decode`); a deleted
    entry's None fields stay None."""
    return [(eid, decode(f) if f is not None else None) for eid, f in page]
