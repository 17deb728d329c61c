"""A small per-process cache for *displaying* hot balances.

`Ledger.balance()` / `available()` / `account()` may answer from here when the
entry is younger than `max_age_s` (default off). Decisions never read it: every
deduction, hold and capture is decided inside its Lua script on the live balance.
This process's own writes to an account drop its entry, so a terminal never shows
a balance older than its own last charge. Bounded: least recently used entries go
first once `max_entries` is reached. Thread-safe (the terminal reads from workers).
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any


class ReadCache:
    def __init__(self, max_age_s: float = 0.0, max_entries: int = 10_000):
        if max_age_s < 0 or max_entries < 1:
            raise ValueError("max_age_s must be >= 0 and max_entries >= 1")
        self.max_age_s = max_age_s
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple[str, str], tuple[float, Any]] = OrderedDict()
        # when each account was last written by this process: a read that started
        # before that must not be cached (it may hold the balance before the write)
        self._written_at: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.max_age_s > 0

    def get(self, kind: str, account_id: str) -> Any | None:
        if not self.enabled:
            return None
        with self._lock:
            entry = self._entries.get((kind, account_id))
            if entry is None or time.monotonic() - entry[0] > self.max_age_s:
                self.misses += 1
                return None
            self._entries.move_to_end((kind, account_id))
            self.hits += 1
            return entry[1]

    def put(self, kind: str, account_id: str, value: Any, read_started: float) -> None:
        """Store a value read at `read_started` (monotonic): its age counts from the read."""
        if not self.enabled:
            return
        with self._lock:
            if self._written_at.get(account_id, float("-inf")) >= read_started:
                return
            self._entries[(kind, account_id)] = (read_started, value)
            self._entries.move_to_end((kind, account_id))
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def invalidate(self, account_id: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            for kind in ("account", "balances"):
                self._entries.pop((kind, account_id), None)
            self._written_at[account_id] = time.monotonic()
            self._written_at.move_to_end(account_id)
            while len(self._written_at) > self.max_entries:
                self._written_at.popitem(last=False)
