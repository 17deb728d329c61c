"""Money as the cashier types and reads it: strict parsing of typed amounts into
integer minor units (fen) and locale-aware display of minor units (¥12.50).

Never a float: "12.50" is parsed digit by digit into 1250 and 1250 is shown from its
integer yuan and fen parts. Parsing accepts what a cashier can mean unambiguously
(optional ¥/￥ sign, full-width digits from a Chinese input method, the locale's
decimal mark or the input method's full stop 。, at most two decimals) and refuses everything else with an
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
IDEOGRAPHIC_FULL_STOP = "\u3002"  # 。 (NFKC turns the half-width ｡ into it)
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
    # A Chinese input method types 。 for the full stop key: it is the decimal mark.
    s = s.replace(IDEOGRAPHIC_FULL_STOP, ".")
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


def parse_cash_minor(text: str, *, decimal_point: str = ".", max_minor: int = MAX_AMOUNT_MINOR) -> int:
    """Like `parse_amount_minor`, but 0 is an amount too (a drawer's float or count may
    be empty): '0', '0.00', '¥0' -> 0. Still refuses empty text and anything negative."""
    try:
        return parse_amount_minor(text, decimal_point=decimal_point, max_minor=max_minor)
    except AmountError as exc:
        if exc.reason == ZERO:
            return 0
        raise


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


_EN_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
            "fifteen sixteen seventeen eighteen nineteen").split()
_EN_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_EN_SCALES = ((10 ** 12, "trillion"), (10 ** 9, "billion"), (10 ** 6, "million"), (1000, "thousand"))


def _english_words(n: int) -> str:
    if n < 20:
        return _EN_ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _EN_TENS[tens] + (f"-{_EN_ONES[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_EN_ONES[hundreds]} hundred" + (f" {_english_words(rest)}" if rest else "")
    for scale, name in _EN_SCALES:
        if n >= scale:
            high, rest = divmod(n, scale)
            return f"{_english_words(high)} {name}" + (f" {_english_words(rest)}" if rest else "")
    raise AssertionError(n)


_ZH_DIGITS = "零壹贰叁肆伍陆柒捌玖"
_ZH_UNITS = ("", "拾", "佰", "仟")
_ZH_GROUPS = ("", "万", "亿", "万亿")


def _chinese_words(n: int) -> str:
    """Financial (大写) numerals, as on a cheque: 1203 -> 壹仟贰佰零叁."""
    if n == 0:
        return _ZH_DIGITS[0]
    groups = []
    while n:
        n, group = divmod(n, 10000)
        groups.append(group)
    out, zero_pending = "", False
    for index in range(len(groups) - 1, -1, -1):
        group = groups[index]
        if group == 0:
            zero_pending = bool(out)
            continue
        text, digit_zero = "", False
        for pos in range(3, -1, -1):
            digit = group // 10 ** pos % 10
            if digit == 0:
                digit_zero = bool(text) or bool(out)
                continue
            if digit_zero or (zero_pending and not text):
                text += _ZH_DIGITS[0]
            digit_zero = zero_pending = False
            text += _ZH_DIGITS[digit] + _ZH_UNITS[pos]
        out += text + _ZH_GROUPS[index]
        zero_pending = group % 10 == 0
    return out


def amount_in_words(amount_minor: int, locale=None) -> str:
    """1250 -> 'twelve yuan and fifty fen' / '人民币壹拾贰元伍角整' (Chinese when `locale`
    is a Chinese QLocale): how a large amount is confirmed, so that a slipped zero shows."""
    if isinstance(amount_minor, bool) or not isinstance(amount_minor, int) or amount_minor < 0:
        raise ValueError("amount_minor must be a non-negative int of minor units")
    yuan, fen = divmod(amount_minor, 100)
    chinese = locale is not None and locale.name().startswith("zh")
    if chinese:
        jiao, fen_only = divmod(fen, 10)
        text = "人民币" + (_chinese_words(yuan) + "元" if yuan else "")
        if jiao:
            text += _ZH_DIGITS[jiao] + "角"
        elif fen_only and yuan:
            text += _ZH_DIGITS[0]
        if fen_only:
            text += _ZH_DIGITS[fen_only] + "分"
        else:
            text += "整"
        return text
    text = f"{_english_words(yuan)} yuan"
    if fen:
        text += f" and {_english_words(fen)} fen"
    return text
