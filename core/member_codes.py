"""Dynamic member codes (会员码, issue 31 item 7): a time-based one-time code (RFC 6238
TOTP, computed by pyotp) that the member's phone shows as a QR code. Scanned at the till it
names the member and confirms one charge in place of the member's payment PIN
(core/member_pins.py).

What the QR holds (the format the till's scanner reads)::

    MC1:<account_id>:<6 digits>

`member_code_text` makes it (the member's phone app is not ours: tests and the demo use
it). A code is good for ONE charge and for at most 60 s: codes step every 30 s and a code
is accepted during its own step and the next one only (never a later one, as pyotp's
`valid_window` would also accept a code of the next step). Each member's last used step
is recorded by core/lua/member_code_use.lua, atomically: a code of that step or an
earlier one is refused (`code_used`), except that the same step asked again by the same
txn id is accepted (the retry of a charge whose reply was lost before core decided it;
the retry of a charge core decided needs no confirmation at all). A code of the 10 steps
before those (5 minutes) is `code_expired`; any other is `wrong_code` and counts towards
the member's 5-strike lockout, the one the payment PIN uses (one counter for both: a
guesser gets 5 tries in all, PIN or code); `locked` then until a supervisor resets it
(`MemberPins.reset`, which lifts that lock). An expired or used code is not counted: it
is the member's own stale screen, not a guess.

Enrolment (`enrol`) draws a new random secret (160 bits, base32) and answers it once as
an otpauth:// URI (the QR the member's authenticator app scans); it is never answered
again, nor logged. Enrolling again replaces it (a lost phone is cut off). Keys, with the
account's hash tag, beside the member PIN's (they are confirmations, not balances: no
journal entry, and the gateway's ACL already grants these keys)::

    cs:mpin:{<account_id>}:code    hash   secret (base32), enrolled_ms   (no expiry)
    cs:mpin:{<account_id>}:step    string <last used step>:<txn id>     (PX, > a code's life)
"""
from __future__ import annotations

import hmac
import logging
import time
from dataclasses import dataclass

import pyotp

from .errors import InvalidRequest
from .member_pins import KEY_PREFIX, MemberPins
from .validation import check_id

log = logging.getLogger(__name__)

CODE_PREFIX = "MC1"
CODE_DIGITS = 6
STEP_S = 30
ACCEPTED_STEPS = 2                 # its own step and the next: at most 60 s
EXPIRED_STEPS = 10                 # older than that (5 min more): a wrong code, counted
STEP_MARK_KEEP_MS = (ACCEPTED_STEPS + 2) * STEP_S * 1000
SECRET_BYTES = 20                  # 160 bits, RFC 4226's recommendation
ISSUER = "Cashier"
_USE_SCRIPT = "member_code_use"


def code_key(account_id: str) -> str:
    return f"{KEY_PREFIX}{{{account_id}}}:code"


def step_key(account_id: str) -> str:
    return f"{KEY_PREFIX}{{{account_id}}}:step"


@dataclass(frozen=True, slots=True)
class ScannedCode:
    """A member code as scanned: whose, and the 6 digits."""
    account_id: str
    code: str


def is_member_code(text: object) -> bool:
    """Whether `text` looks like a scanned member code (its prefix), to route a scan."""
    return isinstance(text, str) and text.startswith(f"{CODE_PREFIX}:")


def parse_member_code(text: object, field: str = "member_code") -> ScannedCode:
    """`MC1:<account_id>:<6 digits>` split, or InvalidRequest naming `field`."""
    if not isinstance(text, str) or not text:
        raise InvalidRequest(field, "must not be empty")
    parts = text.strip().split(":")
    if len(parts) != 3 or parts[0] != CODE_PREFIX:
        raise InvalidRequest(field, f"must be {CODE_PREFIX}:<account id>:<{CODE_DIGITS} digits>")
    _, account_id, code = parts
    check_id(account_id, field)
    if not (code.isascii() and code.isdigit()) or len(code) != CODE_DIGITS:
        raise InvalidRequest(field, f"the code must be exactly {CODE_DIGITS} digits")
    return ScannedCode(account_id, code)


def member_code_text(secret: str, account_id: str, at_s: float | None = None) -> str:
    """What the member's phone shows as a QR at `at_s` (default now): tests and the demo."""
    totp = pyotp.TOTP(secret, digits=CODE_DIGITS, interval=STEP_S)
    return f"{CODE_PREFIX}:{account_id}:{totp.at(time.time() if at_s is None else at_s)}"


def secret_of_uri(uri: str) -> str:
    """The base32 secret of an otpauth:// URI `enrol` answered (tests, the demo)."""
    return pyotp.parse_uri(uri).secret


@dataclass(frozen=True, slots=True)
class MemberCodeCheck:
    """outcome: 'ok', 'not_enrolled', 'wrong_code' (`attempts_left` before the lock),
    'code_used', 'code_expired' or 'locked' (a supervisor must reset it)."""
    outcome: str
    attempts_left: int = 0

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


class MemberCodes:
    """Member codes on a redis-py client (standalone or Cluster; decoded replies). The
    lockout is `pins`' (one counter of wrong confirmations per member)."""

    def __init__(self, client, *, pins: MemberPins | None = None, scripts=None):
        self.client = client
        self.pins = pins or MemberPins(client, scripts=scripts)
        self.runner = self.pins.runner

    def enrolled(self, account_id: str) -> bool:
        check_id(account_id, "account_id")
        return bool(self.client.hget(code_key(account_id), "secret"))

    def enrol(self, account_id: str, *, holder: str = "") -> str:
        """A new secret for the member (replacing any earlier one): its otpauth:// URI, the
        only time it is answered."""
        check_id(account_id, "account_id")
        secret = pyotp.random_base32(length=SECRET_BYTES * 8 // 5)
        self.client.hset(code_key(account_id), mapping={"secret": secret, "enrolled_ms": int(time.time() * 1000)})
        self.client.delete(step_key(account_id))
        log.info("member %s: member code enrolled", account_id)
        return pyotp.TOTP(secret, digits=CODE_DIGITS, interval=STEP_S).provisioning_uri(
            name=holder or account_id, issuer_name=ISSUER)

    def remove(self, account_id: str) -> bool:
        """Remove the member's code (whether one was enrolled)."""
        check_id(account_id, "account_id")
        return bool(self.client.delete(code_key(account_id), step_key(account_id)))

    def verify(self, scanned: ScannedCode, txn_id: str, *, now_s: float | None = None) -> MemberCodeCheck:
        """Check a scanned code for the charge `txn_id` and use it up (see the module
        docstring). `now_s`: the time to check at (tests)."""
        account_id = scanned.account_id
        check_id(txn_id, "txn_id")
        secret = self.client.hget(code_key(account_id), "secret")
        if not secret:
            return MemberCodeCheck("not_enrolled")
        if self.pins.locked(account_id):
            return MemberCodeCheck("locked")
        totp = pyotp.TOTP(secret, digits=CODE_DIGITS, interval=STEP_S)
        now_step = int((time.time() if now_s is None else now_s) // STEP_S)
        matched = None
        for age in range(ACCEPTED_STEPS + EXPIRED_STEPS):
            step = now_step - age
            if hmac.compare_digest(totp.at(step * STEP_S), scanned.code):
                matched = (step, age)
                break
        if matched is None:
            fails, left_ms = self.pins._attempt(account_id, "fail")
            log.warning("member %s: wrong member code (%d of %d)", account_id, fails, self.pins.max_failures)
            if left_ms > 0:
                return MemberCodeCheck("locked")
            return MemberCodeCheck("wrong_code", attempts_left=self.pins.max_failures - fails)
        step, age = matched
        if age >= ACCEPTED_STEPS:
            return MemberCodeCheck("code_expired")
        outcome, _last = self.runner.call_once(_USE_SCRIPT, [step_key(account_id)],
                                               [step, txn_id, STEP_MARK_KEEP_MS])
        if outcome != "ok":
            return MemberCodeCheck("code_used")
        self.pins._attempt(account_id, "ok")
        return MemberCodeCheck("ok")
