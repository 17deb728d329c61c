"""Member payment PINs (会员支付密码, issue 31 item 6): optional, one per member account,
asked for charges (deduct, hold) above the shop's threshold (the `member_pin_above`
shop setting, `Ledger.set_member_pin_threshold`; 0, the default, means every charge of a
member who has a PIN).

A member PIN is exactly 6 ASCII digits (the usual 支付密码). It is stored only as a
salted scrypt hash (the cashier PINs' scheme, core/cashiers.py), never returned by any
answer and never logged. Keys, each carrying the account's hash tag so that one
member's keys share a Cluster slot (they are not balances: no journal entry)::

    cs:mpin:{<account_id>}:h       hash   pin (scrypt hash), changed_ms
    cs:mpin:{<account_id>}:fails   string wrong PINs inside the window (PEXPIRE window)
    cs:mpin:{<account_id>}:lock    string present while the member's PIN is locked (PX)

Wrong PINs are counted atomically by core/lua/cashier_pin_attempt.lua (the same
counter-and-lock function as the cashiers'): 5 wrong within 15 minutes lock the
member's PIN until a supervisor resets it (`reset`: the gateway's
POST /v1/members/{id}/pin/reset with a supervisor's approval, or
`cashierctl member pin-reset ACCOUNT`), which removes the PIN and the lock; the member
then sets a new one. The lock's own expiry is long (30 days) so that it is the
supervisor who lifts it.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from .cashiers import SCRYPT_SALT_BYTES, hash_pin, verify_pin_hash
from .errors import InvalidRequest
from .validation import check_id

log = logging.getLogger(__name__)

KEY_PREFIX = "cs:mpin:"
MEMBER_PIN_DIGITS = 6
DEFAULT_MAX_FAILURES = 5
DEFAULT_FAILURE_WINDOW_S = 15 * 60
DEFAULT_LOCK_S = 30 * 24 * 3600          # until a supervisor resets it, in practice
THRESHOLD_SETTING = "member_pin_above"   # the shop setting (partition 0's cfg hash), minor units
_PIN_SCRIPT = "cashier_pin_attempt"
_DUMMY_HASH = hash_pin("000000", salt=b"\1" * SCRYPT_SALT_BYTES)


def hash_key(account_id: str) -> str:
    return f"{KEY_PREFIX}{{{account_id}}}:h"


def fails_key(account_id: str) -> str:
    return f"{KEY_PREFIX}{{{account_id}}}:fails"


def lock_key(account_id: str) -> str:
    return f"{KEY_PREFIX}{{{account_id}}}:lock"


def check_member_pin(pin: object, field: str = "member_pin") -> str:
    """A member PIN is exactly 6 ASCII digits. Raises InvalidRequest naming `field`
    (never echoing the PIN)."""
    if not isinstance(pin, str) or not pin:
        raise InvalidRequest(field, "must not be empty")
    if not (pin.isascii() and pin.isdigit()) or len(pin) != MEMBER_PIN_DIGITS:
        raise InvalidRequest(field, f"must be exactly {MEMBER_PIN_DIGITS} digits")
    return pin


@dataclass(frozen=True, slots=True)
class MemberPinCheck:
    """outcome: 'ok', 'no_pin' (the member has none), 'wrong_pin' (`attempts_left`
    before the lock) or 'locked' (a supervisor must reset it)."""
    outcome: str
    attempts_left: int = 0

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


class MemberPins:
    """Member payment PINs on a redis-py client (standalone or Cluster; decoded replies)."""

    def __init__(self, client, *, max_failures: int = DEFAULT_MAX_FAILURES,
                 failure_window_s: int = DEFAULT_FAILURE_WINDOW_S, lock_s: int = DEFAULT_LOCK_S, scripts=None):
        self.client = client
        self.max_failures = max_failures
        self.failure_window_s = failure_window_s
        self.lock_s = lock_s
        from .runner import LedgerRunner
        self.runner = LedgerRunner(client, scripts=scripts)

    def has_pin(self, account_id: str) -> bool:
        check_id(account_id, "account_id")
        return bool(self.client.hget(hash_key(account_id), "pin"))

    def _attempt(self, account_id: str, outcome: str) -> tuple[int, int]:
        fails, left_ms = self.runner.call_once(
            _PIN_SCRIPT, [fails_key(account_id), lock_key(account_id)],
            [outcome, self.max_failures, self.failure_window_s * 1000, self.lock_s * 1000])
        return int(fails), int(left_ms)

    def locked(self, account_id: str) -> bool:
        return self._attempt(account_id, "check")[1] > 0

    def set_pin(self, account_id: str, pin: str, pin_again: str) -> None:
        """Set the member's first PIN: both entries must match. A member who has a PIN
        changes it with `change_pin` (the old one checked)."""
        check_id(account_id, "account_id")
        check_member_pin(pin, "pin")
        check_member_pin(pin_again, "pin_again")
        if pin != pin_again:
            raise InvalidRequest("pin_again", "the two entries of the new PIN differ")
        if not self.client.hsetnx(hash_key(account_id), "pin", hash_pin(pin)):
            raise InvalidRequest("old_pin", "the member has a PIN already: give the old one to change it")
        self.client.hset(hash_key(account_id), "changed_ms", int(time.time() * 1000))
        log.info("member %s: payment PIN set", account_id)

    def change_pin(self, account_id: str, pin: str, pin_again: str) -> None:
        """Replace the PIN (the caller has checked the old one)."""
        check_member_pin(pin, "pin")
        check_member_pin(pin_again, "pin_again")
        if pin != pin_again:
            raise InvalidRequest("pin_again", "the two entries of the new PIN differ")
        self.client.hset(hash_key(account_id), mapping={"pin": hash_pin(pin),
                                                        "changed_ms": int(time.time() * 1000)})
        log.info("member %s: payment PIN changed", account_id)

    def verify(self, account_id: str, pin: str) -> MemberPinCheck:
        """Check the member's PIN; wrong ones count towards the lock, and a locked PIN is
        refused without looking at it. Malformed input raises InvalidRequest (not counted)."""
        check_id(account_id, "account_id")
        check_member_pin(pin)
        stored = self.client.hget(hash_key(account_id), "pin")
        if not stored:
            verify_pin_hash(pin, _DUMMY_HASH)
            return MemberPinCheck("no_pin")
        if self._attempt(account_id, "check")[1] > 0:
            return MemberPinCheck("locked")
        if verify_pin_hash(pin, stored):
            self._attempt(account_id, "ok")
            return MemberPinCheck("ok")
        fails, left_ms = self._attempt(account_id, "fail")
        log.warning("member %s: wrong payment PIN (%d of %d)", account_id, fails, self.max_failures)
        if left_ms > 0:
            return MemberPinCheck("locked")
        return MemberPinCheck("wrong_pin", attempts_left=self.max_failures - fails)

    def reset(self, account_id: str) -> bool:
        """Remove the member's PIN and lift its lock (a supervisor approved it); whether a
        PIN was set."""
        check_id(account_id, "account_id")
        had = bool(self.client.hdel(hash_key(account_id), "pin", "changed_ms"))
        self.client.delete(fails_key(account_id), lock_key(account_id))
        log.info("member %s: payment PIN reset (had one: %s)", account_id, had)
        return had
