"""Money as text: strict parsing of what people type ("12.50") into integer minor units,
and plain formatting back. No floats anywhere: parsing is done on the digits.
Locale-aware display (¥12.50) belongs to the UI; this is the exact part under it."""
from __future__ import annotations

import re

from .errors import InvalidRequest
from .validation import MAX_AMOUNT_MINOR

_AMOUNT_RE = re.compile(r"([0-9]+)(?:\.([0-9]{1,2}))?")

# why an amount was refused, for UIs that word it themselves
EMPTY, NOT_A_NUMBER, NEGATIVE, TOO_MANY_DECIMALS, ZERO, TOO_LARGE = (
    "empty", "not_a_number", "negative", "too_many_decimals", "zero", "too_large")


class InvalidAmount(InvalidRequest):
    """An amount typed as text was refused; `code` says why (one of the constants above)."""

    def __init__(self, field: str, code: str, reason: str):
        self.code = code
        super().__init__(field, reason)


def parse_minor(text: str, field: str = "amount", *, allow_zero: bool = False,
                max_minor: int = MAX_AMOUNT_MINOR) -> int:
    """'12.5' -> 1250. Raises InvalidRequest naming `field` for anything else."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidAmount(field, EMPTY, "is empty")
    cleaned = text.strip()
    if cleaned.startswith("-"):
        raise InvalidAmount(field, NEGATIVE, "must not be negative")
    match = _AMOUNT_RE.fullmatch(cleaned)
    if not match:
        if re.fullmatch(r"[0-9]+\.[0-9]{3,}", cleaned):
            raise InvalidAmount(field, TOO_MANY_DECIMALS, "has more than two decimals")
        raise InvalidAmount(field, NOT_A_NUMBER, f"{cleaned!r} is not an amount like 12.50")
    whole, cents = match.group(1), (match.group(2) or "").ljust(2, "0")
    too_large = f"above the maximum of {format_minor(max_minor)}"
    if len(whole) > 15:
        raise InvalidAmount(field, TOO_LARGE, too_large)
    minor = int(whole) * 100 + int(cents)
    if minor == 0 and not allow_zero:
        raise InvalidAmount(field, ZERO, "must be greater than zero")
    if minor > max_minor:
        raise InvalidAmount(field, TOO_LARGE, too_large)
    return minor


def format_minor(amount_minor: int) -> str:
    """1250 -> '12.50', -5 -> '-0.05'."""
    sign = "-" if amount_minor < 0 else ""
    whole, cents = divmod(abs(amount_minor), 100)
    return f"{sign}{whole}.{cents:02d}"
