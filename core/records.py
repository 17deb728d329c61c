"""The ledger's records: what a batch deduction asks (`DeductRequest`), what an account
holds (`AccountInfo`) and what the journal says was applied (`JournalEntry`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class DeductRequest(NamedTuple):
    """One deduction of a `Ledger.deduct_many` batch (same fields as `Ledger.deduct`).
    Immutable; a NamedTuple rather than a frozen dataclass: a batch of 100 is built per
    call, and a tuple is made in a third of the time."""
    account_id: str
    amount_minor: int
    txn_id: str
    terminal_id: str | None = None
    cashier_id: str | None = None


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
    # Legacy: fields of entries journaled by split accounts before they were removed
    # (docs/ledger.md). No script writes them any more; old streams may still hold them.
    root_id: str = ""
    peer_id: str = ""
    transfer_id: str = ""
    shards: int = 0
    holder_name: str = ""       # open / restore: the account holder's name, when given
    phone: str = ""             # open / restore: the member's phone, when given
    card_no: str = ""           # card_issue / card_block: the card
    card_reason: str = ""       # card_block: lost | damaged | stolen | other
    setting: str = ""           # setting: spend_order | balance_cap | promo:<id>
    setting_value: str = ""     # setting: the new value ('' = removed)

    @classmethod
    def from_fields(cls, journal_id: str, partition: int, f: dict[str, str]) -> "JournalEntry":
        """Raises KeyError/ValueError on a malformed entry (the reconcile service quarantines those).
        The entry's time is its `ts` field where an older script wrote one, else the
        milliseconds of its stream id (what the scripts write now)."""
        ts = int(f["ts"]) if "ts" in f else int(journal_id[:journal_id.index("-")])
        return cls(journal_id, partition, f["txn"], f["kind"], f["acct"], int(f["amt"]),
                   int(f["bal"]), f.get("term", ""), f.get("cash", ""), ts,
                   f.get("orig", ""), int(f.get("held", 0)), int(f.get("exp", 0)),
                   f.get("root", ""), f.get("peer", ""), f.get("xfer", ""), int(f.get("shards", 0)),
                   f.get("name", ""), f.get("ph", ""), f.get("card", ""), f.get("rsn", ""),
                   f.get("set", ""), f.get("val", ""))

    @property
    def account_root(self) -> str:
        """The account this entry counts towards: account_id (root_id only on legacy split entries)."""
        return self.root_id or self.account_id
