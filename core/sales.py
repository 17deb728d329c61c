"""Split-tender sales (issue 31), a part of `Ledger` (whose methods of the same names these
are): one sale paid partly by the member's card and the rest by cash, WeChat Pay, Alipay,
bank card or other, recorded by ONE Lua function (sale.lua): the card leg's deduction and
the sale's other tenders in one journal entry and one txn record. A declined card leg
records nothing, so no sale is ever half recorded. The card leg is refunded by
`Ledger.refund` naming the sale; the other tenders by `tender_refund` (tender_refund.lua),
journaled with the sale, each tender at most what it paid.

Also the arithmetic a till needs around a sale, in integers: the tenders' canonical
encoding, the change for cash, and the default split of a refund over the sale's tenders
(`refund_plan`: each tender back where it came from, in proportion).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from . import validation as v
from .errors import InvalidRequest
from .members import PAYMENT_METHODS
from .result import Result

# the tenders of a sale besides the card, in their canonical order (tenders.lua TENDER_METHODS)
TENDER_METHODS: tuple[str, ...] = PAYMENT_METHODS
CARD_TENDER = "card"          # the card leg, as receipts and reports name it
# the encoded tenders' length limit (tenders.lua): five methods of up to 1e11 fit in 120
MAX_TENDERS_LEN = 200


def check_tenders(tenders: object) -> dict[str, int]:
    """The sale's other tenders {method: amount_minor} in canonical order, checked: known
    methods, whole positive amounts, at least one (a card-only sale is a `deduct`)."""
    if not isinstance(tenders, Mapping) or not tenders:
        raise InvalidRequest("tenders", "at least one tender besides the card (a card-only sale is a deduct)")
    out: dict[str, int] = {}
    for method in TENDER_METHODS:
        if method in tenders:
            out[method] = v.check_amount(tenders[method], f"tenders.{method}")
    unknown = [m for m in tenders if m not in TENDER_METHODS]
    if unknown:
        raise InvalidRequest("tenders", f"unknown method {unknown[0]!r}: must be one of {', '.join(TENDER_METHODS)}")
    return out


def encode_tenders(tenders: Mapping[str, int]) -> str:
    """'cash:1350;wechat:2000': the journal's and the script's form (canonical order)."""
    return ";".join(f"{m}:{a}" for m, a in check_tenders(tenders).items())


def decode_tenders(text: str | None) -> dict[str, int]:
    """The tenders of a journal entry's / record's 'tn' field ({} for none)."""
    out: dict[str, int] = {}
    for part in (text or "").split(";"):
        if part:
            method, _, amount = part.partition(":")
            out[method] = int(amount)
    return out


@dataclass(frozen=True)
class SaleTenders:
    """A split-tender sale as the till rings it up and the receipt shows it."""
    total_minor: int
    card_minor: int
    tenders: dict[str, int]          # the other tenders, canonical order
    change_minor: int = 0            # cash handed back (cash tendered = tenders['cash'] + change)

    @property
    def cash_tendered_minor(self) -> int:
        return self.tenders.get("cash", 0) + self.change_minor


def refund_plan(card_minor: int, tenders: Mapping[str, int], amount_minor: int,
                refunded: Mapping[str, int] | None = None) -> dict[str, int]:
    """The default split of a refund of `amount_minor` of a split sale: each tender
    (the card leg as 'card') gives back in proportion to what it paid, exact in integers
    (largest remainders, ties to the card, then canonical order), never more than what
    it has left after `refunded` ({tender: given back before}). Raises InvalidRequest when
    the amount passes what is left."""
    paid = {CARD_TENDER: card_minor, **{m: a for m, a in tenders.items() if a > 0}}
    refunded = refunded or {}
    left = {t: paid[t] - refunded.get(t, 0) for t in paid}
    total_left = sum(left.values())
    v.check_amount(amount_minor, "amount_minor")
    if amount_minor > total_left:
        raise InvalidRequest("amount_minor", f"more than the sale has left to refund ({total_left})")
    shares = {t: amount_minor * left[t] // total_left for t in left}
    order = sorted(left, key=lambda t: (-(amount_minor * left[t] % total_left), list(paid).index(t)))
    short = amount_minor - sum(shares.values())
    for t in order:
        if short == 0:
            break
        if shares[t] < left[t]:
            shares[t] += 1
            short -= 1
    return {t: a for t, a in shares.items() if a > 0}


class Sales:
    """The split-tender operations of a `core.Ledger`, built on its runner and key schema."""

    def __init__(self, ledger):
        self.ledger = ledger
        self.runner = ledger.runner

    def sale(self, account_id: str, card_minor: int, tenders: Mapping[str, int], *, txn_id: str,
             total_minor: int, change_minor: int = 0, terminal_id: str | None = None,
             cashier_id: str | None = None, card_no: str | None = None) -> Result:
        """One split-tender sale: `card_minor` from the member's card (checked exactly as
        `deduct`: available balance, card presented, frozen, closed; the buckets split in
        the shop's order) and `tenders` {method: amount_minor} (cash, wechat, alipay,
        bank_card, other) for the rest, `total_minor` = card leg + tenders, `change_minor`
        the cash handed back (only with a cash tender). All recorded in one journal entry
        (kind 'sale') or, when the card leg is declined, nothing: the Result's status says
        why, and no tender is recorded as paid. A retry with the same txn id replays; the
        same txn id with other tenders is a TxnConflict."""
        v.check_amount(card_minor, "card_minor")
        encoded = encode_tenders(tenders)
        v.check_amount(total_minor, "total_minor")
        v.check_amount(change_minor, "change_minor", allow_zero=True)
        if card_minor + sum(check_tenders(tenders).values()) != total_minor:
            raise InvalidRequest("total_minor", "must equal the card leg plus the tenders")
        if change_minor and "cash" not in tenders:
            raise InvalidRequest("change_minor", "change is given only with a cash tender")
        v.check_id(card_no, "card_no", optional=True)
        part = self.ledger._common(account_id, txn_id, terminal_id, cashier_id)
        return self.runner.run("sale", "sale", part.deduct_keys(account_id, txn_id),
                               [txn_id, account_id, card_minor, self.ledger.retention_s, terminal_id or "",
                                cashier_id or "", card_no or "", encoded, total_minor, change_minor],
                               account_id, card_minor, txn_id)

    def tender_refund(self, account_id: str, amount_minor: int, *, txn_id: str, original_txn_id: str,
                      method: str, terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Give back `amount_minor` of the sale `original_txn_id`'s tender `method` (cash
        as cash, ...): journaled with the sale, the card's balance unchanged. Partial
        refunds of one tender add up to at most that tender (REFUND_EXCEEDS_ORIGINAL);
        TENDER_NOT_IN_SALE when the sale had no such tender, ORIGINAL_NOT_FOUND when it is
        no applied sale of this account (or older than the retention)."""
        v.check_id(original_txn_id, "original_txn_id")
        if original_txn_id == txn_id:
            raise InvalidRequest("original_txn_id", "must differ from txn_id")
        if method not in TENDER_METHODS:
            raise InvalidRequest("method", f"must be one of {', '.join(TENDER_METHODS)}")
        part = self.ledger.schema.partition_of(account_id) if isinstance(account_id, str) else None
        extra = [part.txn(original_txn_id)] if part else []
        return self.ledger._balance_op("tender_refund", account_id, amount_minor, txn_id, terminal_id,
                                       cashier_id, extra_keys=extra, extra_args=[original_txn_id, method])

    def sale_tenders(self, account_id: str, sale_txn_id: str) -> dict[str, int] | None:
        """The tenders of an applied sale, with what each has left to refund:
        {'card': ..., 'cash': ..., ...} of the amounts *left*; None when no applied sale of
        this account has that id within the retention. For the till's refund dialog
        (display: the scripts decide every refund themselves)."""
        v.check_id(sale_txn_id, "sale_txn_id")
        part = self.ledger._common(account_id, sale_txn_id, None, None)
        rec = self.runner.with_retry(self.runner.client.hgetall, part.txn(sale_txn_id), txn_id=None)
        rec = {(k.decode() if isinstance(k, bytes) else k): (x.decode() if isinstance(x, bytes) else x)
               for k, x in rec.items()}
        fp = rec.get("f", "")
        kind, _, rest = fp.partition("|")
        acct, _, rest = rest.partition("|")
        if kind != "sale" or acct != account_id or rec.get("s") not in ("A", "APPLIED"):
            return None
        left = {CARD_TENDER: int(rest.partition("|")[0]) - int(rec.get("r", "0"))}
        tenders = decode_tenders(rec.get("tn"))
        for key, value in rec.items():
            if key.startswith("q:"):
                method, _, amount = value.partition(":")
                tenders[method] = tenders.get(method, 0) - int(amount)
        left.update(tenders)
        return left
