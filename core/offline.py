"""Offline sales (issue 27): settling a charge a till made while it could not reach the
ledger, the shop's offline limits, and the offline debt an uncovered charge leaves.

`Ledger.offline_deduct` runs offline_deduct.lua: the part of the charge the available
balance covers is taken like a deduction, the rest becomes the account's offline debt
(account hash field `dt`; the balance never goes below zero). While a debt is open the
member cannot spend (deduct, hold: DEBT_OPEN) nor close the account; the next top-up pays
it first (`Result.debt_minor` of the credit). The server bounds what any till can settle
as offline, whatever it claims: per account and till, at most `offline_member_limit` per
window of `offline_max_duration_s` of sale times (OFFLINE_LIMIT_EXCEEDED past it).
"""
from __future__ import annotations

from dataclasses import dataclass

from . import validation as v
from .errors import InvalidRequest
from .keys import settings_key
from .result import Result

# the shop's offline settings when none is stored (cashierctl / the back office set them)
DEFAULT_OFFLINE_MEMBER_LIMIT_MINOR = 10_000        # ¥100 per member per till
DEFAULT_OFFLINE_TILL_BUDGET_MINOR = 200_000        # ¥2,000 per till
DEFAULT_OFFLINE_MAX_DURATION_S = 7_200             # 2 h
MAX_OFFLINE_DURATION_S = 86_400
MAX_MADE_AT_MS = 10 ** 15 - 1                      # 15 digits, as the script checks


@dataclass(frozen=True, slots=True)
class OfflineLimits:
    """The shop's offline settings (partition 0's, set on every partition)."""
    member_limit_minor: int = DEFAULT_OFFLINE_MEMBER_LIMIT_MINOR
    till_budget_minor: int = DEFAULT_OFFLINE_TILL_BUDGET_MINOR
    max_duration_s: int = DEFAULT_OFFLINE_MAX_DURATION_S


def check_made_at_ms(value: object) -> int:
    if type(value) is not int or not 0 < value <= MAX_MADE_AT_MS:
        raise InvalidRequest("made_at_ms", "must be a whole number of milliseconds since 1970")
    return value


class Offline:
    """The ledger's offline part (its methods are the Ledger's own)."""

    def __init__(self, ledger):
        self.ledger = ledger
        self.runner = ledger.runner

    def offline_deduct(self, account_id: str, amount_minor: int, *, txn_id: str, terminal_id: str,
                       made_at_ms: int, cashier_id: str | None = None, card_no: str | None = None) -> Result:
        """Settle a sale the till `terminal_id` made offline at `made_at_ms` (its clock), with
        the txn id it made (and saved) before the receipt printed. APPLIED whenever the
        server's bound allows: `balance_minor` after, `debt_minor` the offline debt recorded
        (0: the balance covered it all). A blocked card or a frozen account does not stop it
        (the sale happened; the journal entry says so: cb / fz). Declines: ACCOUNT_NOT_FOUND,
        ACCOUNT_CLOSED, CARD_NOT_THIS_ACCOUNT, OFFLINE_LIMIT_EXCEEDED. A replay answers the
        first decision."""
        v.check_amount(amount_minor)
        v.check_id(terminal_id, "terminal_id")
        v.check_id(card_no, "card_no", optional=True)
        check_made_at_ms(made_at_ms)
        part = self.ledger._common(account_id, txn_id, terminal_id, cashier_id)
        keys = [*part.deduct_keys(account_id, txn_id), part.offline_windows(account_id)]
        args = [txn_id, account_id, amount_minor, self.ledger.retention_s, terminal_id, cashier_id or "",
                card_no or "", made_at_ms]
        return self.runner.run("offline_deduct", "offline", keys, args, account_id, amount_minor, txn_id)

    def debt(self, account_id: str) -> int:
        """The account's open offline debt (minor units; 0 when none or no such account)."""
        v.check_id(account_id, "account_id")
        key = self.ledger.schema.partition_of(account_id).account(account_id)
        stored = self.runner.with_retry(self.runner.client.hget, key, "dt", txn_id=None)
        return int(stored) if stored else 0

    def offline_limits(self) -> OfflineLimits:
        raw = self.runner.with_retry(self.runner.client.hmget, settings_key(self.ledger.partitions[0]),
                                     "offline_member_limit", "offline_till_budget", "offline_max_duration_s",
                                     txn_id=None)
        member, budget, duration = raw
        return OfflineLimits(int(member) if member else DEFAULT_OFFLINE_MEMBER_LIMIT_MINOR,
                             int(budget) if budget else DEFAULT_OFFLINE_TILL_BUDGET_MINOR,
                             int(duration) if duration else DEFAULT_OFFLINE_MAX_DURATION_S)

    def set_offline_limits(self, *, txn_id: str, member_limit_minor: int | None = None,
                           till_budget_minor: int | None = None, max_duration_s: int | None = None,
                           terminal_id: str | None = None, cashier_id: str | None = None) -> list[Result]:
        """Set the given offline settings (each journaled as a setting, on every partition);
        the txn id of each is `txn_id` + '.m' / '.b' / '.d'. 0 for a limit or a budget: no
        offline sales."""
        wanted = []
        if member_limit_minor is not None:
            wanted.append(("m", "offline_member_limit",
                           v.check_amount(member_limit_minor, "offline_member_limit_minor", allow_zero=True)))
        if till_budget_minor is not None:
            wanted.append(("b", "offline_till_budget",
                           v.check_amount(till_budget_minor, "offline_till_budget_minor", allow_zero=True)))
        if max_duration_s is not None:
            if type(max_duration_s) is not int or not 0 < max_duration_s <= MAX_OFFLINE_DURATION_S:
                raise InvalidRequest("offline_max_duration_s", "must be a whole number of seconds, 1 to 86400")
            wanted.append(("d", "offline_max_duration_s", max_duration_s))
        v.check_id(txn_id, "txn_id")
        if len(txn_id) > 62:
            raise InvalidRequest("txn_id", "at most 62 characters (a suffix names each setting)")
        return [self.ledger.members.setting(name, str(value), txn_id=f"{txn_id}.{tag}", every_partition=True,
                                            terminal_id=terminal_id, cashier_id=cashier_id)
                for tag, name, value in wanted]
