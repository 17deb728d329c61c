"""The cashier registry: who may sign in at a terminal, with which PIN and rights.

Cashiers are shared by every terminal, so they live in the central Redis as plain
hashes (they are not balances, so no ledger script is needed). Keys, each carrying
the cashier's hash tag so that the keys of one cashier share a Cluster slot::

    cs:cashier:{<id>}:h       hash   name, pin (scrypt hash), supervisor, can_top_up,
                                     disabled, created_ms, pin_changed_ms
    cs:cashier:{<id>}:fails   string PIN failures inside the window (PEXPIRE window)
    cs:cashier:{<id>}:lock    string present while the cashier is locked (PX lock time)
    cs:cashier:{index}:ids    set    every cashier id (for `list`)

PINs are 4 to 12 digits and are stored only as salted scrypt hashes
(``scrypt$n$r$p$salt$hash``, n=2**14, r=8, p=1, 16-byte random salt, 32-byte key:
about 50 ms and 16 MiB per check, which makes guessing offline slow). Failed PIN
checks are counted atomically by ``core/lua/cashier_pin_attempt.lua``; five failures
within 15 minutes lock the cashier for 5 minutes on every terminal. A supervisor's
PIN approval is a `SupervisorApproval` that can be used for one action only. A PIN
is never logged and never stored in the clear.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .errors import InvalidRequest
from .validation import check_id

if TYPE_CHECKING:       # redis-py: imported by the registry only (tills use this module's PIN rules)
    from .scripts import ScriptRunner

log = logging.getLogger(__name__)

KEY_PREFIX = "cs:cashier:"
INDEX_KEY = KEY_PREFIX + "{index}:ids"

SCRYPT_N = 2 ** 14
SCRYPT_R = 8
SCRYPT_P = 1
SCRYPT_SALT_BYTES = 16
SCRYPT_KEY_BYTES = 32
SCRYPT_MAXMEM_BYTES = 64 * 1024 * 1024
PIN_MIN_DIGITS = 4
PIN_MAX_DIGITS = 12
MAX_NAME_LEN = 80

DEFAULT_MAX_FAILURES = 5
DEFAULT_FAILURE_WINDOW_S = 15 * 60
DEFAULT_LOCK_S = 5 * 60

_PIN_SCRIPT = "cashier_pin_attempt"


def hash_key(cashier_id: str) -> str:
    return f"{KEY_PREFIX}{{{cashier_id}}}:h"


def fails_key(cashier_id: str) -> str:
    return f"{KEY_PREFIX}{{{cashier_id}}}:fails"


def lock_key(cashier_id: str) -> str:
    return f"{KEY_PREFIX}{{{cashier_id}}}:lock"


def check_pin(pin: object, field: str = "pin") -> str:
    """A PIN is 4 to 12 ASCII digits. Raises InvalidRequest (never echoing the PIN)."""
    if not isinstance(pin, str) or not pin:
        raise InvalidRequest(field, "must not be empty")
    if not (pin.isascii() and pin.isdigit()):
        raise InvalidRequest(field, "must be digits only")
    if not PIN_MIN_DIGITS <= len(pin) <= PIN_MAX_DIGITS:
        raise InvalidRequest(field, f"must be {PIN_MIN_DIGITS} to {PIN_MAX_DIGITS} digits")
    return pin


def hash_pin(pin: str, *, salt: bytes | None = None) -> str:
    """The stored form of a PIN: ``scrypt$n$r$p$salt_b64$key_b64``."""
    salt = salt or os.urandom(SCRYPT_SALT_BYTES)
    key = hashlib.scrypt(pin.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P,
                         maxmem=SCRYPT_MAXMEM_BYTES, dklen=SCRYPT_KEY_BYTES)
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${b64(salt)}${b64(key)}"


def verify_pin_hash(pin: str, stored: str) -> bool:
    """Constant-time check of `pin` against a stored hash (parameters read from it)."""
    try:
        scheme, n, r, p, salt_b64, key_b64 = stored.split("$")
        if scheme != "scrypt":
            return False
        salt, key = base64.b64decode(salt_b64), base64.b64decode(key_b64)
        got = hashlib.scrypt(pin.encode(), salt=salt, n=int(n), r=int(r), p=int(p),
                             maxmem=SCRYPT_MAXMEM_BYTES, dklen=len(key))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, key)


# A hash of nothing in particular, checked against for unknown ids so that an unknown
# id takes as long to refuse as a wrong PIN (no id enumeration by timing).
_DUMMY_HASH = hash_pin("0000", salt=b"\0" * SCRYPT_SALT_BYTES)


@dataclass(frozen=True, slots=True)
class Cashier:
    cashier_id: str
    name: str
    supervisor: bool
    can_top_up: bool
    disabled: bool
    created_ms: int

    @classmethod
    def from_hash(cls, cashier_id: str, h: dict[str, str]) -> "Cashier":
        return cls(cashier_id, h.get("name", ""), h.get("supervisor") == "1",
                   h.get("can_top_up") == "1", h.get("disabled") == "1", int(h.get("created_ms", 0)))


@dataclass(frozen=True, slots=True)
class SignIn:
    """The answer to a PIN check.

    outcome: 'ok', 'unknown' (no such cashier), 'disabled', 'locked' (too many
    failures; `locked_s` left) or 'wrong_pin' (`attempts_left` before the lock).
    'unknown' and 'wrong_pin' should be shown to a cashier alike.
    """
    outcome: str
    cashier: Cashier | None = None
    locked_s: int = 0
    attempts_left: int = 0

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


@dataclass(slots=True)
class SupervisorApproval:
    """A supervisor's yes to one action. `use()` succeeds once; any later use raises."""
    supervisor_id: str
    granted_ms: int
    _used: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def used(self) -> bool:
        return self._used

    def use(self) -> str:
        """Consume the approval; returns the supervisor's id. Raises if already used."""
        with self._lock:
            if self._used:
                raise InvalidRequest("supervisor_pin", "this approval was already used; ask again")
            self._used = True
        return self.supervisor_id


class CashierRegistry:
    """Cashiers on a redis-py client (standalone or Cluster; decoded replies)."""

    def __init__(self, client, *, max_failures: int = DEFAULT_MAX_FAILURES,
                 failure_window_s: int = DEFAULT_FAILURE_WINDOW_S, lock_s: int = DEFAULT_LOCK_S,
                 scripts: ScriptRunner | None = None):
        if max_failures < 1 or failure_window_s < 1 or lock_s < 1:
            raise ValueError("max_failures, failure_window_s and lock_s must be positive")
        self.client = client
        self.max_failures = max_failures
        self.failure_window_s = failure_window_s
        self.lock_s = lock_s
        # the ledger's one function library (a library of the PIN script alone would be
        # another library, which the gateway's user may not load)
        from .runner import LedgerRunner
        self.runner = LedgerRunner(client, scripts=scripts)
        self.scripts = self.runner.scripts

    # ---------------------------------------------------------------- management

    def add(self, cashier_id: str, name: str, pin: str, *, supervisor: bool = False,
            can_top_up: bool = False) -> Cashier:
        """Create a cashier. Raises InvalidRequest for bad input or an existing id."""
        check_id(cashier_id, "cashier_id")
        name = (name or "").strip()
        if not name or len(name) > MAX_NAME_LEN:
            raise InvalidRequest("name", f"must be 1 to {MAX_NAME_LEN} characters")
        check_pin(pin)
        now_ms = int(time.time() * 1000)
        fields = {"name": name, "pin": hash_pin(pin), "supervisor": int(supervisor),
                  "can_top_up": int(can_top_up), "disabled": 0, "created_ms": now_ms,
                  "pin_changed_ms": now_ms}
        # HSETNX on 'name' claims the id atomically; the rest follows.
        if not self.client.hsetnx(hash_key(cashier_id), "name", name):
            raise InvalidRequest("cashier_id", f"cashier {cashier_id!r} already exists")
        self.client.hset(hash_key(cashier_id), mapping=fields)
        self.client.sadd(INDEX_KEY, cashier_id)
        log.info("cashier %s added (supervisor=%s, can_top_up=%s)", cashier_id, supervisor, can_top_up)
        return self.get(cashier_id)

    def get(self, cashier_id: str) -> Cashier | None:
        check_id(cashier_id, "cashier_id")
        h = self.client.hgetall(hash_key(cashier_id))
        return Cashier.from_hash(cashier_id, h) if h.get("pin") else None

    def _require(self, cashier_id: str) -> Cashier:
        cashier = self.get(cashier_id)
        if cashier is None:
            raise InvalidRequest("cashier_id", f"no cashier {cashier_id!r}")
        return cashier

    def list(self) -> list[Cashier]:
        ids = sorted(self.client.smembers(INDEX_KEY))
        return [c for c in (self.get(i) for i in ids) if c is not None]

    def set_disabled(self, cashier_id: str, disabled: bool) -> Cashier:
        self._require(cashier_id)
        self.client.hset(hash_key(cashier_id), "disabled", int(disabled))
        log.info("cashier %s %s", cashier_id, "disabled" if disabled else "enabled")
        return self._require(cashier_id)

    def set_rights(self, cashier_id: str, *, supervisor: bool | None = None,
                   can_top_up: bool | None = None) -> Cashier:
        self._require(cashier_id)
        changes = {k: int(v) for k, v in (("supervisor", supervisor), ("can_top_up", can_top_up))
                   if v is not None}
        if changes:
            self.client.hset(hash_key(cashier_id), mapping=changes)
        return self._require(cashier_id)

    def reset_pin(self, cashier_id: str, new_pin: str) -> Cashier:
        """Set a new PIN and lift any lock (the back office has checked who asks)."""
        self._require(cashier_id)
        check_pin(new_pin)
        self.client.hset(hash_key(cashier_id), mapping={
            "pin": hash_pin(new_pin), "pin_changed_ms": int(time.time() * 1000)})
        self.client.delete(fails_key(cashier_id), lock_key(cashier_id))
        log.info("cashier %s: PIN reset", cashier_id)
        return self._require(cashier_id)

    # ---------------------------------------------------------------- PIN checks

    def _attempt(self, cashier_id: str, outcome: str) -> tuple[int, int]:
        # one attempt, redis-py's errors as they are: the till reports an outage itself
        fails, left_ms = self.runner.call_once(
            _PIN_SCRIPT, [fails_key(cashier_id), lock_key(cashier_id)],
            [outcome, self.max_failures, self.failure_window_s * 1000, self.lock_s * 1000])
        return int(fails), int(left_ms)

    def verify(self, cashier_id: str, pin: str) -> SignIn:
        """Check a PIN. Failures count towards the lock; a locked cashier is refused
        without looking at the PIN. Raises InvalidRequest for a malformed id or PIN
        (malformed input is not counted as a guess)."""
        check_id(cashier_id, "cashier_id")
        check_pin(pin)
        h = self.client.hgetall(hash_key(cashier_id))
        if not h.get("pin"):
            verify_pin_hash(pin, _DUMMY_HASH)
            return SignIn("unknown")
        cashier = Cashier.from_hash(cashier_id, h)
        if cashier.disabled:
            return SignIn("disabled", cashier)
        _, left_ms = self._attempt(cashier_id, "check")
        if left_ms > 0:
            return SignIn("locked", cashier, locked_s=-(-left_ms // 1000))
        if verify_pin_hash(pin, h["pin"]):
            self._attempt(cashier_id, "ok")
            return SignIn("ok", cashier)
        fails, left_ms = self._attempt(cashier_id, "fail")
        log.warning("cashier %s: wrong PIN (%d of %d)", cashier_id, fails, self.max_failures)
        if left_ms > 0:
            return SignIn("locked", cashier, locked_s=-(-left_ms // 1000))
        return SignIn("wrong_pin", cashier, attempts_left=self.max_failures - fails)

    def approve(self, supervisor_id: str, pin: str) -> tuple[SignIn, SupervisorApproval | None]:
        """A supervisor's PIN approval for ONE action. The approval is None unless the
        PIN is right and the cashier is an enabled supervisor ('not_supervisor')."""
        signin = self.verify(supervisor_id, pin)
        if not signin.ok:
            return signin, None
        if not signin.cashier.supervisor:
            return SignIn("not_supervisor", signin.cashier), None
        return signin, SupervisorApproval(supervisor_id, int(time.time() * 1000))
