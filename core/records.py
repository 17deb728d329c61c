"""The ledger's records: what a batch deduction asks (`DeductRequest`), what an account
holds (`AccountInfo`), what the journal says was applied (`JournalEntry`), and the answers
of the member and history reads (`Card`, `MemberMatch`, `Promotion`, `CloseResult`,
`PastOperation`).

Redis-free on purpose: the gateway's client (gateway/client.py) decodes into these on a
till that holds no Redis client, so they are the same classes on both sides."""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple

from .journal_codec import FIELD, decode_payload
from .kinds import REFUNDABLE_KINDS
from .result import Result, Status


class DeductRequest(NamedTuple):
    """One deduction of a `Ledger.deduct_many` batch (same fields as `Ledger.deduct`).
    Immutable; a NamedTuple rather than a frozen dataclass: a batch of 100 is built per
    call, and a tuple is made in a third of the time."""
    account_id: str
    amount_minor: int
    txn_id: str
    terminal_id: str | None = None
    cashier_id: str | None = None
    card_no: str | None = None         # the card the charge was presented with (see Ledger.deduct)


@dataclass(frozen=True, slots=True)
class AccountInfo:
    account_id: str
    balance_minor: int
    status: str                 # 'active' or 'frozen'
    created_ms: int
    last_journal_id: str
    holder_name: str = ""       # as given at open_account ('' when none)
    bonus_minor: int = 0        # the bonus bucket (part of balance_minor; never paid out)

    @property
    def principal_minor(self) -> int:
        """The principal bucket: what the member paid in and is owed back on close."""
        return self.balance_minor - self.bonus_minor


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One applied change, as the core scripts wrote it to the journal."""
    journal_id: str
    partition: int
    txn_id: str
    kind: str
    account_id: str
    amount_minor: int           # signed: negative for deductions
    balance_after_minor: int
    terminal_id: str
    cashier_id: str
    occurred_ms: int
    original_txn_id: str
    hold_minor: int = 0         # kind 'hold': the amount reserved
    expires_ms: int = 0         # kind 'hold': when the hold lapses (server ms)
    holder_name: str = ""       # open / restore: the account holder's name, when given
    phone: str = ""             # open / restore: the member's phone, when given
    card_no: str = ""           # card_issue / card_block: the card
    card_reason: str = ""       # card_block: lost | damaged | stolen | other
    setting: str = ""           # setting: spend_order | balance_cap | promo:<id>
    setting_value: str = ""     # setting: the new value ('' = removed)
    tenders: str = ""           # sale: the tenders besides the card ('cash:1350;wechat:2000', core.sales)
    sale_total_minor: int = 0   # sale: card leg + tenders
    change_minor: int = 0       # sale: the cash handed back
    tender_method: str = ""     # tender_refund: the tender given back (cash, wechat, ...)
    tender_minor: int = 0       # tender_refund: how much of it

    @classmethod
    def from_fields(cls, journal_id: str, partition: int, f: dict[str, str]) -> "JournalEntry":
        """Raises KeyError/ValueError on a malformed entry (the reconcile service quarantines those).
        `f`: the stream entry's fields, in either encoding (core.journal_codec.decode).
        The entry's time is its `ts` field where an older script wrote one, else the
        milliseconds of its stream id (what the scripts write now)."""
        if FIELD in f:
            f = decode_payload(f[FIELD])
        ts = int(f["ts"]) if "ts" in f else int(journal_id[:journal_id.index("-")])
        return cls(journal_id, partition, f["txn"], f["kind"], f["acct"], int(f["amt"]),
                   int(f["bal"]), f.get("term", ""), f.get("cash", ""), ts,
                   f.get("orig", ""), int(f.get("held", 0)), int(f.get("exp", 0)),
                   f.get("name", ""), f.get("ph", ""), f.get("card", ""), f.get("rsn", ""),
                   f.get("set", ""), f.get("val", ""), f.get("tn", ""), int(f.get("tot", 0)),
                   int(f.get("chg", 0)), f.get("m", "") if f["kind"] == "tender_refund" else "",
                   int(f.get("ta", 0)))


# ---------------------------------------------------------------- answers of the member layer

@dataclass(frozen=True, slots=True)
class Card:
    """A card number and what it resolves to. `status`: CARD_ACTIVE (use `account_id`),
    CARD_BLOCKED (reported lost/damaged; `account_id` says whose it was), CARD_NOT_FOUND or
    LOOKUP_AMBIGUOUS (the number is the card, account id or phone of several members:
    `candidates` says whose, as 'card:<account_id>', 'account:<account_id>',
    'phone:<account_id>'; `account_id` is then ''). `legacy` is True when the number is
    an account id used as a card (no card record)."""
    card_no: str
    status: Status
    account_id: str = ""
    reason: str = ""
    legacy: bool = False
    candidates: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return self.status is Status.CARD_ACTIVE


@dataclass(frozen=True, slots=True)
class MemberMatch:
    account_id: str
    holder_name: str
    phone: str
    balance_minor: int          # principal + bonus: what a charge can use
    status: str                 # active | frozen
    matched_by: str             # phone | name | initials
    bonus_minor: int = 0        # the part of balance_minor that is bonus (not paid out at 退卡)


@dataclass(frozen=True, slots=True)
class Promotion:
    """Top up at least `min_minor`, get `bonus_minor` on top (充100送20), from `starts_ms`
    (0: always) until before `ends_ms` (0: until removed), epoch milliseconds."""
    promo_id: str
    min_minor: int
    bonus_minor: int
    starts_ms: int = 0
    ends_ms: int = 0

    def in_force(self, at_ms: int) -> bool:
        return self.starts_ms <= at_ms and (not self.ends_ms or at_ms < self.ends_ms)


@dataclass(frozen=True, slots=True)
class CloseResult(Result):
    """`Result` of `close_account`: `payout_minor` is the cash to hand over (the principal),
    `bonus_forfeited_minor` the bonus that lapsed. Both replayed exactly on a retry."""
    payout_minor: int = 0
    bonus_forfeited_minor: int = 0


# ---------------------------------------------------------------- answers of the history reads

class RefundCheck(str, enum.Enum):
    """Whether a loaded operation can be refunded now, and if not, why."""
    REFUNDABLE = "REFUNDABLE"
    NOT_A_SALE = "NOT_A_SALE"                # a top-up, a refund, a hold...: nothing to give back
    NOT_APPLIED = "NOT_APPLIED"              # the sale was declined: no money was taken
    FULLY_REFUNDED = "FULLY_REFUNDED"
    OUTSIDE_WINDOW = "OUTSIDE_WINDOW"        # older than the shop's refund window


@dataclass(frozen=True, slots=True)
class PastOperation:
    """One operation as Redis still remembers it. Amounts in minor units, unsigned.

    Fields from the journal entry (terminal_id, cashier_id, the bucket deltas, method)
    are '' / None once the entry is trimmed (`has_entry` False).
    """
    txn_id: str
    kind: str
    account_id: str
    amount_minor: int
    status: str                      # a core.result.Status value
    balance_after_minor: int
    journal_id: str                  # '' for a decline
    occurred_ms: int                 # from the journal id (Redis server time); 0 for a decline
    refunded_minor: int = 0          # charges: how much has been refunded so far
    original_txn_id: str = ""        # refund / capture / void: the operation it names
    terminal_id: str = ""
    cashier_id: str = ""
    principal_delta_minor: int | None = None    # signed, when the journal says (members' pd)
    bonus_delta_minor: int | None = None        # signed (bd)
    method: str = ""                 # top-ups: cash, wechat, alipay, bank_card, other
    has_entry: bool = False
    record_ttl_s: int = -1           # seconds the record (and so a refund) has left; -1 unknown
    tenders: str = ""                # split sales: each other tender's part left to refund ('cash:1350;wechat:0')

    @property
    def applied(self) -> bool:
        return self.status == "APPLIED"

    @property
    def refundable_minor(self) -> int:
        if self.kind not in REFUNDABLE_KINDS or not self.applied:
            return 0
        return max(0, self.amount_minor - self.refunded_minor)

    def refund_check(self, *, now_ms: int, window_s: int | None = None) -> RefundCheck:
        """REFUNDABLE, or the reason why not. `window_s`: the shop's refund window when
        shorter than the retention (None: the retention, which the record's life is)."""
        if self.kind not in REFUNDABLE_KINDS:
            return RefundCheck.NOT_A_SALE
        if not self.applied:
            return RefundCheck.NOT_APPLIED
        if self.refundable_minor == 0:
            return RefundCheck.FULLY_REFUNDED
        if window_s is not None and self.occurred_ms and now_ms - self.occurred_ms > window_s * 1000:
            return RefundCheck.OUTSIDE_WINDOW
        return RefundCheck.REFUNDABLE
