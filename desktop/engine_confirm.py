"""The engine's side of the member's own confirmation of a charge (issue 31 items 6-8),
mixed into desktop/engine.py's `Engine`.

A charge (deduct, hold) above the shop's threshold of a member who has a payment PIN or
a member code is answered CONFIRMATION_REQUIRED by the gateway: nothing applied, nothing
stored there; the outbox row is resolved so. `confirm(op, member_pin=... | member_code=...)`
re-opens that row and re-sends it with the SAME txn id carrying the confirmation for
that one send: the PIN or code is kept in memory only, never in the outbox or a log
line, and dropped once sent. A re-send without an answer goes on without it (the usual
outbox rule): a charge the gateway decided is answered its first decision (a replay
needs no second confirmation), one it never received is CONFIRMATION_REQUIRED again,
and the till asks again. A refused PIN or code (wrong, locked, used, expired) resolves
the row as CONFIRMATION_REQUIRED again with `last_error` "<code>:<outcome>:<attempts
left>" (`confirmation_refusal` reads it back).

A scanned member code (`MC1:<account>:<digits>`, core/member_codes.py) is held for its
account (`hold_member_code`) and goes with the next charge of that account, so no PIN is
asked; it is dropped after that charge's first send or once older than a code lives.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from core.member_codes import ACCEPTED_STEPS, STEP_S

log = logging.getLogger(__name__)

CONFIRMATION_REQUIRED = "CONFIRMATION_REQUIRED"
CONFIRMABLE_KINDS = frozenset({"deduct", "hold"})
MEMBER_REFUSALS = frozenset({"member_pin_refused", "member_code_refused"})
HELD_CODE_MAX_AGE_S = ACCEPTED_STEPS * STEP_S      # a held scan older than a code lives is useless


@dataclass(frozen=True, slots=True)
class ConfirmationRefusal:
    """Why the member's PIN or code was refused: `kind` 'pin' or 'code', `outcome`
    (wrong_pin, wrong_code, locked, code_used, code_expired, not_enrolled, other_member)
    and the attempts left before the lock."""
    kind: str
    outcome: str
    attempts_left: int = 0


def needs_confirmation(op) -> bool:
    """Whether `op` was answered CONFIRMATION_REQUIRED (a charge to confirm and re-send)."""
    return op.kind in CONFIRMABLE_KINDS and op.status == CONFIRMATION_REQUIRED


def confirmation_refusal(op) -> ConfirmationRefusal | None:
    """The refusal of the PIN or code `op`'s last send carried, or None (it carried none)."""
    code, _, rest = (op.last_error or "").partition(":")
    if code not in MEMBER_REFUSALS:
        return None
    outcome, _, left = rest.partition(":")
    return ConfirmationRefusal("pin" if code == "member_pin_refused" else "code", outcome,
                               int(left) if left.isdigit() else 0)


class MemberConfirmations:
    """Mixed into Engine: the confirmations waiting for their one send."""

    def _init_confirmations(self) -> None:
        self._confirmations: dict[str, dict] = {}             # txn id -> {"member_pin"|"member_code": ...}
        self._held_codes: dict[str, tuple[str, float]] = {}   # account id -> (scanned code, when)

    def hold_member_code(self, account_id: str, code: str) -> None:
        """A member code scanned for `account_id`: it goes with that account's next charge."""
        self._held_codes[account_id] = (code, time.monotonic())

    def held_member_code(self, account_id: str) -> str:
        """The code held for `account_id` ('' when none, or too old to be accepted)."""
        code, at = self._held_codes.get(account_id, ("", 0.0))
        if code and time.monotonic() - at > HELD_CODE_MAX_AGE_S:
            self._held_codes.pop(account_id, None)
            return ""
        return code

    def drop_member_code(self, account_id: str) -> None:
        self._held_codes.pop(account_id, None)

    def set_member_pin(self, account_id: str, pin: str, pin_again: str, old_pin: str | None, on_done, on_error):
        """The member's new payment PIN (entered twice; `old_pin` when they have one), sent
        to the gateway on a worker and forgotten: its answer to on_done, a refusal to on_error."""
        return self.reads.run(lambda: self.ledger.set_member_pin(account_id, pin, pin_again, old_pin=old_pin),
                              on_done, on_error)

    def enrol_member_code(self, account_id: str, supervisor_id: str, supervisor_pin: str, on_done, on_error):
        """Enrol the member's member code with a supervisor's id and PIN (checked by the
        gateway): the answer (its `otpauth_uri`, shown once) to on_done."""
        return self.reads.run(lambda: self.ledger.enrol_member_code(account_id, supervisor_id=supervisor_id,
                                                                    supervisor_pin=supervisor_pin),
                              on_done, on_error)

    def reset_member_pin(self, account_id: str, supervisor_id: str, supervisor_pin: str, on_done, on_error):
        """A supervisor (id and PIN checked by the gateway) removes the member's payment PIN
        and lifts the lock of their confirmations."""
        return self.reads.run(lambda: self.ledger.reset_member_pin(account_id, supervisor_id=supervisor_id,
                                                                   supervisor_pin=supervisor_pin),
                              on_done, on_error)

    def confirm(self, op, *, member_pin: str | None = None, member_code: str | None = None):
        """Re-send `op` (answered CONFIRMATION_REQUIRED) with the same txn id and the
        member's PIN or code for that one send. Returns the re-opened Op (its answer comes
        as opResolved like any); raises Refused when the till may not send now."""
        if (member_pin is None) == (member_code is None):
            raise ValueError("give the member's PIN or a member code")
        self.check_can_start(op.account_id)
        reopened = self.outbox.reopen(op.txn_id)
        if reopened is None:
            raise ValueError(f"txn {op.txn_id} is not a charge waiting for the member's confirmation")
        self._confirmations[op.txn_id] = ({"member_pin": member_pin} if member_pin is not None
                                          else {"member_code": member_code})
        log.info("txn %s: re-sent with the member's %s", op.txn_id, "PIN" if member_pin is not None else "code")
        self._unresolved[op.txn_id] = reopened
        self.pendingChanged.emit(len(self._unresolved))
        self.ops.run(lambda: self._send(reopened, first=False), self._sent, self._worker_bug)
        return reopened

    def _confirmation_for(self, op, first: bool) -> dict:
        """Worker thread: what confirms `op`'s send (used up by it), {} when nothing does."""
        confirmation = self._confirmations.pop(op.txn_id, None)
        if confirmation is None and first and op.kind in CONFIRMABLE_KINDS:
            code = self.held_member_code(op.account_id)
            if code:
                self._held_codes.pop(op.account_id, None)
                confirmation = {"member_code": code}
        return confirmation or {}
