"""Sign-in throttling of the back-office page: wrong passwords are counted per user name
and per client address; from the fifth in a row the key is locked for a time that doubles
with every further failure (30 s, 60 s, ... up to 15 min). While locked, even the right
password is refused, with a message saying how long to wait, and the refusal is logged.
A success clears the user's and the address's count.

Counted in this daemon's memory: each back-office daemon throttles on its own, so a shop
with N daemons allows at most N times the attempts (still a handful per quarter hour)."""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

log = logging.getLogger(__name__)

FREE_FAILURES = 4              # wrong passwords allowed before the first lock
FIRST_LOCK_S = 30.0
MAX_LOCK_S = 15 * 60.0
FORGET_AFTER_S = 24 * 3600.0   # a key quiet this long starts again from zero
MAX_KEYS = 10_000              # bound on memory: the oldest keys are forgotten first


@dataclass
class _Count:
    failures: int = 0
    locked_until: float = 0.0
    last_s: float = 0.0


class LoginThrottle:
    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self._counts: dict[tuple[str, str], _Count] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _keys(username: str, address: str) -> tuple[tuple[str, str], ...]:
        return (("user", (username or "")[:64].lower()), ("address", address or "?"))

    def wait_s(self, username: str, address: str) -> float:
        """Seconds until a sign-in for this user from this address may be tried (0: now)."""
        now = self.clock()
        with self._lock:
            waits = [c.locked_until - now for k in self._keys(username, address)
                     if (c := self._counts.get(k)) is not None]
        return max([0.0, *waits])

    def failed(self, username: str, address: str) -> None:
        now = self.clock()
        with self._lock:
            self._forget_old(now)
            for key in self._keys(username, address):
                c = self._counts.setdefault(key, _Count())
                if now - c.last_s > FORGET_AFTER_S:
                    c.failures = 0
                c.failures += 1
                c.last_s = now
                if c.failures > FREE_FAILURES:
                    lock_s = min(FIRST_LOCK_S * 2 ** (c.failures - FREE_FAILURES - 1), MAX_LOCK_S)
                    c.locked_until = now + lock_s
                    log.warning("back-office sign-in locked", extra={
                        "by": key[0], "failures": c.failures, "lock_s": lock_s,
                        "user": username[:64], "address": address})

    def succeeded(self, username: str, address: str) -> None:
        with self._lock:
            for key in self._keys(username, address):
                self._counts.pop(key, None)

    def _forget_old(self, now: float) -> None:
        if len(self._counts) < MAX_KEYS:
            return
        for key, _ in sorted(self._counts.items(), key=lambda kv: kv[1].last_s)[:MAX_KEYS // 10]:
            if self._counts[key].locked_until <= now:
                del self._counts[key]
