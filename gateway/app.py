"""The ledger gateway's web app (Starlette, served by uvicorn: gateway/cli.py): tills talk
to this instead of Redis.

Every request is authenticated by its terminal's token (core/terminals.py); every
money operation and read needs a cashier session (gateway/sessions.py) opened on that
same terminal; the journal's terminal and cashier come from those, never from the body.
Supervisor approvals are checked here, for one operation each. Bodies are checked
(gateway/schema.py) before core, and core runs unchanged: the till's txn id goes to
core as it is, so a retry of a request gets the first answer (`replayed`) whichever
gateway it reaches. Errors are JSON {"error", "field", "message"}: never a traceback.

A charge (deduct, hold) above the shop's `member_pin_above` setting of a member who has a
payment PIN or an enrolled member code needs it (`member_pin`, checked here with a lockout:
core/member_pins.py; or `member_code`, the scanned dynamic code: gateway/member_codes.py);
without it the answer is CONFIRMATION_REQUIRED, nothing applied or stored.

`POST /v1/ops/offline_deduct` settles a sale a till made while it reached no gateway, on
the terminal's credential with the cashier it states (`made_by`), within the server's
bounds (gateway/offline.py); `GET /v1/offline` answers the till's offline settings and the
blocked cards.

`POST /v1/ops/deduct_many` runs a batch of deductions through core's `Ledger.deduct_many`
(one call): every item checked as a single deduct, a refusal that concerns one item only
(the approval threshold: a batch carries no approval) answered at that item's position,
as core answers an item it could not decide; anything else refuses the whole batch.
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass

import anyio
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from core import InvalidRequest, Ledger, LedgerNotInitialized, LedgerUnavailable, TxnConflict
from core.capacity import memory_share, memory_use
from core.cashiers import CashierRegistry
from core.connection import is_sentinel
from core.history import History, OperationNotFound
from core.member_codes import MemberCodes
from core.member_pins import MemberPins, check_member_pin
from core.members import mask_phone
from core.keys import META_KEY
from core.records import DeductRequest
from core.result import Result, Status
from core.shifts import ShiftTotals, close_shift

from . import schema
from .member_codes import ENROL_GRANT_KIND, check_code_names_member, check_member_code, enrol_member_code
from .offline import OfflineBudgets, offline_info
from .schema import OPS, check_fields, check_plain_id, parse_json
from .sessions import DEFAULT_TTL_S, GrantStore, Session, SessionStore
from core.terminals import TerminalRegistry
from .wire import (API_VERSION, MAX_BODY_BYTES, SESSION_HEADER, VERSION_HEADER, GatewayRefused, encode,
                   error_body, error_of)

log = logging.getLogger("gateway")

BODY_READ_TIMEOUT_S = 10.0        # a client that sends its body slower than this is cut off
MAX_FIND_LIMIT = 50
MEMORY_CHECK_EVERY_S = 30.0       # the ping's Redis memory reading is at most this old
# what a till may ask a supervisor's approval for that is no ledger operation (settings: its own
# settings and printer; drawer: cash in / cash out of its drawer): checked here like any
# approval (the lockout counts), answered with no grant (it cannot carry an operation), and
# possible with no cashier signed in
LOCAL_APPROVALS = frozenset({"settings", "drawer"})
# charges that need the member's payment PIN above the shop's threshold (docs/gateway.md)
CHARGE_KINDS = frozenset({"deduct", "hold", "sale"})
_SPLIT_REFUND_STEP = re.compile(r"(.+)\.t[0-9]")


def split_refund_base(kind: str, txn_id: str) -> str:
    """The txn id whose approval a tender refund `<id>.t<n>` shares ('' for any other)."""
    if kind != "tender_refund":
        return ""
    m = _SPLIT_REFUND_STEP.fullmatch(txn_id)
    return m.group(1) if m else ""
# what a grant (POST /v1/approvals) may be asked for besides an operation
GRANT_KINDS = frozenset({"member_pin_reset", ENROL_GRANT_KIND})
# refusals a retry of an already decided txn id is answered through (its first decision)
REPLAYABLE_REFUSALS = frozenset({"session_required", "session_invalid", "approval_required", "approval_refused",
                                 "self_approval", "bonus_changed"})


@dataclass
class GatewaySettings:
    approval_above_minor: int = 0        # deductions/holds/top-ups above this need a supervisor (0: off)
    session_ttl_s: int = DEFAULT_TTL_S
    max_body_bytes: int = MAX_BODY_BYTES
    memory_check_interval_s: float = MEMORY_CHECK_EVERY_S   # the ping's Redis memory reading is at most this old


class Gateway:
    """The server side: one ledger, the cashier registry, terminals and sessions, on one Redis."""

    def __init__(self, ledger: Ledger, settings: GatewaySettings | None = None):
        self.ledger = ledger
        self.settings = settings or GatewaySettings()
        self.cashiers = CashierRegistry(ledger.client)
        self.terminals = TerminalRegistry(ledger.client)
        self.sessions = SessionStore(ledger.client, ttl_s=self.settings.session_ttl_s)
        self.grants = GrantStore(ledger.client)
        self.history = History(ledger)
        self.member_pins = MemberPins(ledger.client)
        self.member_codes = MemberCodes(ledger.client, pins=self.member_pins)
        self.offline_budgets = OfflineBudgets(ledger.client)
        self._memory: tuple[float, float | None] | None = None     # (read at, share)

    # ---------------------------------------------------------------- who is asking

    def terminal_of(self, request: Request) -> str:
        auth = request.headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise GatewayRefused("unauthorized", "", "a terminal credential is required", 401)
        terminal_id = self.terminals.authenticate(token.strip(), request.headers.get(VERSION_HEADER, ""))
        if terminal_id is None:
            raise GatewayRefused("unauthorized", "", "the terminal credential is unknown or revoked", 401)
        return terminal_id

    def session_of(self, request: Request, terminal_id: str) -> Session:
        token = request.headers.get(SESSION_HEADER, "")
        if not token:
            raise GatewayRefused("session_required", "", "a cashier must be signed in", 401)
        session = self.sessions.get(token)
        if session is None:
            raise GatewayRefused("session_invalid", "", "the session has ended or expired: sign in again", 401)
        if session.terminal_id != terminal_id:
            log.warning("terminal %s used a session of terminal %s: refused", terminal_id, session.terminal_id)
            raise GatewayRefused("session_other_terminal", "", "this session belongs to another terminal", 403)
        return session

    @staticmethod
    def check_claims(body: dict, terminal_id: str, cashier_id: str | None) -> None:
        if "terminal_id" in body and body.pop("terminal_id") != terminal_id:
            raise GatewayRefused("terminal_mismatch", "terminal_id", "the body names another terminal")
        if "cashier_id" in body and cashier_id is not None and body.pop("cashier_id") != cashier_id:
            raise GatewayRefused("cashier_mismatch", "cashier_id", "the body names another cashier")

    # ---------------------------------------------------------------- approvals and rights

    def approver(self, kind: str, body: dict, cashier_id: str, terminal_id: str) -> str:
        """The supervisor who approved this one operation ('' when none is needed)."""
        spec = OPS[kind]
        approval = body.pop("approval", None)
        needed = spec.approval == "always"
        threshold = self.settings.approval_above_minor
        if spec.approval in ("above", "top_up") and threshold and body.get("amount_minor", 0) > threshold:
            needed = True
        if spec.approval == "top_up" and not needed:
            cashier = self.cashiers.get(cashier_id)
            needed = cashier is None or not (cashier.can_top_up or cashier.supervisor)
        if not needed and approval is None:
            return ""
        if approval is None:
            raise GatewayRefused("approval_required", "approval", f"{kind} needs a supervisor's PIN")
        if "grant" in approval:
            return self.use_grant(check_fields(approval, schema.APPROVAL_GRANT, common=False)["grant"],
                                  kind, body["txn_id"], cashier_id, terminal_id)
        check_fields(approval, schema.APPROVAL, common=False)
        return self.check_supervisor(approval["supervisor_id"], approval["pin"], cashier_id)

    def check_supervisor(self, supervisor_id: str, pin: str, cashier_id: str) -> str:
        """The supervisor's id once their PIN is checked here for `cashier_id`'s operation
        (failures count towards their lockout), else GatewayRefused saying why."""
        if supervisor_id == cashier_id:
            raise GatewayRefused("self_approval", "supervisor_id", "a cashier cannot approve their own operation")
        signin, granted = self.cashiers.approve(supervisor_id, pin)
        if granted is None:
            outcome = "wrong_pin" if signin.outcome == "unknown" else signin.outcome
            raise GatewayRefused("approval_refused", "approval", "the supervisor's approval was refused",
                                 outcome=outcome, locked_s=signin.locked_s,
                                 attempts_left=signin.attempts_left if outcome == "wrong_pin" else 0)
        return granted.use()

    def use_grant(self, token: str, kind: str, txn_id: str, cashier_id: str, terminal_id: str) -> str:
        """The supervisor of an approval POST /v1/approvals gave this session, used by `txn_id`
        (a retry of `txn_id` may carry it again; any other operation is refused)."""
        # the refund of a split sale is one approved operation (one outbox row on the till):
        # its tender refunds '<id>.t<n>' share the approval of '<id>' (its card leg's refund)
        step_of = split_refund_base(kind, txn_id)
        txn_id = step_of or txn_id
        grant = self.grants.use(token, txn_id)
        if grant is None or grant.terminal_id != terminal_id or grant.cashier_id != cashier_id:
            raise GatewayRefused("approval_refused", "approval", "the approval is unknown, expired or not "
                                 "this session's: ask the supervisor again", outcome="expired")
        if grant.kind and grant.kind != kind and not (step_of and grant.kind == "refund"):
            raise GatewayRefused("approval_refused", "approval", f"the approval was given for {grant.kind}, "
                                 f"not {kind}", outcome="other_operation")
        if grant.txn_id != txn_id:
            raise GatewayRefused("approval_refused", "approval", "the approval was used for another operation: "
                                 "ask the supervisor again", outcome="used")
        return grant.supervisor_id

    def approve(self, request: Request, body: dict) -> dict:
        """POST /v1/approvals: a supervisor's id and PIN checked here (the lockout counts), for
        one operation of this session; the answer's `grant` goes with that operation."""
        terminal_id = self.terminal_of(request)
        check_fields(body, schema.APPROVAL_REQUEST, common=False)
        kind = body.get("kind", "")
        if kind in LOCAL_APPROVALS:
            return self.approve_local(request, body, terminal_id, kind)
        session = self.session_of(request, terminal_id)
        if kind and kind not in OPS and kind not in GRANT_KINDS:
            raise GatewayRefused("kind_refused", "kind", "not an operation a till may ask for")
        supervisor_id = self.check_supervisor(check_plain_id(body["supervisor_id"], "supervisor_id"), body["pin"],
                                              session.cashier_id)
        token = self.grants.issue(supervisor_id, terminal_id, session.cashier_id, kind)
        log.info("supervisor %s approved %s for %s at %s", supervisor_id, kind or "one operation",
                 session.cashier_id, terminal_id)
        return {"outcome": "ok", "grant": token, "supervisor_id": supervisor_id, "expires_in_s": self.grants.ttl_s}

    def approve_local(self, request: Request, body: dict, terminal_id: str, kind: str) -> dict:
        """A supervisor's approval of a till-local action (LOCAL_APPROVALS): the PIN checked
        here; no grant. With a cashier's session, that cashier may not approve it themselves."""
        token = request.headers.get(SESSION_HEADER, "")
        cashier_id = self.session_of(request, terminal_id).cashier_id if token else ""
        supervisor_id = self.check_supervisor(check_plain_id(body["supervisor_id"], "supervisor_id"), body["pin"],
                                              cashier_id)
        log.info("supervisor %s approved %s at %s", supervisor_id, kind, terminal_id)
        return {"outcome": "ok", "grant": "", "supervisor_id": supervisor_id, "kind": kind}

    # ---------------------------------------------------------------- rules

    def check_bonus(self, body: dict) -> None:
        """A top-up's bonus is the promotion in force's, decided here: the till's
        `bonus_minor` is its preview (what the customer was shown), and a preview that is
        not what the promotions give now (one changed, or a till that made it up) is
        refused with the bonus in force, so the cashier shows it and asks again. The
        customer never gets a bonus other than the one shown, nor one no promotion grants."""
        granted = self.ledger.bonus_for(body["amount_minor"])
        expected_minor = granted.bonus_minor if granted is not None else 0
        if body.get("bonus_minor", 0) != expected_minor:
            raise GatewayRefused("bonus_changed", "bonus_minor",
                                 "the bonus is not the promotion in force's: show it and ask again", 409,
                                 expected_bonus_minor=expected_minor)

    # ---------------------------------------------------------------- operations

    def run_op(self, kind: str, body: dict, terminal_id: str, cashier_id: str):
        led, b = self.ledger, body
        who = dict(terminal_id=terminal_id, cashier_id=cashier_id)
        if kind == "deduct":
            return led.deduct(b["account_id"], b["amount_minor"], txn_id=b["txn_id"], card_no=b.get("card_no"), **who)
        if kind == "credit":
            return led.credit(b["account_id"], b["amount_minor"], txn_id=b["txn_id"],
                              method=b.get("method", "cash"), bonus_minor=b.get("bonus_minor", 0), **who)
        if kind == "refund":
            return led.refund(b["account_id"], b["amount_minor"], txn_id=b["txn_id"],
                              original_txn_id=b["original_txn_id"], **who)
        if kind == "sale":
            return led.sale(b["account_id"], b["amount_minor"], b["tenders"], txn_id=b["txn_id"],
                            total_minor=b["total_minor"], change_minor=b.get("change_minor", 0),
                            card_no=b.get("card_no"), **who)
        if kind == "tender_refund":
            return led.tender_refund(b["account_id"], b["amount_minor"], txn_id=b["txn_id"],
                                     original_txn_id=b["original_txn_id"], method=b["method"], **who)
        if kind == "hold":
            return led.hold(b["account_id"], b["amount_minor"], txn_id=b["txn_id"], ttl_s=b["ttl_s"],
                            card_no=b.get("card_no"), **who)
        if kind == "capture":
            return led.capture(b["hold_txn_id"], b["amount_minor"], txn_id=b["txn_id"],
                               account_id=b.get("account_id"), **who)
        if kind == "void":
            return led.void(b["hold_txn_id"], txn_id=b["txn_id"], account_id=b.get("account_id"), **who)
        if kind == "open":
            return led.open_account(b["account_id"], txn_id=b["txn_id"], holder_name=b.get("holder_name"),
                                    phone=b.get("phone"), **who)
        if kind == "issue_card":
            return led.issue_card(b["account_id"], b["card_no"], txn_id=b["txn_id"], **who)
        if kind == "block_card":
            return led.block_card(b["card_no"], txn_id=b["txn_id"], reason=b["reason"], **who)
        if kind == "close":
            return led.close_account(b["account_id"], txn_id=b["txn_id"], **who)
        if kind == "shift_close":
            totals = b["totals"]
            try:
                totals = ShiftTotals(**totals)
            except TypeError:
                raise InvalidRequest("totals", "unknown or missing totals") from None
            shift_cashier = b.get("shift_cashier_id") or cashier_id
            return close_shift(led, terminal_id=terminal_id, shift_no=b["shift_no"], closed_by=cashier_id,
                               totals=totals, cashier_id=shift_cashier, opened_ms=b.get("opened_ms"),
                               txn_id=b["txn_id"], extra_totals=b.get("extra_totals"))
        raise GatewayRefused("kind_refused", "kind", "not an operation a till may ask for")

    def operation(self, request: Request, kind: str, body: dict) -> dict:
        """Thread: check who asks, then run one money operation; its Result as JSON."""
        terminal_id = self.terminal_of(request)
        if kind not in OPS:
            raise GatewayRefused("kind_refused", "kind", "not an operation a till may ask for")
        check_fields(body, OPS[kind])
        self.check_claims(body, terminal_id, None)      # another terminal named: refused, replay or not
        if kind == "shift_close" and not request.headers.get(SESSION_HEADER):
            return self.stated_shift_close(body, terminal_id)
        if kind == "offline_deduct":
            return self.offline_settlement(body, terminal_id)
        if "closed_by" in body:
            raise GatewayRefused("unknown_field", "closed_by", "a session's Z record is closed by its cashier", 400)
        try:
            session = self.session_of(request, terminal_id)
            self.check_claims(body, terminal_id, session.cashier_id)
            approved_by = self.approver(kind, body, session.cashier_id, terminal_id)
            if kind == "shift_close" and body.get("shift_cashier_id", session.cashier_id) != session.cashier_id \
                    and not approved_by:
                raise GatewayRefused("approval_required", "approval", "closing another cashier's shift needs "
                                     "a supervisor's PIN")
            cashier_id = session.cashier_id
            if kind == "credit":
                self.check_bonus(body)
        except GatewayRefused as exc:
            # A retry of a request this terminal had decided (its reply lost) must get the first
            # answer even once the session ended or the approval no longer holds: else the till
            # would be told "nothing changed" about money that moved. Core replays it, writes nothing.
            if exc.code not in REPLAYABLE_REFUSALS or not self.decided_for(body["txn_id"], terminal_id):
                raise
            log.info("%s %s: %s, but decided earlier for %s: answering the first decision", kind, body["txn_id"],
                     exc.code, terminal_id)
            for name in ("approval", "terminal_id", "cashier_id"):
                body.pop(name, None)
            cashier_id, approved_by = "", ""
        member_pin = body.pop("member_pin", None)
        member_code = body.pop("member_code", None)
        if kind in CHARGE_KINDS and cashier_id:
            unconfirmed = self.confirm_member(kind, body, terminal_id, member_pin, member_code)
            if unconfirmed is not None:
                log.info("%s %s %s by %s@%s: CONFIRMATION_REQUIRED (the member's PIN)", kind, body["account_id"],
                         body["txn_id"], cashier_id, terminal_id)
                return unconfirmed
        result = self.run_op(kind, body, terminal_id, cashier_id)
        log.info("%s %s %s by %s@%s%s: %s%s", kind, body.get("account_id", ""), body["txn_id"],
                 cashier_id, terminal_id, f" approved by {approved_by}" if approved_by else "",
                 result.status.value, " (replayed)" if result.replayed else "")
        answer = encode(result)
        if approved_by:
            answer["approved_by"] = approved_by
        return answer

    # ---------------------------------------------------------------- member payment PINs

    def needs_member_pin(self, account_id: str, amount_minor: int, txn_id: str, terminal_id: str,
                         threshold: int | None = None) -> bool:
        """Whether this charge needs the member's confirmation: above the shop's threshold, the
        member has a PIN or a member code, and `txn_id` is not decided yet (a retry of a
        decided charge is answered its first decision by core: no second confirmation)."""
        if threshold is None:
            threshold = self.ledger.shop_settings().member_pin_above_minor
        if amount_minor <= threshold or not (self.member_pins.has_pin(account_id)
                                             or self.member_codes.enrolled(account_id)):
            return False
        return not self.decided_for(txn_id, terminal_id)

    @staticmethod
    def unconfirmed(kind: str, body: dict, locked: bool) -> dict:
        """The answer to a charge without the member's PIN: CONFIRMATION_REQUIRED, nothing
        applied and nothing stored (the same txn id, sent again with the PIN, is decided then)."""
        answer = encode(Result(Status.CONFIRMATION_REQUIRED, 0, False, body["txn_id"], body["account_id"], kind,
                               body["amount_minor"]))
        answer["member_pin_locked"] = locked
        return answer

    def confirm_member(self, kind: str, body: dict, terminal_id: str, member_pin: str | None,
                       member_code: str | None = None) -> dict | None:
        """None when the charge may run (no confirmation needed, or the member's PIN or
        member code checked here: the lockout counts); else the CONFIRMATION_REQUIRED
        answer, or GatewayRefused ('member_pin_refused' / 'member_code_refused': `outcome`
        wrong_pin / wrong_code with `attempts_left`, locked, code_used, code_expired...)."""
        if member_pin is not None:
            check_member_pin(member_pin)            # malformed: a field error, not a guess
        if member_code is not None:
            check_code_names_member(body, member_code)
        account_id = body["account_id"]
        if not self.needs_member_pin(account_id, body["amount_minor"], body["txn_id"], terminal_id):
            return None
        if member_pin is None and member_code is not None:
            check_member_code(self, kind, body, terminal_id, member_code)
            return None
        if member_pin is None:
            return self.unconfirmed(kind, body, self.member_pins.locked(account_id))
        check = self.member_pins.verify(account_id, member_pin)
        if check.outcome == "no_pin" and self.member_codes.enrolled(account_id):
            # a member with a member code and no PIN: any PIN would do, so none does
            raise GatewayRefused("member_pin_refused", "member_pin", "the member has no payment PIN: scan their "
                                 "member code", outcome="no_pin", attempts_left=0)
        if check.ok or check.outcome == "no_pin":     # no_pin: reset in between, none needed now
            return None
        log.warning("%s %s for %s@%s: the member's PIN refused (%s)", kind, body["txn_id"], account_id, terminal_id,
                    check.outcome)
        if check.outcome == "locked":
            raise GatewayRefused("member_pin_refused", "member_pin", "the member's payment PIN is locked after "
                                 "too many wrong entries: a supervisor must reset it", outcome="locked",
                                 attempts_left=0)
        raise GatewayRefused("member_pin_refused", "member_pin", "the member's payment PIN is wrong",
                             outcome="wrong_pin", attempts_left=check.attempts_left)

    def set_member_pin(self, request: Request, account_id: str, body: dict) -> dict:
        """POST /v1/members/{account_id}/pin: the member's new payment PIN, entered twice on
        the till (both must match); a member who has one gives the old one too (checked
        here, the lockout counts)."""
        terminal_id = self.terminal_of(request)
        session = self.session_of(request, terminal_id)
        check_fields(body, schema.MEMBER_PIN_SET, common=False)
        account_id = check_plain_id(account_id, "account_id")
        check_member_pin(body["pin"], "pin")
        check_member_pin(body["pin_again"], "pin_again")
        if body["pin"] != body["pin_again"]:
            raise InvalidRequest("pin_again", "the two entries of the new PIN differ")
        self.ledger.account(account_id)             # AccountNotFound for an unknown member
        if self.member_pins.has_pin(account_id):
            if "old_pin" not in body:
                raise GatewayRefused("member_pin_refused", "old_pin", "the member has a PIN: the old one is "
                                     "needed to change it", outcome="old_pin_required", attempts_left=0)
            check = self.member_pins.verify(account_id, check_member_pin(body["old_pin"], "old_pin"))
            if check.outcome in ("wrong_pin", "locked"):
                raise GatewayRefused("member_pin_refused", "old_pin", "the member's old payment PIN was refused",
                                     outcome=check.outcome, attempts_left=check.attempts_left)
            self.member_pins.change_pin(account_id, body["pin"], body["pin_again"])
        else:
            self.member_pins.set_pin(account_id, body["pin"], body["pin_again"])
        log.info("member %s: payment PIN set at %s by %s", account_id, terminal_id, session.cashier_id)
        return {"outcome": "ok", "account_id": account_id, "member_pin_set": True}

    def reset_member_pin(self, request: Request, account_id: str, body: dict) -> dict:
        """POST /v1/members/{account_id}/pin/reset: a supervisor's approval (a grant of kind
        member_pin_reset, or their id and PIN) removes the member's PIN and lifts its lock."""
        terminal_id = self.terminal_of(request)
        session = self.session_of(request, terminal_id)
        check_fields(body, schema.MEMBER_PIN_RESET, common=False)
        account_id = check_plain_id(account_id, "account_id")
        approval = body["approval"]
        if "grant" in approval:
            token = check_fields(approval, schema.APPROVAL_GRANT, common=False)["grant"]
            supervisor_id = self.use_grant(token, "member_pin_reset", f"mpin-reset:{account_id}",
                                           session.cashier_id, terminal_id)
        else:
            check_fields(approval, schema.APPROVAL, common=False)
            supervisor_id = self.check_supervisor(approval["supervisor_id"], approval["pin"], session.cashier_id)
        had = self.member_pins.reset(account_id)
        log.info("member %s: payment PIN reset at %s by %s, approved by %s", account_id, terminal_id,
                 session.cashier_id, supervisor_id)
        return {"outcome": "ok", "account_id": account_id, "had_pin": had, "approved_by": supervisor_id}

    def enrol_member_code(self, request: Request, account_id: str, body: dict) -> dict:
        return enrol_member_code(self, request, account_id, body)

    def deduct_many(self, request: Request, body: dict) -> dict:
        """Thread: POST /v1/ops/deduct_many. `{"results": [...]}`, one per item in order: its
        Result, or the error of an item refused or not decided (`{"error", "field",
        "message", ...}`: `approval_required` above the threshold, `txn_conflict`,
        `ledger_unavailable`...). Core's `deduct_many` runs once, for the items not refused.

        The whole batch is refused (nothing decided) for a bad credential, a bad body (any
        item: schema, `@` ids, too many items) or a body naming another terminal or cashier.
        With no valid session, items this terminal had decided get their first decision
        (the outbox rule of `operation`) and the others `session_required`/`session_invalid`;
        a batch with no decided item is refused as a whole."""
        terminal_id = self.terminal_of(request)
        items = schema.check_batch(body)
        self.check_claims(body, terminal_id, None)
        refused: dict[int, GatewayRefused] = {}
        try:
            session = self.session_of(request, terminal_id)
            self.check_claims(body, terminal_id, session.cashier_id)
            cashier_id = session.cashier_id
        except GatewayRefused as exc:
            if exc.code not in REPLAYABLE_REFUSALS:
                raise
            refused = {i: exc for i, item in enumerate(items) if not self.decided_for(item["txn_id"], terminal_id)}
            if len(refused) == len(items):
                raise
            cashier_id = ""
        threshold = self.settings.approval_above_minor
        if threshold and cashier_id:
            for i, item in enumerate(items):
                if item["amount_minor"] > threshold and not self.decided_for(item["txn_id"], terminal_id):
                    refused[i] = GatewayRefused("approval_required", "approval", "a deduction above "
                                                f"{threshold} minor units needs a supervisor's PIN: send it "
                                                "alone (POST /v1/ops/deduct), not in a batch")
        unconfirmed: dict[int, dict] = {}
        if cashier_id:
            pin_above = self.ledger.shop_settings().member_pin_above_minor
            for i, item in enumerate(items):
                if i not in refused and self.needs_member_pin(item["account_id"], item["amount_minor"],
                                                              item["txn_id"], terminal_id, pin_above):
                    unconfirmed[i] = self.unconfirmed("deduct", item, self.member_pins.locked(item["account_id"]))
        run = [i for i in range(len(items)) if i not in refused and i not in unconfirmed]
        answers = self.ledger.deduct_many([
            DeductRequest(item["account_id"], item["amount_minor"], item["txn_id"], terminal_id, cashier_id,
                          item.get("card_no")) for item in (items[i] for i in run)])
        results: list = [None] * len(items)
        for i, exc in refused.items():
            results[i] = error_of(exc)[1]
        for i, answer in unconfirmed.items():
            results[i] = answer
        counts = {"applied": 0, "declined": len(unconfirmed), "replayed": 0, "errors": len(refused)}
        for i, answer in zip(run, answers):
            if isinstance(answer, Exception):
                results[i] = error_of(answer)[1]
                counts["errors"] += 1
                continue
            results[i] = encode(answer)
            counts["replayed" if answer.replayed else "applied" if answer.applied else "declined"] += 1
        log.info("deduct_many of %d by %s@%s: %s", len(items), cashier_id, terminal_id,
                 ", ".join(f"{n} {k}" for k, n in counts.items() if n))
        return {"results": results}

    def stated_shift_close(self, body: dict, terminal_id: str) -> dict:
        """A Z record sent on the terminal's credential alone: the till journals a shift's
        totals whenever the ledger is back, often after its cashier signed out (and after a
        restart no session exists). It moves no money, and its figures are the till's own
        statement either way; so it is accepted for this terminal's own shifts, with the
        `closed_by` the till states (logged as such)."""
        if "closed_by" not in body:
            raise GatewayRefused("missing_field", "closed_by", "a Z record without a session names who closed it",
                                 400)
        body.pop("approval", None)
        closed_by = body.pop("closed_by")
        result = self.run_op("shift_close", body, terminal_id, closed_by)
        log.info("shift_close %s at %s, closed by %s as the terminal states: %s%s", body["txn_id"], terminal_id,
                 closed_by, result.status.value, " (replayed)" if result.replayed else "")
        return encode(result)

    def offline_settlement(self, body: dict, terminal_id: str) -> dict:
        """A sale this till made offline (gateway/offline.py): on the terminal's credential,
        journaled with the cashier it states; within the till's offline budget (checked
        here) and the per-member bound (checked by the ledger's script). No approval, no
        member PIN: the till sells offline only what needs neither (docs/terminal.md)."""
        for name in ("approval", "cashier_id"):
            if name in body:
                raise GatewayRefused("unknown_field", name, "an offline settlement states its cashier in made_by",
                                     400)
        made_by = body.pop("made_by")
        txn_id, account_id, amount = body["txn_id"], body["account_id"], body["amount_minor"]
        limits = self.ledger.offline_limits()
        if not self.offline_budgets.reserve(terminal_id, txn_id, amount, body["made_at_ms"], limits) \
                and not self.decided_for(txn_id, terminal_id):
            log.warning("offline_deduct %s %s at %s: past the till's offline budget %d", account_id, txn_id,
                        terminal_id, limits.till_budget_minor)
            return encode(Result(Status.OFFLINE_LIMIT_EXCEEDED, 0, False, txn_id, account_id, "offline", amount))
        try:
            result = self.ledger.offline_deduct(account_id, amount, txn_id=txn_id, terminal_id=terminal_id,
                                                cashier_id=made_by, made_at_ms=body["made_at_ms"],
                                                card_no=body.get("card_no"))
        except (InvalidRequest, TxnConflict):
            self.offline_budgets.release(terminal_id, txn_id)    # refused, nothing decided: no budget used
            raise
        if not result.applied:
            self.offline_budgets.release(terminal_id, txn_id)
        log.info("offline_deduct %s %s at %s, made by %s as the terminal states: %s%s%s", account_id, txn_id,
                 terminal_id, made_by, result.status.value, f", debt {result.debt_minor}" if result.debt_minor else "",
                 " (replayed)" if result.replayed else "")
        return encode(result)

    def offline(self, request: Request) -> dict:
        """GET /v1/offline: the till's offline settings and the blocked cards (terminal
        credential alone: a till keeps them fresh whoever is signed in)."""
        self.terminal_of(request)
        return offline_info(self.ledger, self.settings.approval_above_minor)

    def decided_for(self, txn_id: str, terminal_id: str) -> bool:
        """Whether core holds a decision of `txn_id` made for this terminal (its journal entry
        names the terminal; a decline, which has none, by the till's txn id prefix)."""
        try:
            past = self.history.load(txn_id)
        except (OperationNotFound, InvalidRequest):
            return False
        if past.terminal_id:
            return past.terminal_id == terminal_id
        return txn_id.startswith(f"{terminal_id[:20]}-")

    # ---------------------------------------------------------------- sign-in

    def sign_in(self, request: Request, body: dict) -> tuple[int, dict]:
        terminal_id = self.terminal_of(request)
        check_fields(body, schema.SIGN_IN, common=False)
        self.check_claims(body, terminal_id, None)
        signin = self.cashiers.verify(body["cashier_id"], body["pin"])
        if not signin.ok:
            # an unknown id and a wrong PIN look alike to the till (no id enumeration)
            outcome = "wrong_pin" if signin.outcome == "unknown" else signin.outcome
            log.warning("sign-in of %s at %s refused: %s", body["cashier_id"], terminal_id, signin.outcome)
            return 401, error_body("sign_in_refused", "pin", "sign-in refused", outcome=outcome,
                                   locked_s=signin.locked_s,
                                   attempts_left=signin.attempts_left if outcome == "wrong_pin" else 0)
        c = signin.cashier
        token = self.sessions.open(c.cashier_id, terminal_id)
        log.info("cashier %s signed in at %s", c.cashier_id, terminal_id)
        return 200, {"outcome": "ok", "session": token, "expires_in_s": self.sessions.ttl_s,
                     "cashier": {"cashier_id": c.cashier_id, "name": c.name, "supervisor": c.supervisor,
                                 "can_top_up": c.can_top_up}}

    def sign_out(self, request: Request) -> None:
        terminal_id = self.terminal_of(request)
        session = self.session_of(request, terminal_id)
        self.sessions.close(request.headers.get(SESSION_HEADER, ""))
        log.info("cashier %s signed out at %s", session.cashier_id, terminal_id)

    # ---------------------------------------------------------------- reads

    def read(self, request: Request, what: str, ident: str) -> dict:
        terminal_id = self.terminal_of(request)
        self.session_of(request, terminal_id)
        params = dict(request.query_params)
        allowed = {"members": {"query", "limit"}, "recent": {"count"}}.get(what, set())
        for name in params:
            if name not in allowed:
                raise GatewayRefused("unknown_field", name, "this parameter is not part of the request", 400)
        led = self.ledger
        if what == "account":
            account_id = check_plain_id(ident, "account_id")
            # whether the member has a payment PIN: a till sells offline only what needs none
            return {**encode(led.account(account_id)), "member_pin_set": self.member_pins.has_pin(account_id)}
        if what == "balances":
            balance, available = led.balances(check_plain_id(ident, "account_id"))
            return {"balance_minor": balance, "available_minor": available}
        if what == "card":
            return encode(led.resolve_card(check_plain_id(ident, "card_no")))
        if what == "profile":
            # the member profile of the till: the phone masked here, so the till never holds it
            account_id = check_plain_id(ident, "account_id")
            return {"account": encode(led.account(account_id)), "cards": encode(led.account_cards(account_id)),
                    "phone_masked": mask_phone(led.member_phone(account_id)),
                    "member_pin": {"set": self.member_pins.has_pin(account_id),
                                   "locked": self.member_pins.locked(account_id)},
                    "member_code": {"enrolled": self.member_codes.enrolled(account_id)}}
        if what == "hold_account":
            return {"account_id": led.hold_account(check_plain_id(ident, "hold_txn_id"))}
        if what == "members":
            try:
                limit = int(params.get("limit", "8"))
            except ValueError:
                raise GatewayRefused("wrong_type", "limit", "must be a whole number", 400) from None
            return {"matches": encode(led.find_members(params.get("query", ""), limit=min(limit, MAX_FIND_LIMIT)))}
        if what == "operation":
            return encode(self.history.load(check_plain_id(ident, "txn_id")))
        if what == "recent":
            try:
                count = int(params.get("count", "20"))
            except ValueError:
                raise GatewayRefused("wrong_type", "count", "must be a whole number", 400) from None
            return {"operations": encode(self.history.recent(check_plain_id(ident, "account_id"), count=count))}
        if what == "promotions":
            return {"promotions": encode(led.promotions())}
        raise GatewayRefused("not_found", "", "no such resource", 404)

    def ping(self, request: Request) -> dict:
        terminal_id = self.terminal_of(request)
        if not self.ledger.client.exists(META_KEY):
            raise LedgerNotInitialized("no cs:meta key")
        retention_s = self.ledger.load_retention()       # the shop's setting: the till's re-send limit
        return {"status": "ok", "api": API_VERSION, "terminal_id": terminal_id, "retention_s": retention_s,
                "memory_share": self.memory_share()}

    def memory_share(self) -> float | None:
        """Redis used / maxmemory (None: none set, or not readable), read at most every
        MEMORY_CHECK_EVERY_S: tills show the supervisor notice from it."""
        now = time.monotonic()
        if self._memory is None or now - self._memory[0] >= self.settings.memory_check_interval_s:
            try:
                share = memory_share(*memory_use(self.ledger.client))
            except RedisError as exc:
                log.info("Redis memory not read: %s", type(exc).__name__)
                share = None
            self._memory = (now, share)
        return self._memory[1]


# -------------------------------------------------------------------- HTTP glue

def _json(status: int, body: dict) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


def _failure(exc: Exception, *, sentinel: bool = False) -> JSONResponse:
    """The JSON error of `exc`. `sentinel`: the ledger is a Sentinel deployment, so Redis
    unreachable most likely means a failover under way: the answer says `switching`, and
    tills show "reconnecting" instead of "offline"."""
    if isinstance(exc, (RedisError, OSError)) and not isinstance(exc, InvalidRequest):
        exc = LedgerUnavailable(type(exc).__name__)
    status, body = error_of(exc)
    if status == 500:
        log.error("internal error: %s", type(exc).__name__, exc_info=exc)
    if sentinel and body.get("error") == "ledger_unavailable":
        body["switching"] = True
    return _json(status, body)


async def _body(request: Request, limit: int) -> dict:
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise GatewayRefused("unsupported_media_type", "", "the body must be application/json", 415)
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise GatewayRefused("body_too_large", "", f"the body is larger than {limit} bytes", 413)
    chunks, size = [], 0
    with anyio.fail_after(BODY_READ_TIMEOUT_S):
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise GatewayRefused("body_too_large", "", f"the body is larger than {limit} bytes", 413)
            chunks.append(chunk)
    return parse_json(b"".join(chunks))


def create_app(gateway: Gateway) -> Starlette:
    limit = gateway.settings.max_body_bytes
    sentinel = is_sentinel(gateway.ledger.client)

    async def guarded(work):
        try:
            return await work()
        except TimeoutError:
            return _json(408, error_body("request_timeout", "", "the body was not sent in time"))
        except Exception as exc:        # every failure becomes a JSON error, never a traceback
            return _failure(exc, sentinel=sentinel)

    async def operation(request: Request):
        async def work():
            body = await _body(request, limit)
            kind = request.path_params["kind"]
            return _json(200, await run_in_threadpool(gateway.operation, request, kind, body))
        return await guarded(work)

    async def deduct_many(request: Request):
        async def work():
            body = await _body(request, limit)
            return _json(200, await run_in_threadpool(gateway.deduct_many, request, body))
        return await guarded(work)

    async def sessions(request: Request):
        async def work():
            if request.method == "DELETE":
                await run_in_threadpool(gateway.sign_out, request)
                return Response(status_code=204)
            body = await _body(request, limit)
            return _json(*await run_in_threadpool(gateway.sign_in, request, body))
        return await guarded(work)

    async def approvals(request: Request):
        async def work():
            body = await _body(request, limit)
            return _json(200, await run_in_threadpool(gateway.approve, request, body))
        return await guarded(work)

    async def member_pin(request: Request):
        async def work():
            body = await _body(request, limit)
            account_id = request.path_params["account_id"]
            if request.url.path.endswith("/code"):
                return _json(200, await run_in_threadpool(gateway.enrol_member_code, request, account_id, body))
            if request.url.path.endswith("/reset"):
                return _json(200, await run_in_threadpool(gateway.reset_member_pin, request, account_id, body))
            return _json(200, await run_in_threadpool(gateway.set_member_pin, request, account_id, body))
        return await guarded(work)

    async def offline(request: Request):
        async def work():
            return _json(200, await run_in_threadpool(gateway.offline, request))
        return await guarded(work)

    def reader(what: str, param: str = ""):
        async def endpoint(request: Request):
            async def work():
                ident = request.path_params.get(param, "") if param else ""
                return _json(200, await run_in_threadpool(gateway.read, request, what, ident))
            return await guarded(work)
        return endpoint

    async def ping(request: Request):
        async def work():
            return _json(200, await run_in_threadpool(gateway.ping, request))
        return await guarded(work)

    async def health(_request: Request):
        return _json(200, {"status": "ok", "api": API_VERSION})

    async def http_error(_request: Request, exc: HTTPException):
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "invalid_request")
        return _json(exc.status_code, error_body(code, "", "no such endpoint or method"))

    async def server_error(_request: Request, exc: Exception):
        return _failure(exc)

    v = f"/{API_VERSION}"
    routes = [
        Route(f"{v}/health", health, methods=["GET"]),
        Route(f"{v}/ping", ping, methods=["GET"]),
        Route(f"{v}/sessions", sessions, methods=["POST", "DELETE"]),
        Route(f"{v}/approvals", approvals, methods=["POST"]),
        Route(f"{v}/ops/deduct_many", deduct_many, methods=["POST"]),      # before ops/{kind}
        Route(f"{v}/ops/{{kind}}", operation, methods=["POST"]),
        Route(f"{v}/accounts/{{account_id}}", reader("account", "account_id"), methods=["GET"]),
        Route(f"{v}/accounts/{{account_id}}/balances", reader("balances", "account_id"), methods=["GET"]),
        Route(f"{v}/accounts/{{account_id}}/history", reader("recent", "account_id"), methods=["GET"]),
        Route(f"{v}/accounts/{{account_id}}/profile", reader("profile", "account_id"), methods=["GET"]),
        Route(f"{v}/txns/{{txn_id}}", reader("operation", "txn_id"), methods=["GET"]),
        Route(f"{v}/cards/{{card_no}}", reader("card", "card_no"), methods=["GET"]),
        Route(f"{v}/holds/{{hold_txn_id}}/account", reader("hold_account", "hold_txn_id"), methods=["GET"]),
        Route(f"{v}/members", reader("members"), methods=["GET"]),
        Route(f"{v}/members/{{account_id}}/pin", member_pin, methods=["POST"]),
        Route(f"{v}/members/{{account_id}}/pin/reset", member_pin, methods=["POST"]),
        Route(f"{v}/members/{{account_id}}/code", member_pin, methods=["POST"]),
        Route(f"{v}/promotions", reader("promotions"), methods=["GET"]),
        Route(f"{v}/offline", offline, methods=["GET"]),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: http_error, Exception: server_error})
    app.state.gateway = gateway
    app.state.started_s = time.time()
    return app


__all__ = ["Gateway", "GatewaySettings", "create_app"]
