"""Finds a TTL on a ledger key that must never expire (issue 25 item 8).

An expiring balance, journal, card map or setting loses money or evidence silently when
it expires, so a TTL put on one (by hand, by a tool, by a misconfigured client) must be
reported before that moment. By design only these keys under `cs:` expire: the
idempotency / txn records (`cs:{<tag>}:t:<txn_id>`, TTL = retention), a cashier's PIN
failure counter and lock (`cs:cashier:{<id>}:fails` / `:lock`), and the gateway's
cashier sessions and supervisor grants (`cs:session:{<sha256>}:h`,
`cs:approval:{<sha256>}:h`, gateway/sessions.py). Every other key under
`cs:` (streams, accounts, holds, cards, the card map, the member index, settings, the
chain anchor, the cashier records and index, `cs:meta`) must have none.

`expiring_ledger_keys` walks the keyspace with SCAN in bounded pages (COUNT
`page_size`; on a Cluster every primary) and asks PTTL of each page in one pipeline, so
it never blocks Redis; used by the reconcile pass (discrepancy `ttl_on_ledger_key`) and
by `cashierctl doctor` (a warning).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .keys import PREFIX

# keys that expire by design: txn records, PIN failure counters and locks, the gateway's
# sessions and grants
EXPIRING_BY_DESIGN = re.compile(r"^cs:\{[^}]*\}:t:|^cs:(?:cashier|mpin):\{[^}]*\}:(?:fails|lock)$"
                                r"|^cs:(?:session|approval):\{[0-9a-f]{64}\}:h$")
PAGE_SIZE = 500


@dataclass(frozen=True)
class ExpiringKey:
    key: str
    seconds_left: float


def must_never_expire(key: str) -> bool:
    """True for every ledger key but those that expire by design."""
    return key.startswith(f"{PREFIX}:") and not EXPIRING_BY_DESIGN.match(key)


def expiring_ledger_keys(client, *, page_size: int = PAGE_SIZE, limit: int | None = None) -> list[ExpiringKey]:
    """Every key under `cs:` that must never expire and has a TTL, with the seconds it
    has left; at most `limit` of them (None: all)."""
    found: list[ExpiringKey] = []
    page: list[str] = []

    def check(keys: list[str]) -> None:
        pipe = client.pipeline(transaction=False)
        for k in keys:
            pipe.pttl(k)
        for k, ms in zip(keys, pipe.execute()):
            if ms is not None and int(ms) >= 0:      # -1: no TTL, -2: gone meanwhile
                found.append(ExpiringKey(k, int(ms) / 1000))

    for key in client.scan_iter(match=f"{PREFIX}:*", count=page_size):
        key = key.decode() if isinstance(key, bytes) else key
        if must_never_expire(key):
            page.append(key)
        if len(page) >= page_size:
            check(page)
            page = []
            if limit is not None and len(found) >= limit:
                return found[:limit]
    if page:
        check(page)
    return found if limit is None else found[:limit]
