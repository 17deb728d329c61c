"""Holds, a part of `Ledger` (whose methods of the same names these are): reserve funds
(`hold`), take up to the held amount (`capture`) or release it (`void`), and journal the
release of expired holds (`expire_holds`, the reconcile service's). Each is one Lua script
(hold.lua, capture.lua, void.lua, expire_holds.lua) run through the ledger's runner, with
the ledger's own request checks and keys.
"""
from __future__ import annotations

import time

from . import validation as v
from .errors import InvalidRequest
from .result import Result


class Holds:
    """The hold operations of a `core.Ledger`, built on its runner, key schema and retention."""

    def __init__(self, ledger):
        self.ledger = ledger
        self.runner = ledger.runner

    def hold(self, account_id: str, amount_minor: int, *, txn_id: str, ttl_s: int,
             terminal_id: str | None = None, cashier_id: str | None = None,
             card_no: str | None = None) -> Result:
        """Reserve funds for up to `ttl_s` seconds (at most the retention).

        The balance stays; the available balance drops. `Result.balance_minor` is the
        available balance after the hold. Resolve it with `capture` or `void`; if
        neither comes it stops counting at its expiry by itself. `card_no`: the card it
        was presented with, checked as by `deduct` (CARD_BLOCKED, CARD_NOT_THIS_ACCOUNT).
        """
        if isinstance(ttl_s, bool) or not isinstance(ttl_s, int) or not 1 <= ttl_s <= self.ledger.retention_s:
            raise InvalidRequest("ttl_s", f"must be whole seconds from 1 to the retention ({self.ledger.retention_s})")
        v.check_id(card_no, "card_no", optional=True)
        return self.ledger._balance_op("hold", account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                extra_keys=[*self.ledger._hold_keys(account_id), *self.ledger._card_list_keys(account_id)],
                                extra_args=[ttl_s, card_no or ""])

    def capture(self, hold_txn_id: str, amount_minor: int, *, txn_id: str,
                account_id: str | None = None, terminal_id: str | None = None,
                cashier_id: str | None = None) -> Result:
        """Take up to the held amount; the rest of the hold is released. A hold resolves once.

        `account_id` is optional: without it the account is looked up (one extra read)
        from this txn's own record or else the hold's. When neither exists the call
        raises InvalidRequest('hold_txn_id', ...) and decides nothing: a decline is only
        ever answered when it is stored in the account's partition, so one txn id never
        gets two decisions (a HOLD_NOT_FOUND now and an APPLIED once the hold appears).
        """
        return self._resolve_hold("capture", hold_txn_id, amount_minor, txn_id, account_id,
                                  terminal_id, cashier_id)

    def void(self, hold_txn_id: str, *, txn_id: str, account_id: str | None = None,
             terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Release a hold without taking anything (`account_id` as for `capture`)."""
        return self._resolve_hold("void", hold_txn_id, 0, txn_id, account_id, terminal_id, cashier_id)

    def _resolve_hold(self, script, hold_txn_id, amount_minor, txn_id, account_id, terminal_id,
                      cashier_id) -> Result:
        v.check_id(hold_txn_id, "hold_txn_id")
        v.check_id(txn_id, "txn_id")
        if account_id is None:
            account_id = self.ledger.reads.hold_resolution_account(script, hold_txn_id, txn_id)
            if account_id is None:
                raise InvalidRequest("hold_txn_id", f"no hold {hold_txn_id!r} was found (never placed, or "
                                     "older than the retention); nothing was decided. Give account_id to "
                                     "have the decline recorded")
        part = self.ledger.schema.partition_of(account_id) if isinstance(account_id, str) else None
        extra = [*self.ledger._hold_keys(account_id), part.txn(hold_txn_id), *self.ledger._settings_keys(account_id)] \
            if part else []
        return self.ledger._balance_op(script, account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                allow_zero=script == "void", extra_keys=extra, extra_args=[hold_txn_id])

    def expire_holds(self, account_id: str, *, limit: int = 100, terminal_id: str = "") -> int:
        """Journal the release of this account's expired holds; returns how many.

        Not needed for correctness (expired holds stop counting by themselves); the
        reconcile service calls it so the database learns of each release.
        """
        v.check_id(account_id, "account_id")
        part = self.ledger.schema.partition_of(account_id)
        expired = self.runner.with_retry(self.runner.client.zrangebyscore, part.hold_expiries(account_id),
                                         "-inf", int(time.time() * 1000), 0, limit, txn_id=None)
        if not expired:
            return 0
        keys = [part.account(account_id), part.hold_expiries(account_id), part.journal,
                part.holds(account_id), part.hold_expiries(account_id),
                *(part.txn(hold) for hold in expired)]
        args = ["-", account_id, "0", "", terminal_id, "", *expired]
        reply = self.runner.with_retry(self.runner.script, "expire_holds", keys, args, txn_id=None)
        if reply and reply[0] == "INVALID":
            raise InvalidRequest(*reply[3].split(": ", 1))
        return int(reply[0])
