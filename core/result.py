"""What a ledger operation answers: a `Status` and a `Result`.

Every way a request can end has its own status, so a terminal can say why in words
and an operator can count them. The first decision for a txn id is stored in Redis;
a retry gets the same `Result` back with `replayed=True`.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass


class Status(str, enum.Enum):
    APPLIED = "APPLIED"
    INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS"
    ACCOUNT_NOT_FOUND = "ACCOUNT_NOT_FOUND"
    ACCOUNT_FROZEN = "ACCOUNT_FROZEN"
    ACCOUNT_NOT_FROZEN = "ACCOUNT_NOT_FROZEN"      # unfreeze of an active account
    ACCOUNT_EXISTS = "ACCOUNT_EXISTS"              # open of an existing id with a new txn id
    ORIGINAL_NOT_FOUND = "ORIGINAL_NOT_FOUND"      # refund of an unknown / declined / other account's txn
    REFUND_EXCEEDS_ORIGINAL = "REFUND_EXCEEDS_ORIGINAL"
    BALANCE_LIMIT_EXCEEDED = "BALANCE_LIMIT_EXCEEDED"  # the balance would pass MAX_BALANCE_MINOR
    TOO_MANY_HOLDS = "TOO_MANY_HOLDS"              # 100 active holds on one account already
    HOLD_NOT_FOUND = "HOLD_NOT_FOUND"              # no such hold on this account (or older than the retention)
    HOLD_ALREADY_CAPTURED = "HOLD_ALREADY_CAPTURED"
    HOLD_ALREADY_VOIDED = "HOLD_ALREADY_VOIDED"
    HOLD_EXPIRED = "HOLD_EXPIRED"
    CAPTURE_EXCEEDS_HOLD = "CAPTURE_EXCEEDS_HOLD"
    ACCOUNT_HAS_HOLDS = "ACCOUNT_HAS_HOLDS"        # close_account while holds are active: resolve them first
    ACCOUNT_CLOSED = "ACCOUNT_CLOSED"              # the account was closed (退卡): nothing more on it
    CARD_ACTIVE = "CARD_ACTIVE"                    # resolve_card: the card is good, see account_id
    CARD_NOT_FOUND = "CARD_NOT_FOUND"              # no such card, and no account of that id
    CARD_BLOCKED = "CARD_BLOCKED"                  # reported lost/damaged: never reissued
    CARD_IN_USE = "CARD_IN_USE"                    # card_issue of a number issued already (or another account's id)
    CARD_NO_IS_PHONE = "CARD_NO_IS_PHONE"          # card_issue of a number that is another member's phone
    CARD_NOT_THIS_ACCOUNT = "CARD_NOT_THIS_ACCOUNT"  # a charge by card: the card is not one of the account's
    ACCOUNT_ID_TAKEN = "ACCOUNT_ID_TAKEN"          # open_account of an id that is a card number or a member's phone
    PHONE_TAKEN = "PHONE_TAKEN"                    # a phone that is another member's phone, card number or account id
    LOOKUP_AMBIGUOUS = "LOOKUP_AMBIGUOUS"          # resolve_card: the string is the identity of several members
    SETTING_NOT_FOUND = "SETTING_NOT_FOUND"        # removing a promotion / setting that is not set
    BALANCE_CAP_EXCEEDED = "BALANCE_CAP_EXCEEDED"  # a top-up would pass the shop's balance cap
    TENDER_NOT_IN_SALE = "TENDER_NOT_IN_SALE"      # tender_refund: the sale was not paid (partly) by that method
    CONFIRMATION_REQUIRED = "CONFIRMATION_REQUIRED"  # a charge above the shop's member-PIN threshold
    # without the member's payment PIN (decided by the gateway; never applied, never stored)
    DEBT_OPEN = "DEBT_OPEN"                        # the member owes an offline debt: no spending until a top-up pays it
    OFFLINE_LIMIT_EXCEEDED = "OFFLINE_LIMIT_EXCEEDED"  # an offline settlement past the server's bound
    # (offline_member_limit per account and till per window of offline_max_duration_s): not applied

    @property
    def applied(self) -> bool:
        return self is Status.APPLIED


@dataclass(frozen=True, slots=True)
class Result:
    """The decision on one request.

    `balance_minor` is the balance after the operation; for a decline, the balance
    when it was decided (0 for an unknown account). For `hold` it is the *available*
    balance (balance - active holds) after the hold. `journal_id` is the stream entry
    id of an applied change ('' for a decline).
    """
    status: Status
    balance_minor: int
    replayed: bool
    txn_id: str
    account_id: str
    kind: str
    amount_minor: int
    journal_id: str = ""
    debt_minor: int = 0

    @property
    def applied(self) -> bool:
        return self.status is Status.APPLIED


def status_of(stored: str | None) -> str | None:
    """The status of an idempotency record's 's' field (APPLIED is stored as 'A')."""
    return "APPLIED" if stored == "A" else stored
