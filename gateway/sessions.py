"""Cashier sessions and supervisor approvals (`GrantStore`), kept in Redis so that
gateways stay stateless (any gateway accepts a session or an approval another one made).

POST /v1/sessions checks the cashier's PIN on the gateway (core.cashiers: scrypt hash
and the server-side lockout); on success a random session token is returned, bound to
the terminal that signed in. Redis keeps only the token's SHA-256 as the key, with the
cashier and the terminal, for `DEFAULT_TTL_S` (renewed by use). A gateway keeps a session
it checked for at most `CACHE_S` (one Redis round trip less per charge), so a session
ended on another gateway is refused everywhere within that time (at once on this one). Keys::

    cs:session:{<sha256 of the token>}:h   hash  cashier_id, terminal_id, created_ms (PEXPIRE ttl)
"""
from __future__ import annotations

import hashlib
import secrets
import threading
import time
from dataclasses import dataclass

KEY_PREFIX = "cs:session:"
DEFAULT_TTL_S = 12 * 3600        # a long shift; sign-out or shift close ends it earlier
MAX_TOKEN_LEN = 100
CACHE_S = 2.0


def token_key(prefix: str, token: str) -> str:
    """The key of a random token's record: its SHA-256 only (as a hash tag), never the token."""
    return f"{prefix}{{{hashlib.sha256(token.encode()).hexdigest()}}}:h"


def session_key(token: str) -> str:
    return token_key(KEY_PREFIX, token)


@dataclass(frozen=True, slots=True)
class Session:
    cashier_id: str
    terminal_id: str
    created_ms: int


class SessionStore:
    def __init__(self, client, *, ttl_s: int = DEFAULT_TTL_S, cache_s: float = CACHE_S):
        self.client = client
        self.ttl_s = ttl_s
        self.cache_s = min(float(cache_s), 5.0)
        self._cache: dict[str, tuple[Session, float]] = {}      # session key -> (session, checked at)
        self._lock = threading.Lock()

    def open(self, cashier_id: str, terminal_id: str) -> str:
        token = secrets.token_urlsafe(32)
        key = session_key(token)
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(key, mapping={"cashier_id": cashier_id, "terminal_id": terminal_id,
                                "created_ms": int(time.time() * 1000)})
        pipe.expire(key, self.ttl_s)
        pipe.execute()
        return token

    def get(self, token: str) -> Session | None:
        """The session of `token`, or None (unknown, expired or ended). Renews its TTL."""
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LEN:
            return None
        key = session_key(token)
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None and now - cached[1] < self.cache_s:
            return cached[0]
        pipe = self.client.pipeline(transaction=False)
        pipe.hmget(key, "cashier_id", "terminal_id", "created_ms")
        pipe.expire(key, self.ttl_s, xx=True)
        (cashier_id, terminal_id, created_ms), _ = pipe.execute()
        if not cashier_id or not terminal_id:
            with self._lock:
                self._cache.pop(key, None)
            return None
        session = Session(cashier_id, terminal_id, int(created_ms or 0))
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[key] = (session, now)
        return session

    def close(self, token: str) -> bool:
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LEN:
            return False
        key = session_key(token)
        with self._lock:
            self._cache.pop(key, None)
        return bool(self.client.delete(key))


# ---------------------------------------------------------------- supervisor approvals

GRANT_PREFIX = "cs:approval:"
GRANT_TTL_S = 10 * 60       # an approval given at the till is used within minutes (retries included)


def grant_key(token: str) -> str:
    return token_key(GRANT_PREFIX, token)


@dataclass(frozen=True, slots=True)
class Grant:
    supervisor_id: str
    terminal_id: str
    cashier_id: str
    kind: str                  # the operation it is for ('' : any one operation)
    txn_id: str                # the operation that used it ('' : not used yet)


class GrantStore:
    """A supervisor's approval checked once by the gateway (POST /v1/approvals) and
    handed to the till as a random token for ONE operation: bound to the terminal and
    the cashier session that asked, used by the first txn id that carries it (a retry
    of that txn id may carry it again; another txn id is refused). Redis keeps the
    token's SHA-256 only, for GRANT_TTL_S. Keys::

        cs:approval:{<sha256 of the token>}:h   hash  supervisor_id, terminal_id, cashier_id, kind, txn_id
    """

    def __init__(self, client, *, ttl_s: int = GRANT_TTL_S):
        self.client = client
        self.ttl_s = ttl_s

    def issue(self, supervisor_id: str, terminal_id: str, cashier_id: str, kind: str = "") -> str:
        token = secrets.token_urlsafe(32)
        key = grant_key(token)
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(key, mapping={"supervisor_id": supervisor_id, "terminal_id": terminal_id,
                                "cashier_id": cashier_id, "kind": kind})
        pipe.expire(key, self.ttl_s)
        pipe.execute()
        return token

    def use(self, token: str, txn_id: str) -> Grant | None:
        """The grant of `token`, bound to `txn_id` now if it was unused; None if unknown or
        expired. The caller checks terminal, cashier, kind and `txn_id` (another one: used)."""
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LEN:
            return None
        key = grant_key(token)
        if not self.client.exists(key):
            return None
        pipe = self.client.pipeline(transaction=True)
        pipe.hsetnx(key, "txn_id", txn_id)      # the first txn id to carry it keeps it
        pipe.hgetall(key)
        _, fields = pipe.execute()
        if not fields.get("supervisor_id"):     # expired in between: drop what HSETNX made
            self.client.delete(key)
            return None
        return Grant(fields["supervisor_id"], fields.get("terminal_id", ""), fields.get("cashier_id", ""),
                     fields.get("kind", ""), fields["txn_id"])
