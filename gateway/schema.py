"""What each gateway request may contain: the fields of every till operation, their types,
and the checks that run before anything reaches core (docs/gateway.md is the reference).

A body is one JSON object: unknown fields, missing fields, wrong types (a bool or a float
for an amount), duplicate keys, NaN, and ids of the ledger's reserved '@' namespace are
refused with an error code naming the field. Values are then checked with
core.validation (ids, amounts), so core only ever sees well-formed requests. A batch
(`deduct_many`) is checked item by item with a single deduct's rules; an error names the
item's field as `items[<index>].<field>`, and refuses the whole batch.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from core.errors import InvalidRequest
from core.validation import MAX_AMOUNT_MINOR, check_amount, check_id

from .wire import MAX_BATCH_ITEMS, GatewayRefused

# fields every operation may carry: who (must equal the credential's / session's) and an approval
COMMON = {"terminal_id": str, "cashier_id": str, "approval": dict}
ID_FIELDS = ("txn_id", "account_id", "original_txn_id", "hold_txn_id", "card_no", "supervisor_id",
             "terminal_id", "cashier_id", "shift_cashier_id", "closed_by", "made_by")
AMOUNT_FIELDS = {"amount_minor": False, "bonus_minor": True,     # name -> zero allowed
                 "total_minor": False, "change_minor": True}


@dataclass(frozen=True)
class OpSpec:
    required: dict
    optional: dict = field(default_factory=dict)
    approval: str = ""            # "always", "above" (the threshold), "top_up" (unless the cashier may)


OPS: dict[str, OpSpec] = {
    "deduct": OpSpec({"txn_id": str, "account_id": str, "amount_minor": int},
                     {"card_no": str, "member_pin": str, "member_code": str}, approval="above"),
    "credit": OpSpec({"txn_id": str, "account_id": str, "amount_minor": int},
                     {"method": str, "bonus_minor": int}, approval="top_up"),
    "refund": OpSpec({"txn_id": str, "account_id": str, "amount_minor": int, "original_txn_id": str},
                     approval="always"),
    # a split-tender sale (issue 31): amount_minor is the card leg (the approval threshold and
    # the member PIN apply to it as to a deduct), tenders {method: amount_minor} the rest
    "sale": OpSpec({"txn_id": str, "account_id": str, "amount_minor": int, "tenders": dict, "total_minor": int},
                   {"card_no": str, "member_pin": str, "change_minor": int}, approval="above"),
    # a split sale's non-card tender given back: a refund, approved as one
    "tender_refund": OpSpec({"txn_id": str, "account_id": str, "amount_minor": int, "original_txn_id": str,
                             "method": str}, approval="always"),
    "hold": OpSpec({"txn_id": str, "account_id": str, "amount_minor": int, "ttl_s": int},
                   {"card_no": str, "member_pin": str, "member_code": str}, approval="above"),
    "capture": OpSpec({"txn_id": str, "hold_txn_id": str, "amount_minor": int}, {"account_id": str}),
    "void": OpSpec({"txn_id": str, "hold_txn_id": str}, {"account_id": str}),
    "open": OpSpec({"txn_id": str, "account_id": str}, {"holder_name": str, "phone": str}),
    "issue_card": OpSpec({"txn_id": str, "account_id": str, "card_no": str}),
    "block_card": OpSpec({"txn_id": str, "card_no": str, "reason": str}),
    "close": OpSpec({"txn_id": str, "account_id": str}, approval="always"),
    # a sale made offline, settled on the terminal's credential with the cashier it states (gateway/offline.py)
    "offline_deduct": OpSpec({"txn_id": str, "account_id": str, "amount_minor": int, "made_at_ms": int,
                              "made_by": str}, {"card_no": str}),
    "shift_close": OpSpec({"txn_id": str, "shift_no": int, "totals": dict},
                          {"opened_ms": int, "extra_totals": dict, "shift_cashier_id": str, "closed_by": str}),
}
SIGN_IN = OpSpec({"cashier_id": str, "pin": str}, {"terminal_id": str})
APPROVAL = OpSpec({"supervisor_id": str, "pin": str})
APPROVAL_GRANT = OpSpec({"grant": str})                      # an approval POST /v1/approvals gave
APPROVAL_REQUEST = OpSpec({"supervisor_id": str, "pin": str}, {"kind": str})
# POST /v1/ops/deduct_many: who (as any operation's) and the items; a batch carries no approval
DEDUCT_MANY = OpSpec({"items": list}, {"terminal_id": str, "cashier_id": str})
# a deduct's own fields only: no member PIN (a charge that needs one is sent alone)
DEDUCT_ITEM = OpSpec(OPS["deduct"].required, {"card_no": str})
# POST /v1/members/{account_id}/pin: the member's new payment PIN entered twice (and the old
# one when the member has a PIN); .../pin/reset: a supervisor's approval
MEMBER_PIN_SET = OpSpec({"pin": str, "pin_again": str}, {"old_pin": str})
MEMBER_PIN_RESET = OpSpec({"approval": dict})
# POST /v1/members/{account_id}/code: a supervisor's approval (gateway/member_codes.py)
MEMBER_CODE_ENROL = OpSpec({"approval": dict})
_PLAIN_ITEM = {"txn_id": 0, "account_id": 0, "amount_minor": 0}.keys()   # an item without card_no

_TYPE_NAMES = {str: "a string", int: "a whole number", dict: "an object", list: "a list"}


def _no_duplicates(pairs):
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise GatewayRefused("malformed_json", key, "duplicate key", 400)
        seen[key] = value
    return seen


def _no_constants(name):
    raise ValueError(name)


def parse_json(raw: bytes) -> dict:
    """The body as a JSON object; raises GatewayRefused('malformed_json')."""
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except GatewayRefused:
        raise
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise GatewayRefused("malformed_json", "", "the body is not valid JSON (UTF-8)", 400) from None
    if not isinstance(data, dict):
        raise GatewayRefused("malformed_json", "", "the body must be a JSON object", 400)
    return data


def _type_ok(value, expected) -> bool:
    if expected is int:
        return type(value) is int             # not bool, not float
    return isinstance(value, expected)


def check_fields(data: dict, spec: OpSpec, *, common: bool = True) -> dict:
    """`data` checked against `spec` (and the common fields): the same dict, or GatewayRefused."""
    allowed = {**spec.required, **spec.optional, **(COMMON if common else {})}
    for name in data:
        if name not in allowed:
            raise GatewayRefused("unknown_field", name, "this field is not part of the request", 400)
    for name in spec.required:
        if name not in data:
            raise GatewayRefused("missing_field", name, "this field is required", 400)
    for name, value in data.items():
        if not _type_ok(value, allowed[name]):
            raise GatewayRefused("wrong_type", name, f"must be {_TYPE_NAMES[allowed[name]]}", 400)
    for name in ID_FIELDS:
        if name in data:
            check_plain_id(data[name], name)
    for name, zero_ok in AMOUNT_FIELDS.items():
        if name in data:
            check_amount(data[name], name, allow_zero=zero_ok)
    return data


def check_batch(data: dict) -> list[dict]:
    """A `deduct_many` body checked: its items (at most MAX_BATCH_ITEMS, each checked as a
    single deduct's fields), or GatewayRefused naming the item's field (`items[3].txn_id`)."""
    check_fields(data, DEDUCT_MANY, common=False)
    items = data["items"]
    if len(items) > MAX_BATCH_ITEMS:
        raise GatewayRefused("too_many_items", "items", f"a batch carries at most {MAX_BATCH_ITEMS} items "
                             f"(this one {len(items)})", 413, max_items=MAX_BATCH_ITEMS)
    for index, item in enumerate(items):
        if type(item) is not dict:
            raise GatewayRefused("wrong_type", f"items[{index}]", "must be an object", 400, index=index)
        try:
            amount = item.get("amount_minor")
            if item.keys() == _PLAIN_ITEM and type(amount) is int and 0 < amount <= MAX_AMOUNT_MINOR \
                    and type(item["txn_id"]) is str and type(item["account_id"]) is str:
                check_plain_id(item["txn_id"], "txn_id")      # the common item, fast: the same checks
                check_plain_id(item["account_id"], "account_id")
                continue
            check_fields(item, DEDUCT_ITEM, common=False)
        except GatewayRefused as exc:
            raise GatewayRefused(exc.code, f"items[{index}].{exc.field}", exc.reason, exc.status_code,
                                 index=index, **exc.detail) from None
        except InvalidRequest as exc:
            raise GatewayRefused("invalid_request", f"items[{index}].{exc.field}", exc.reason, 400,
                                 index=index) from None
    return items


def check_plain_id(value: str, name: str) -> str:
    """A client id: never of the ledger's reserved '@' namespace, then core's id rules."""
    if isinstance(value, str) and value.startswith("@"):
        raise GatewayRefused("internal_txn_refused", name, "ids starting with '@' are the ledger's own", 403)
    return check_id(value, name)
