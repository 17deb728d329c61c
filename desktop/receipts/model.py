"""The receipt: what one slip says, built from an operation's answer and the terminal's
context, and laid out once as lines of a fixed number of columns for both renderers
(ESC/POS for thermal printers, Qt for the PNG/PDF preview).

A receipt's number is the operation's txn id: it is printed as text and as a QR code
(or a barcode where it fits), and scanning it at any terminal loads the operation again
(`core.history`) for a refund or a reprint. The card the customer used (else the
account number) is masked to its last four characters, and the member's name, when the
till knew it, is masked too (张三 -> 张*, Li Na -> Li N.). Amounts are integers of minor units throughout; they are formatted only
here, in the receipt's language.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field, replace
from datetime import datetime

from core.kinds import RECEIPT_KINDS, REFUNDABLE_KINDS

from .. import money
from ..i18n import locale_of
from .texts import language_of, text

# RECEIPT_KINDS (core.kinds, still importable from here): the kinds that get a receipt
# (holds and releases do not move money: no slip).
COLUMNS_BY_PAPER_MM = {58: 32, 80: 48}      # font A (12 x 24 dots): 384 / 576 dots wide


@dataclass(frozen=True, slots=True)
class ReceiptContext:
    """What the terminal knows beyond the operation: the shop, who is at the till, and
    the language the slip is printed in."""
    shop_name: str = ""
    shop_address: str = ""
    terminal_id: str = ""
    cashier_id: str = ""
    cashier_name: str = ""
    language: str = "zh_CN"


@dataclass(frozen=True, slots=True)
class Receipt:
    txn_id: str
    kind: str                        # one of RECEIPT_KINDS
    account_id: str
    amount_minor: int                # unsigned
    balance_after_minor: int | None
    occurred_ms: int
    context: ReceiptContext = field(default_factory=ReceiptContext)
    original_txn_id: str = ""        # refunds: the sale's receipt number
    approved_by: str = ""            # refunds: the supervisor
    principal_delta_minor: int | None = None    # signed bucket changes, when known
    bonus_delta_minor: int | None = None
    method: str = ""                 # top-ups: payment method
    reprint: bool = False
    card_no: str = ""                # the card used (or issued), when known; printed masked
    member_name: str = ""            # the member's name, already masked (mask_name)
    # split-tender sales (issue 31): the other tenders {method: minor}; a sale's total and
    # change; a split sale's refund's part given back to the card
    tenders: dict = field(default_factory=dict)
    total_minor: int = 0
    change_minor: int = 0
    card_refund_minor: int = 0
    debt_minor: int = 0              # a top-up: what paid an offline debt (issue 27)

    @property
    def language(self) -> str:
        return language_of(self.context.language)

    def as_reprint(self) -> "Receipt":
        return replace(self, reprint=True)


def receipt_for_result(result, context: ReceiptContext, *, occurred_ms: int,
                       original_txn_id: str = "", approved_by: str = "", method: str = "") -> Receipt:
    """A receipt for an applied `core.Result`. Bucket deltas are taken from the result
    when it carries them (the members' principal/bonus split)."""
    if not result.applied:
        raise ValueError(f"no receipt for a {result.status.value} operation")
    return Receipt(result.txn_id, result.kind, result.account_id, result.amount_minor,
                   result.balance_minor, occurred_ms, context, original_txn_id, approved_by,
                   getattr(result, "principal_delta_minor", None), getattr(result, "bonus_delta_minor", None),
                   method or getattr(result, "method", "") or "")


def receipt_for_op(op, context: ReceiptContext) -> Receipt:
    """A receipt for an applied operation of the terminal's outbox (`desktop.outbox.Op`)."""
    if not op.applied or op.kind not in RECEIPT_KINDS:
        raise ValueError(f"no receipt for {op.kind} {op.status or op.state}")
    ctx = replace(context, terminal_id=op.terminal_id or context.terminal_id,
                  cashier_id=op.cashier_id or context.cashier_id,
                  cashier_name=context.cashier_name if op.cashier_id in ("", context.cashier_id) else "")
    details = op.details if getattr(op, "detail", "") else {}
    member = details.get("member") or mask_name(details.get("holder") or "")
    split = {}
    if op.kind in ("sale", "tender_refund"):
        split = dict(tenders=dict(details.get("tenders", {})), total_minor=details.get("total_minor", 0),
                     change_minor=details.get("change_minor", 0), card_refund_minor=details.get("card_minor", 0))
    return Receipt(op.txn_id, op.kind, op.account_id, op.amount_minor, op.balance_after_minor,
                   op.resolved_ms or op.created_ms, ctx, op.original_txn_id, op.approved_by,
                   getattr(op, "principal_delta_minor", None), getattr(op, "bonus_delta_minor", None),
                   getattr(op, "method", "") or "", card_no=getattr(op, "card_no", "") or "",
                   member_name=member, debt_minor=getattr(op, "debt_minor", 0) or 0, **split)


def receipt_for_offline(op, context: ReceiptContext) -> Receipt:
    """The receipt of a sale made offline (desktop/offline.py), printed when it is saved:
    marked OFFLINE, no balance (the ledger settles it when the till is back online)."""
    if not op.offline:
        raise ValueError(f"{op.kind} is no offline sale")
    ctx = replace(context, terminal_id=op.terminal_id or context.terminal_id,
                  cashier_id=op.cashier_id or context.cashier_id)
    member = op.details.get("member", "") if op.detail else ""
    return Receipt(op.txn_id, "offline", op.account_id, op.amount_minor, None, op.created_ms, ctx,
                   card_no=op.card_no, member_name=member)


def receipt_for_past(past, context: ReceiptContext, *, reprint: bool = True) -> Receipt:
    """A receipt (a reprint, by default) for a `core.history.PastOperation`, from any
    terminal: its own terminal and cashier, as far as Redis still remembers them."""
    if not past.applied or past.kind not in RECEIPT_KINDS:
        raise ValueError(f"no receipt for {past.kind} {past.status}")
    ctx = replace(context, terminal_id=past.terminal_id, cashier_id=past.cashier_id,
                  cashier_name=context.cashier_name if past.cashier_id == context.cashier_id else "")
    return Receipt(past.txn_id, past.kind, past.account_id, past.amount_minor, past.balance_after_minor,
                   past.occurred_ms, ctx, past.original_txn_id, "", past.principal_delta_minor,
                   past.bonus_delta_minor, past.method, reprint)


def mask_card(account_id: str) -> str:
    """'6222020200112233' -> '****2233'; ids of 4 characters or fewer keep only the last."""
    if len(account_id) <= 4:
        return "*" * max(0, len(account_id) - 1) + account_id[-1:]
    return "****" + account_id[-4:]


def mask_name(name: str) -> str:
    """A member's name as a slip shows it: a Chinese name keeps its first character
    ('张三' -> '张*', '欧阳娜娜' -> '欧***'); a Latin one its first word and the initials of
    the rest ('Li Na' -> 'Li N.', 'Anna' -> 'A.'). '' stays ''."""
    name = " ".join(name.split())
    if not name:
        return ""
    if any(display_width(c) == 2 for c in name):
        return name[0] + "*" * max(1, len(name.replace(" ", "")) - 1)
    words = name.split(" ")
    if len(words) == 1:
        return words[0][0] + "."
    return " ".join([words[0]] + [w[0] + "." for w in words[1:]])


# ---------------------------------------------------------------- layout

def display_width(s: str) -> int:
    """Columns `s` takes on a thermal printer (and in a CJK monospace font): wide and
    full-width characters (Chinese) take two."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in s)


def _cut(s: str, columns: int) -> tuple[str, str]:
    width = 0
    for i, c in enumerate(s):
        width += display_width(c)
        if width > columns:
            return s[:i], s[i:]
    return s, ""


def wrap(s: str, columns: int) -> list[str]:
    """`s` in lines of at most `columns` columns, broken at a space where there is one."""
    out = []
    while display_width(s) > columns:
        head, rest = _cut(s, columns)
        if " " in head.strip() and not rest.startswith(" "):
            head, _, tail = head.rstrip().rpartition(" ")
            rest = tail + rest
        out.append(head.rstrip())
        s = rest.lstrip()
    return out + [s]


@dataclass(frozen=True, slots=True)
class Line:
    """One printed line. `big`: double width and height (so half the columns)."""
    text: str = ""
    align: str = "left"              # left, center, right
    bold: bool = False
    big: bool = False


@dataclass(frozen=True, slots=True)
class Code:
    """The machine-readable receipt number: a QR code or a CODE128 barcode."""
    data: str
    symbology: str = "qr"            # qr or barcode


RULE = "rule"


def _pair(label: str, value: str, columns: int, *, bold: bool = False) -> list[Line]:
    gap = columns - display_width(label) - display_width(value)
    if gap >= 1:
        return [Line(label + " " * gap + value, bold=bold)]
    return [Line(label, bold=bold)] + [Line(part, "right", bold) for part in wrap(value, columns)]


def barcode_fits(data: str, columns: int) -> bool:
    """Whether CODE128 (subset B) of `data` fits the paper at the narrowest module (2
    dots): 11 modules a character plus start, check, stop and quiet zones."""
    dots = 12 * columns                                # 12 dots a column (font A)
    modules = 11 * (len(data) + 3) + 2 + 20
    return modules * 2 <= dots


def layout(receipt: Receipt, columns: int, *, symbology: str = "qr") -> list:
    """The receipt as a list of `Line`, `RULE` and one `Code`, for `columns` columns."""
    lang, loc = receipt.language, locale_of(receipt.language)
    t = lambda key: text(lang, key)  # noqa: E731
    fmt = lambda m: money.format_minor(m, loc)  # noqa: E731
    ctx = receipt.context
    out: list = []
    if ctx.shop_name:
        out += [Line(part, "center", True, True) for part in wrap(ctx.shop_name, columns // 2)]
    if ctx.shop_address:
        out += [Line(part, "center") for part in wrap(ctx.shop_address, columns)]
    if receipt.reprint:
        out.append(Line(t("reprint"), "center", True))
    if receipt.kind == "offline":
        out.append(Line(t("offline_mark"), "center", True))
    out.append(RULE)
    out.append(Line(t(f"title.{receipt.kind}"), "center", True))
    when = datetime.fromtimestamp(receipt.occurred_ms / 1000).strftime("%Y-%m-%d %H:%M:%S")
    out += _pair(t("time"), when, columns)
    if ctx.terminal_id:
        out += _pair(t("terminal"), ctx.terminal_id, columns)
    if ctx.cashier_id:
        who = f"{ctx.cashier_name} ({ctx.cashier_id})" if ctx.cashier_name else ctx.cashier_id
        out += _pair(t("cashier"), who, columns)
    if receipt.kind == "test":                  # the printer settings' Test print: no sale at all
        out.append(RULE)
        out += [Line(part, "center", True) for part in wrap(t("test_note"), columns)]
        out.append(RULE)
        out.append(Code(receipt.txn_id, symbology if symbology != "barcode" or barcode_fits(receipt.txn_id, columns)
                        else "qr"))
        out += [Line(part, "center") for part in wrap(receipt.txn_id, columns)]
        return out
    out += _pair(t("card"), mask_card(receipt.card_no or receipt.account_id), columns)
    if receipt.member_name:
        out += _pair(t("member"), receipt.member_name, columns)
    out.append(RULE)
    if receipt.kind in ("sale", "tender_refund"):
        out += _split_lines(receipt, columns, t, fmt)
    else:
        label = {"refund": "refund_amount", "close": "paid_out"}.get(receipt.kind, "amount")
        out += _pair(t(label), fmt(receipt.amount_minor), columns, bold=True)
    pd, bd = receipt.principal_delta_minor, receipt.bonus_delta_minor
    if receipt.kind == "close":
        # 退卡: what is paid out is the principal; the bonus lapses, on a line of its own
        if bd:
            out += _pair(t("bonus_forfeited"), fmt(abs(bd)), columns)
    elif pd is not None and bd is not None and pd and bd:      # the account has both buckets here
        out += _pair(t("from_principal"), fmt(abs(pd)), columns)
        out += _pair(t("from_bonus"), fmt(abs(bd)), columns)
    if receipt.method:
        out += _pair(t("method"), t(f"method.{receipt.method}") if receipt.method in
                     ("cash", "wechat", "alipay", "bank_card", "other") else receipt.method, columns)
    if receipt.debt_minor:
        out += _pair(t("debt_paid"), fmt(receipt.debt_minor), columns)
    if receipt.balance_after_minor is not None:
        out += _pair(t("balance_after"), fmt(receipt.balance_after_minor), columns, bold=True)
    if receipt.kind == "offline":
        out += [Line(part, "center") for part in wrap(t("offline_note"), columns)]
    if receipt.kind in ("refund", "tender_refund") and receipt.original_txn_id:
        out.append(Line(t("refund_of")))
        out += [Line(part, "right") for part in wrap(receipt.original_txn_id, columns)]
    if receipt.approved_by:
        out += _pair(t("approved_by"), receipt.approved_by, columns)
    out.append(RULE)
    out.append(Line(t("receipt_number"), "center"))
    use = symbology if symbology != "barcode" or barcode_fits(receipt.txn_id, columns) else "qr"
    out.append(Code(receipt.txn_id, use))
    out += [Line(part, "center") for part in wrap(receipt.txn_id, columns)]
    out.append(Line())
    if receipt.kind in REFUNDABLE_KINDS:           # a refund names this slip
        out.append(Line(t("keep"), "center"))
    out.append(Line(t("thanks"), "center"))
    return out


def _split_lines(receipt: Receipt, columns: int, t, fmt) -> list[Line]:
    """A split-tender sale's every tender (the card, then the others; cash with what was
    handed over and the change), or what its refund gave back to each."""
    out: list[Line] = []
    method = lambda m: t(f"method.{m}")  # noqa: E731
    if receipt.kind == "sale":
        out += _pair(t("total"), fmt(receipt.total_minor or receipt.amount_minor), columns, bold=True)
        out += _pair(t("tender.card"), fmt(receipt.amount_minor), columns)
        for m, amount_minor in receipt.tenders.items():
            out += _pair(method(m), fmt(amount_minor), columns)
            if m == "cash" and receipt.change_minor:
                out += _pair(t("cash_tendered"), fmt(amount_minor + receipt.change_minor), columns)
        if receipt.change_minor:
            out += _pair(t("change"), fmt(receipt.change_minor), columns, bold=True)
        return out
    out += _pair(t("refund_amount"), fmt(receipt.amount_minor), columns, bold=True)
    if receipt.card_refund_minor:
        out += _pair(t("to_card"), fmt(receipt.card_refund_minor), columns)
    for m, amount_minor in receipt.tenders.items():
        out += _pair(method(m), fmt(amount_minor), columns)
    return out


def plain_text(receipt: Receipt, columns: int) -> str:
    """The receipt as text (logs, tests, accessibility): rules as dashes, the code as its data."""
    rows = []
    for item in layout(receipt, columns):
        if item == RULE:
            rows.append("-" * columns)
        elif isinstance(item, Code):
            rows.append(f"[{item.symbology}:{item.data}]")
        else:
            width = columns // 2 if item.big else columns
            pad = max(0, width - display_width(item.text))
            rows.append(item.text if item.align == "left" else
                        " " * (pad // 2) + item.text if item.align == "center" else " " * pad + item.text)
    return "\n".join(rows)


__all__ = ["Receipt", "ReceiptContext", "Line", "Code", "RULE", "RECEIPT_KINDS", "COLUMNS_BY_PAPER_MM",
           "receipt_for_result", "receipt_for_op", "receipt_for_past", "mask_card", "mask_name", "layout",
           "plain_text", "display_width", "wrap", "barcode_fits"]
