"""Operation kinds: the one table of what each kind of journal entry / outbox row is.

Every other module (the till's outbox, report, receipts and customer display, the
history reader, the reconcile service's book) reads the sets it needs from here instead
of writing its own tuple of kind names. A new kind is one row below.

Columns:
- `letter`: the kind's letter in a till-made txn id `<terminal>-<letter>-<32 hex>`
  ("" for kinds a till never starts).
- `group`: "money" (a till's ledger call about money), "member" (a till's member
  operation: open, new card, 退卡), "book" (a record with no account: the Z record),
  "account" (status changes), "card", "setting", "internal" (made by the system).
- `moves_money`: changes a balance on the till's shift report (a hold only reserves).
- `refundable`: an applied one can be refunded (against its own amount).
- `receipt`: prints a receipt on the till.
- `customer_display`: shown on the customer-facing display.
- `splits_buckets`: the script decides its principal/bonus split.
- `hold_resolution`: the status it gives the hold it names ("" if it resolves none).
- `account_status`: the account status it sets ("" if it leaves the status alone).
- `book_section`: where the daily statement counts it ("topup", "spend", "refund",
  "close", "correction", or "").
- `names_original`: its request names an earlier txn (the charge refunded, the hold
  captured or voided, the duplicate compensated): the fourth field of its idempotency
  record's fingerprint (`kind|account|amount|original`).
- `amount_sign`: the sign its journal entries' amount must have (the verifier checks
  it): "+" positive, "-" negative, "0" zero, "-0" never positive, "+0" never negative,
  "+-" either, "" never journaled under this name.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    letter: str = ""
    group: str = "internal"
    moves_money: bool = False
    refundable: bool = False
    receipt: bool = False
    customer_display: bool = False
    splits_buckets: bool = False
    hold_resolution: str = ""
    account_status: str = ""
    book_section: str = ""
    names_original: bool = False
    amount_sign: str = "0"


TABLE: tuple[Kind, ...] = (
    Kind("deduct", "d", "money", moves_money=True, refundable=True, receipt=True, customer_display=True,
         splits_buckets=True, book_section="spend", amount_sign="-"),
    Kind("capture", "k", "money", moves_money=True, refundable=True, receipt=True, customer_display=True,
         splits_buckets=True, hold_resolution="captured", book_section="spend", names_original=True,
         amount_sign="-"),
    Kind("refund", "r", "money", moves_money=True, receipt=True, customer_display=True, splits_buckets=True,
         book_section="refund", names_original=True, amount_sign="+"),
    # a top-up that only paid an offline debt journals amount 0 (the balance got nothing)
    Kind("credit", "c", "money", moves_money=True, receipt=True, customer_display=True, book_section="topup",
         amount_sign="+0"),
    # a sale made while the till could not reach the ledger, settled on reconnect
    # (offline_deduct.lua): 'offline' when the balance covered it, else 'offline_debt' (the
    # covered part taken, the rest recorded as the account's offline debt)
    # refundable like a deduct when the balance covered it (refund.lua refuses one that left a debt)
    Kind("offline", "f", "money", moves_money=True, refundable=True, receipt=True, customer_display=True,
         splits_buckets=True, book_section="spend", amount_sign="-"),
    Kind("offline_debt", "", "internal", moves_money=True, splits_buckets=True, book_section="spend",
         amount_sign="-0"),
    # a split-tender sale (issue 31): the card leg moves the balance (amount = minus it), the
    # other tenders ride in the same entry (field tn); its card leg is refunded by 'refund'
    Kind("sale", "s", "money", moves_money=True, refundable=True, receipt=True, customer_display=True,
         splits_buckets=True, book_section="spend", amount_sign="-"),
    # a sale's non-card tender given back (cash as cash): journaled with amount 0 (the card's
    # balance does not move), the tender's method and amount in fields m / ta; it moves the
    # shift's cash (or WeChat...) money, so it is a money row of the shift report
    Kind("tender_refund", "t", "money", moves_money=True, receipt=True, names_original=True),
    Kind("hold", "h", "money"),                                   # reserves; moves nothing until captured
    Kind("void", "v", "money", hold_resolution="voided", names_original=True),
    # open: an opening balance is a migrated figure, counted with the member operations on the till
    Kind("open", "o", "member", account_status="active", book_section="topup", amount_sign="+-"),
    Kind("card_replace", "n", "member", amount_sign=""),     # journaled as card_block + card_issue
    Kind("close", "x", "member", moves_money=True, receipt=True, account_status="closed", book_section="close",
         amount_sign="-0"),
    Kind("shift_close", "", "book"),
    Kind("audit", "", "book"),              # a back-office management action (core/audit.py); never a till's
    Kind("freeze", "", "account", account_status="frozen"),
    Kind("unfreeze", "", "account", account_status="active"),
    Kind("member_update", "", "account"),   # a new name and/or phone (the back office, issue 29)
    Kind("card_issue", "", "card"),
    Kind("card_block", "", "card"),
    Kind("setting", "", "setting"),
    Kind("hold_expire", "", "internal", hold_resolution="expired"),
    Kind("compensate", "", "internal", moves_money=True, book_section="correction", names_original=True,
         amount_sign="+"),
    Kind("restore", "", "internal", moves_money=True),
)

KINDS: dict[str, Kind] = {k.name: k for k in TABLE}


def kinds_where(**wanted) -> tuple[str, ...]:
    """Names of the kinds whose columns equal `wanted`, in table order:
    `kinds_where(receipt=True)`, `kinds_where(group="money")`."""
    return tuple(k.name for k in TABLE if all(getattr(k, col) == value for col, value in wanted.items()))


# txn-id letters of the kinds a till starts
TXN_LETTERS: dict[str, str] = {k.name: k.letter for k in TABLE if k.letter}
# the sets most readers want, named once
MONEY_KINDS = kinds_where(group="money")               # a till's ledger calls about money
MEMBER_KINDS = kinds_where(group="member")             # a till's member operations
TILL_KINDS = MONEY_KINDS + MEMBER_KINDS + tuple(k for k in kinds_where(group="book") if k != "audit")  # outbox kinds
REFUNDABLE_KINDS = kinds_where(refundable=True)
RECEIPT_KINDS = kinds_where(receipt=True)
DISPLAY_KINDS = kinds_where(customer_display=True)
SPLIT_KINDS = kinds_where(splits_buckets=True)
MONEY_MOVING_KINDS = kinds_where(moves_money=True)
TILL_MONEY_MOVING_KINDS = tuple(k for k in MONEY_MOVING_KINDS if k in TILL_KINDS)   # a shift report's money rows
HOLD_RESOLUTIONS: dict[str, str] = {k.name: k.hold_resolution for k in TABLE if k.hold_resolution}
TILL_HOLD_RESOLUTIONS = tuple(k for k in HOLD_RESOLUTIONS if k in MONEY_KINDS)   # capture, void
STATUS_BY_KIND: dict[str, str] = {k.name: k.account_status for k in TABLE if k.account_status}
MEMBER_COUNTED_KINDS = kinds_where(group="member", moves_money=False)   # counted on a shift report, no money
ORIGINAL_NAMING_KINDS = kinds_where(names_original=True)
CARD_KINDS = kinds_where(group="card")
SETTING_KIND = "setting"
BOOK_ONLY_KINDS = kinds_where(group="book")            # in the book and the chain, never in a balance
# the receipt number (a till-made txn id) as a pattern, letters from the table
# (a hold's and a void's too: the till finds their rows by it)
RECEIPT_NUMBER_PATTERN = (r"[A-Za-z0-9._:-]{1,20}-["
                          + "".join(TXN_LETTERS[k] for k in dict.fromkeys(MONEY_KINDS + RECEIPT_KINDS))
                          + r"]-[0-9a-f]{32}")


def is_kind(name: str) -> bool:
    return name in KINDS
