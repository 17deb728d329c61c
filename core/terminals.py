"""Terminal identity: which tills may talk to the gateway, each with its own credential
(in core since issue 29: the gateway checks tokens, cashierctl and the back office enrol
and revoke, all from here).

`cashierctl terminal enroll T1` makes a random token ``T1.<43 url-safe characters>``
(256 random bits) and prints it once; Redis keeps only its SHA-256. Every gateway request
carries it as ``Authorization: Bearer <token>``, and the request's terminal id is the one
the token was issued to (a body naming another terminal is refused). Revocation marks the
record; gateways cache a checked token for at most `CACHE_S` seconds, so a revoked
terminal is refused on every gateway within that time. Keys (one place, each carrying a
hash tag so one terminal's keys share a Cluster slot)::

    cs:terminal:{<id>}:h        hash  sha256, enrolled_ms, revoked_ms, last_seen_ms, version, name
    cs:terminal:{index}:ids     set   every enrolled terminal id (for `list`)
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass

from .errors import InvalidRequest
from .validation import check_id

KEY_PREFIX = "cs:terminal:"
INDEX_KEY = KEY_PREFIX + "{index}:ids"
CACHE_S = 2.0                 # revocation reaches every gateway within this (the issue allows 5 s)
LAST_SEEN_EVERY_S = 5.0       # last_seen/version are written at most this often per terminal
MAX_VERSION_LEN = 40


def terminal_key(terminal_id: str) -> str:
    return f"{KEY_PREFIX}{{{terminal_id}}}:h"


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Terminal:
    terminal_id: str
    enrolled_ms: int
    revoked_ms: int
    last_seen_ms: int
    version: str

    @property
    def revoked(self) -> bool:
        return self.revoked_ms > 0

    @classmethod
    def from_hash(cls, terminal_id: str, h: dict) -> "Terminal":
        return cls(terminal_id, int(h.get("enrolled_ms", 0)), int(h.get("revoked_ms", 0)),
                   int(h.get("last_seen_ms", 0)), h.get("version", ""))


class TerminalRegistry:
    """Terminals on a redis-py client (decoded replies)."""

    def __init__(self, client, *, cache_s: float = CACHE_S):
        self.client = client
        self.cache_s = min(float(cache_s), 5.0)
        self._cache: dict[str, tuple[str, float]] = {}     # token sha -> (terminal id, checked at)
        self._seen: dict[str, float] = {}
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- management (cashierctl)

    def enroll(self, terminal_id: str) -> str:
        """Enroll (or re-enroll: the old token stops working) `terminal_id`; returns the
        token, which is shown once and never stored."""
        check_id(terminal_id, "terminal_id")
        token = f"{terminal_id}.{secrets.token_urlsafe(32)}"
        now_ms = int(time.time() * 1000)
        self.client.hset(terminal_key(terminal_id), mapping={
            "sha256": token_sha256(token), "enrolled_ms": now_ms, "revoked_ms": 0})
        self.client.sadd(INDEX_KEY, terminal_id)
        return token

    def revoke(self, terminal_id: str) -> Terminal:
        check_id(terminal_id, "terminal_id")
        if not self.client.exists(terminal_key(terminal_id)):
            raise InvalidRequest("terminal_id", f"no terminal {terminal_id!r} is enrolled")
        self.client.hset(terminal_key(terminal_id), mapping={"revoked_ms": int(time.time() * 1000),
                                                            "sha256": ""})
        return self.get(terminal_id)

    def get(self, terminal_id: str) -> Terminal | None:
        h = self.client.hgetall(terminal_key(terminal_id))
        return Terminal.from_hash(terminal_id, h) if h else None

    def list(self) -> list[Terminal]:
        return [t for t in (self.get(i) for i in sorted(self.client.smembers(INDEX_KEY))) if t is not None]

    # ---------------------------------------------------------------- the gateway's check

    def authenticate(self, token: str, version: str = "") -> str | None:
        """The terminal id the token was issued to, or None (unknown, malformed, revoked)."""
        if not isinstance(token, str) or len(token) > 200:
            return None
        terminal_id, dot, _ = token.rpartition(".")
        if not dot:
            return None
        try:
            check_id(terminal_id, "terminal_id")
        except InvalidRequest:
            return None
        sha = token_sha256(token)
        now = time.monotonic()
        with self._lock:
            cached = self._cache.get(sha)
        if cached is not None and now - cached[1] < self.cache_s:
            return cached[0]
        stored, revoked = self.client.hmget(terminal_key(terminal_id), "sha256", "revoked_ms")
        if not stored or (revoked and revoked != "0") or not hmac.compare_digest(stored, sha):
            with self._lock:
                self._cache.pop(sha, None)
            return None
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[sha] = (terminal_id, now)
            due = now - self._seen.get(terminal_id, float("-inf")) >= LAST_SEEN_EVERY_S
            if due:
                self._seen[terminal_id] = now
        if due:
            self.client.hset(terminal_key(terminal_id), mapping={
                "last_seen_ms": int(time.time() * 1000), "version": (version or "")[:MAX_VERSION_LEN]})
        return terminal_id
