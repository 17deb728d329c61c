"""The gateway's JSON schema, shared by the server (gateway/app.py) and the till's client
(gateway/client.py): how a core `Result` and the read answers travel, how an error
travels and turns back into core's exception, and how an item of a `deduct_many` batch
travels (its Result, or its error turned back into the exception instance core places at
that position).

Redis-free on purpose: a till imports this and must hold no Redis client. The read
answers are core's own classes from core/records.py (Redis-free), so a till decodes into
exactly what core.Ledger answers.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from core.errors import (AccountNotFound, InvalidRequest, LedgerError, LedgerNotInitialized,
                         LedgerUnavailable, TxnConflict, UnsafeRedisConfig)
from core.records import AccountInfo, Card, CloseResult, MemberMatch, PastOperation, Promotion  # noqa: F401
from core.result import Result, Status

API_VERSION = "v1"
MAX_BODY_BYTES = 64 * 1024
# POST /v1/ops/deduct_many: the most items one batch may carry (the gateway answers a longer
# one 413 `too_many_items`, nothing decided). Twice core's BATCH_ITEMS_PER_CALL: one
# request is at most two deduct_batch calls per partition, and its body stays well under
# MAX_BODY_BYTES (an item of the longest ids is about 260 bytes).
MAX_BATCH_ITEMS = 100
SESSION_HEADER = "X-Cashier-Session"
VERSION_HEADER = "X-Terminal-Version"

_RESULT_FIELDS = tuple(f.name for f in dataclasses.fields(Result))


# ---------------------------------------------------------------- answers of the gateway's own

@dataclass(frozen=True, slots=True)
class CashierView:
    """A signed-in cashier as the till may know them (never the PIN hash)."""
    cashier_id: str
    name: str
    supervisor: bool
    can_top_up: bool


@dataclass(frozen=True, slots=True)
class SignIn:
    """The answer to a sign-in (as core.cashiers.SignIn, plus the session on 'ok').
    outcome: ok, unknown, disabled, locked (`locked_s` left), wrong_pin (`attempts_left`)."""
    outcome: str
    cashier: CashierView | None = None
    locked_s: int = 0
    attempts_left: int = 0
    session: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


def encode(value) -> object:
    """A dataclass answer (Result, AccountInfo, Card...) as a JSON object; Status as its name."""
    if type(value) is Result:            # the common answer (every item of a batch): no generic walk
        data = {name: getattr(value, name) for name in _RESULT_FIELDS}
        data["status"] = value.status.value
        return data
    if dataclasses.is_dataclass(value):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Status):
        return value.value
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    return value


_FIELD_NAMES: dict[type, frozenset] = {}
_STATUSES = {s.value: s for s in Status}


def _build(cls, data: dict):
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    values = {k: v for k, v in data.items() if k in names}
    if "status" in values and cls is not AccountInfo and cls is not MemberMatch:
        status = values["status"]
        values["status"] = _STATUSES.get(status) if type(status) is str else None
        if values["status"] is None:
            values["status"] = Status(status)           # raises ValueError naming the value
    return cls(**values)


def decode_result(data: dict) -> Result:
    """A core `Result` (a `CloseResult` when the answer carries a payout)."""
    cls = CloseResult if "payout_minor" in data else Result
    return _build(cls, data)


def decode_batch_item(data: dict, txn_id: str | None = None) -> Result | LedgerError:
    """One item of a `deduct_many` answer: its `Result`, or (an item refused or not
    decided) the exception instance core's `Ledger.deduct_many` places at its position."""
    if "error" not in data:
        return _build(Result, data)
    try:
        raise_error(ERROR_STATUS.get(data.get("error"), 400), data, txn_id)
    except LedgerError as exc:
        return exc
    raise AssertionError("raise_error always raises")      # pragma: no cover


def decode_account(data: dict) -> AccountInfo:
    return _build(AccountInfo, data)


def decode_card(data: dict) -> Card:
    card = _build(Card, data)
    if not isinstance(card.candidates, tuple):            # a JSON list: the record keeps a tuple
        card = dataclasses.replace(card, candidates=tuple(card.candidates))
    return card


def decode_match(data: dict) -> MemberMatch:
    return _build(MemberMatch, data)


def decode_promotion(data: dict) -> Promotion:
    return _build(Promotion, data)


def decode_operation(data: dict) -> PastOperation:
    names = {f.name for f in dataclasses.fields(PastOperation)}
    return PastOperation(**{k: v for k, v in data.items() if k in names})


# ---------------------------------------------------------------- errors

class GatewayRefused(InvalidRequest):
    """The gateway refused the request before anything was decided (credential, session,
    approval, rights, internal kind or id...). `code` is the error code of docs/gateway.md.
    An InvalidRequest, so a till's outbox resolves it as 'nothing changed'."""

    def __init__(self, code: str, field: str, message: str, status_code: int = 403, **detail):
        self.code = code
        self.status_code = status_code
        self.detail = detail
        super().__init__(field or code, message)


class GatewayUnauthorized(LedgerUnavailable):
    """The terminal's credential is unknown or revoked. Raised as LedgerUnavailable: an
    earlier send of this txn id may have been decided before the revocation, so the till
    must keep it as 'outcome unknown' (its outbox), not as 'nothing changed'."""

    def __init__(self, message: str, txn_id: str | None):
        self.code = "unauthorized"
        super().__init__(f"the gateway refused this terminal's credential ({message})", txn_id)


# error code -> HTTP status; the client turns each back into core's exception
ERROR_STATUS = {
    "malformed_json": 400, "unknown_field": 400, "missing_field": 400, "wrong_type": 400,
    "invalid_request": 400, "account_not_found": 404, "operation_not_found": 404, "not_found": 404,
    "method_not_allowed": 405,
    "body_too_large": 413, "too_many_items": 413, "unsupported_media_type": 415, "request_timeout": 408,
    "unauthorized": 401, "session_required": 401, "session_invalid": 401, "sign_in_refused": 401,
    "terminal_mismatch": 403, "cashier_mismatch": 403, "session_other_terminal": 403,
    "kind_refused": 403, "internal_txn_refused": 403, "approval_required": 403,
    "approval_refused": 403, "self_approval": 403, "not_allowed": 403, "member_pin_refused": 403,
    "member_code_refused": 403,
    "txn_conflict": 409, "bonus_changed": 409, "ledger_unavailable": 503, "ledger_not_initialized": 503,
    "unsafe_redis": 503, "internal_error": 500,
}


def error_body(code: str, field: str = "", message: str = "", **detail) -> dict:
    return {"error": code, "field": field, "message": message, **detail}


def error_of(exc: Exception) -> tuple[int, dict]:
    """(HTTP status, body) of an exception core or the gateway raised; messages name the
    field and the reason only (never a path, a host, a Redis URL or a traceback)."""
    if isinstance(exc, GatewayRefused):
        return exc.status_code, error_body(exc.code, exc.field if exc.field != exc.code else "",
                                           exc.reason, **exc.detail)
    if type(exc).__name__ == "OperationNotFound":      # core.history's (no redis import here)
        return 404, error_body("operation_not_found", "txn_id", str(exc), txn_id=getattr(exc, "txn_id", ""))
    if isinstance(exc, AccountNotFound):
        return 404, error_body("account_not_found", "account_id", exc.reason)
    if isinstance(exc, InvalidRequest):
        return 400, error_body("invalid_request", exc.field, exc.reason)
    if isinstance(exc, TxnConflict):
        return 409, error_body("txn_conflict", "txn_id", "txn id already used for another request",
                               txn_id=exc.txn_id, stored=exc.stored_fingerprint,
                               requested=exc.requested_fingerprint)
    if isinstance(exc, LedgerNotInitialized):
        return 503, error_body("ledger_not_initialized", "", "the ledger holds no data: it must be restored")
    if isinstance(exc, LedgerUnavailable):
        return 503, error_body("ledger_unavailable", "", "the ledger did not answer in time: "
                               "retry with the same txn id", txn_id=exc.txn_id or "")
    if isinstance(exc, UnsafeRedisConfig):
        return 503, error_body("unsafe_redis", "", "the ledger refuses to write (unsafe configuration)")
    return 500, error_body("internal_error", "", "internal error: the outcome is unknown, "
                           "retry with the same txn id")


def raise_error(status_code: int, body: object, txn_id: str | None) -> None:
    """Raise core's exception for an error answer of the gateway (the client side of `error_of`)."""
    if not isinstance(body, dict) or not isinstance(body.get("error"), str):
        # not the gateway's answer (a proxy's page, a half-written body): outcome unknown
        raise LedgerUnavailable(f"the gateway answered HTTP {status_code} without an error code", txn_id)
    code, field, message = body["error"], body.get("field") or "", body.get("message") or ""
    if code == "account_not_found":
        error = AccountNotFound.__new__(AccountNotFound)
        InvalidRequest.__init__(error, "account_id", message)
        error.account_id = message.split("'")[1] if message.count("'") >= 2 else ""
        raise error
    if code in ("invalid_request", "unknown_field", "missing_field", "wrong_type", "malformed_json"):
        raise InvalidRequest(field or code, message)
    if code == "txn_conflict":
        raise TxnConflict(body.get("txn_id") or txn_id or "", body.get("stored", ""), body.get("requested", ""))
    if code == "ledger_not_initialized":
        raise LedgerNotInitialized("as the gateway says")
    if code == "unsafe_redis":
        raise UnsafeRedisConfig(message)
    if code in ("ledger_unavailable", "internal_error", "request_timeout") or status_code >= 500:
        error = LedgerUnavailable(f"the gateway: {message or code}", txn_id)
        error.switching = bool(body.get("switching"))     # a Sentinel failover under way
        raise error
    if code == "unauthorized":
        raise GatewayUnauthorized(message, txn_id)
    detail = {k: v for k, v in body.items() if k not in ("error", "field", "message")}
    raise GatewayRefused(code, field, message, status_code, **detail)


__all__ = ["API_VERSION", "MAX_BODY_BYTES", "MAX_BATCH_ITEMS", "SESSION_HEADER", "VERSION_HEADER", "CloseResult",
           "AccountInfo", "Card", "MemberMatch", "Promotion", "PastOperation", "CashierView", "SignIn",
           "GatewayRefused",
           "GatewayUnauthorized", "ERROR_STATUS", "encode", "decode_result", "decode_batch_item", "decode_account",
           "decode_card", "decode_match", "decode_promotion", "decode_operation", "error_body", "error_of",
           "raise_error", "LedgerError"]
