"""Cashier sessions, kept in Redis so that gateways stay stateless (any gateway accepts a
session another one opened).

POST /v1/sessions checks the cashier's PIN on the gateway (core.cashiers: scrypt hash
and the server-side lockout); on success a random session token is returned, bound to
the terminal that signed in. Redis keeps only the token's SHA-256 as the key, with the
cashier and the terminal, for `DEFAULT_TTL_S` (renewed by use). Keys::

    cs:session:{<sha256 of the token>}:h   hash  cashier_id, terminal_id, created_ms (PEXPIRE ttl)
"""
from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass

KEY_PREFIX = "cs:session:"
DEFAULT_TTL_S = 12 * 3600        # a long shift; sign-out or shift close ends it earlier
MAX_TOKEN_LEN = 100


def session_key(token: str) -> str:
    return f"{KEY_PREFIX}{{{hashlib.sha256(token.encode()).hexdigest()}}}:h"


@dataclass(frozen=True, slots=True)
class Session:
    cashier_id: str
    terminal_id: str
    created_ms: int


class SessionStore:
    def __init__(self, client, *, ttl_s: int = DEFAULT_TTL_S):
        self.client = client
        self.ttl_s = ttl_s

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
        pipe = self.client.pipeline(transaction=False)
        pipe.hmget(key, "cashier_id", "terminal_id", "created_ms")
        pipe.expire(key, self.ttl_s, xx=True)
        (cashier_id, terminal_id, created_ms), _ = pipe.execute()
        if not cashier_id or not terminal_id:
            return None
        return Session(cashier_id, terminal_id, int(created_ms or 0))

    def close(self, token: str) -> bool:
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LEN:
            return False
        return bool(self.client.delete(session_key(token)))
