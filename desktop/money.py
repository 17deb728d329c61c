"""Money as the cashier types and reads it: strict parsing of typed amounts into
integer minor units (fen) and locale-aware display of minor units (¥12.50).

Never a float: "12.50" is parsed digit by digit into 1250 and 1250 is shown from its
integer yuan and fen parts. Parsing accepts what a cashier can mean unambiguously
(optional ¥/￥ sign, full-width digits from a Chinese input method, the locale's
decimal mark, at most two decimals) and refuses everything else with an
`AmountError` whose `reason` code the UI turns into an inline message.
"""
from __future__ import annotations

import re
import unicodedata

from core import MAX_AMOUNT_MINOR
from core import money as core_money
# the reason codes of AmountError are core.money's
from core.money import EMPTY, NEGATIVE, NOT_A_NUMBER, TOO_LARGE, TOO_MANY_DECIMALS, ZERO  # noqa: F401

CURRENCY_SYMBOL = "¥"
MAX_AMOUNT_TEXT_LEN = 20          # the amount field's maxLength


_AMOUNT_RE = re.compile(r"(?P<yuan>[0-9]*)(?:\.(?P<fen>[0-9]*))?")


class AmountError(ValueError):
    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


def parse_amount_minor(text: str, *, decimal_point: str = ".", max_minor: int = MAX_AMOUNT_MINOR) -> int:
    """'12.50' -> 1250. Raises AmountError(reason) for anything but a positive amount
    with at most two decimals and at most `max_minor` minor units.

    What a cashier may type beyond core's strict form (full-width digits, a ¥ sign,
    the locale's decimal mark, '.5' and '5.') is normalised here; the amount itself is
    parsed by `core.money.parse_minor`, the one parser of typed money.
    """
    if text is None:
        raise AmountError(EMPTY)
    s = unicodedata.normalize("NFKC", text).strip()   # full-width １２．５０ -> 12.50
    if not s:
        raise AmountError(EMPTY)
    negative = False
    if s[0] in "-−":
        negative, s = True, s[1:].lstrip()
    if s[:1] in ("¥", "￥"):
        s = s[1:].lstrip()
    if not negative and s[:1] in "-−":
        negative, s = True, s[1:].lstrip()
    if decimal_point != "." and decimal_point in s:
        if "." in s:
            raise AmountError(NOT_A_NUMBER)
        s = s.replace(decimal_point, ".")
    m = _AMOUNT_RE.fullmatch(s)
    if not m or not (m.group("yuan") or m.group("fen")):
        raise AmountError(NOT_A_NUMBER)
    if negative:
        raise AmountError(NEGATIVE)
    s = f"{m.group('yuan') or '0'}.{m.group('fen')}" if m.group("fen") else (m.group("yuan") or "0")
    try:
        return core_money.parse_minor(s, max_minor=max_minor)
    except core_money.InvalidAmount as exc:
        raise AmountError(exc.code) from None


def format_minor(amount_minor: int, locale=None) -> str:
    """1250 -> '¥12.50', grouped by `locale` (a QLocale; plain digits without one)."""
    if isinstance(amount_minor, bool) or not isinstance(amount_minor, int):
        raise TypeError("amount_minor must be an int of minor units")
    sign = "-" if amount_minor < 0 else ""
    yuan, fen = divmod(abs(amount_minor), 100)
    if locale is None:
        yuan_text, point = f"{yuan:,}", "."
    else:
        yuan_text, point = locale.toString(yuan), locale.decimalPoint()
    return f"{sign}{CURRENCY_SYMBOL}{yuan_text}{point}{fen:02d}"


def format_plain(amount_minor: int) -> str:
    """1250 -> '12.50' (for CSV and for pre-filling an amount field)."""
    sign = "-" if amount_minor < 0 else ""
    yuan, fen = divmod(abs(amount_minor), 100)
    return f"{sign}{yuan}.{fen:02d}"
