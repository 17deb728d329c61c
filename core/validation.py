"""Input checks run before anything reaches Redis (the Lua scripts check again).

A rejected value raises `InvalidRequest` naming the field and the reason. Limits:
ids are 1-64 characters from ``A-Z a-z 0-9 . _ : -`` (no braces, so an id can never
change a key's hash tag); amounts are ints (not bool, not float, not str) from 1 to
`MAX_AMOUNT_MINOR`; balances stay below `MAX_BALANCE_MINOR` < 2**53 so Lua's doubles
hold every one of them exactly.

Txn ids the ledger makes itself (hold expiry, reconcile compensation, restore) live in
a reserved namespace: '@' + a lower-case kind + ':' + id characters (`internal_txn_id`).
No client id can contain '@', so none can ever equal an internal id; the scripts check
the same (lua/includes/checks.lua check_id / check_internal_id).
"""
from __future__ import annotations

import re
import unicodedata

from .errors import InvalidRequest

# The scripts check the same limits (lua/includes/common.lua, checks.lua):
# tests/core/test_limits.py fails when a limit changes on one side only.
MAX_AMOUNT_MINOR = 100_000_000_000          # 1e11 minor units (1 billion yuan) per operation
MAX_BALANCE_MINOR = 1_000_000_000_000_000   # 1e15 < 2**53
MAX_ID_LEN = 64
ID_CHARS = "A-Z a-z 0-9 . _ : -"
MAX_RETENTION_S = 400 * 86400
# The shop's idempotency retention (cs:meta retention_s, `cashierctl init --retention-s`)
# is at least a day: a till re-sends on its own only operations younger than the retention
# minus `RESEND_MARGIN_S` (older ones go to a supervisor), so a shorter one would leave a
# till that was away over night nothing to re-send.
MIN_SHOP_RETENTION_S = 86400
RESEND_MARGIN_S = 3600
# the ledger's idempotency retention when the shop set none (`cashierctl init --retention-s`)
DEFAULT_RETENTION_S = 7 * 86400
ID_CLASS = "[A-Za-z0-9._:-]"                 # one character of ID_CHARS, as a regex class
_ID_RE = re.compile(f"{ID_CLASS}{{1,{MAX_ID_LEN}}}")
INTERNAL_TXN_PREFIX = "@"
_INTERNAL_RE = re.compile(r"@[a-z]+:[A-Za-z0-9._:-]+")


def check_id(value: object, field: str, *, optional: bool = False) -> str:
    if value is None or value == "":
        if optional:
            return ""
        raise InvalidRequest(field, "must not be empty")
    if not isinstance(value, str):
        raise InvalidRequest(field, f"must be a string, not {type(value).__name__}")
    if len(value) > MAX_ID_LEN:
        raise InvalidRequest(field, f"longer than {MAX_ID_LEN} characters")
    if not _ID_RE.fullmatch(value):
        raise InvalidRequest(field, f"only {ID_CHARS} are allowed")
    return value


def internal_txn_id(kind: str, *parts: object) -> str:
    """An id of the reserved namespace: '@<kind>:<part>:<part>...'. For the ledger's own
    operations only (the reconcile service's '@cmp:' and '@rst:'; the hold expiry script
    makes '@hx:' itself)."""
    value = f"{INTERNAL_TXN_PREFIX}{kind}:" + ":".join(map(str, parts))
    return check_internal_txn_id(value)


def check_internal_txn_id(value: object, field: str = "txn_id") -> str:
    if not isinstance(value, str) or len(value) > MAX_ID_LEN or not _INTERNAL_RE.fullmatch(value):
        raise InvalidRequest(field, "must be an internal txn id ('@<kind>:...', made by the ledger itself)")
    return value


# account, txn, terminal, cashier ids of a request in one match: "<acct> <txn> <term> <cash>"
# (no id may hold a space, so each part is exactly one id; terminal and cashier optional)
_plain_ids = re.compile(" ".join([f"{ID_CLASS}{{1,{MAX_ID_LEN}}}"] * 2
                                 + [f"{ID_CLASS}{{0,{MAX_ID_LEN}}}"] * 2)).fullmatch


def check_request_ids(account_id: object, txn_id: object, terminal_id: object, cashier_id: object, *,
                      internal_txn: bool = False) -> None:
    """The ids of one ledger request: account and txn required, terminal and cashier
    optional; `internal_txn`: the txn id must be the ledger's own (`internal_txn_id`)."""
    # the common case in one expression (the same rules as check_id); anything else
    # goes through the checks one by one, which name the field
    if not internal_txn:
        term = "" if terminal_id is None else terminal_id
        cash = "" if cashier_id is None else cashier_id
        if (type(account_id) is str and type(txn_id) is str and type(term) is str and type(cash) is str
                and _plain_ids(f"{account_id} {txn_id} {term} {cash}")):
            return
    check_id(account_id, "account_id")
    if internal_txn:
        check_internal_txn_id(txn_id)
    else:
        check_id(txn_id, "txn_id")    # refuses '@': client ids never enter the reserved namespace
    check_id(terminal_id, "terminal_id", optional=True)
    check_id(cashier_id, "cashier_id", optional=True)


def check_amount(value: object, field: str = "amount_minor", *, allow_zero: bool = False,
                 max_minor: int = MAX_AMOUNT_MINOR) -> int:
    # bool is an int subclass: True would silently mean 1 fen.
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(field, f"must be an int of minor units, not {type(value).__name__}")
    if value < 0:
        raise InvalidRequest(field, "must not be negative")
    if value == 0 and not allow_zero:
        raise InvalidRequest(field, "must be greater than zero")
    if value > max_minor:
        raise InvalidRequest(field, f"above the maximum of {max_minor} minor units")
    return value


MAX_HOLDER_NAME_LEN = 64


def check_holder_name(value: object, field: str = "holder_name") -> str:
    """An account holder's name as shown at the till: optional, any script, at most 64
    characters, no control characters. Surrounding spaces are dropped."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidRequest(field, f"must be a string, not {type(value).__name__}")
    value = value.strip()
    if len(value) > MAX_HOLDER_NAME_LEN:
        raise InvalidRequest(field, f"longer than {MAX_HOLDER_NAME_LEN} characters")
    if any(unicodedata.category(c) == "Cc" for c in value):
        raise InvalidRequest(field, "control characters are not allowed")
    return value


def check_retention(value: object, field: str = "retention_s") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RETENTION_S:
        raise InvalidRequest(field, "must be a whole number of seconds from 1 to 400 days")
    return value


def check_shop_retention(value: object, field: str = "retention_s") -> int:
    """The shop's retention setting: whole seconds from 1 day to 400 days."""
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_SHOP_RETENTION_S <= value <= MAX_RETENTION_S:
        raise InvalidRequest(field, f"must be a whole number of seconds from {MIN_SHOP_RETENTION_S} (1 day) "
                                    f"to {MAX_RETENTION_S} (400 days), got {value!r}")
    return value
