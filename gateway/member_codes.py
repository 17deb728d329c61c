"""The gateway's side of dynamic member codes (会员码, issue 31 item 7; core/member_codes.py):
a charge may carry `member_code` (the scanned `MC1:<account_id>:<6 digits>`) instead of
`member_pin`, checked where the PIN is (Gateway.confirm_member) and used up by that
charge's txn id; and POST /v1/members/{account_id}/code enrols a member's code with a
supervisor's approval (a grant of kind `member_code_enrol`, or their id and PIN),
answering the secret's otpauth:// URI that one time.
"""
from __future__ import annotations

import logging

from core.member_codes import parse_member_code

from . import schema
from .schema import check_fields, check_plain_id
from .wire import GatewayRefused

log = logging.getLogger("gateway")

ENROL_GRANT_KIND = "member_code_enrol"
_REASONS = {
    "wrong_code": "the member code is wrong",
    "code_used": "this member code was used already: ask the member for the next one",
    "code_expired": "this member code has expired: ask the member for the current one",
    "locked": "the member's confirmation is locked after too many wrong entries: a supervisor must reset it",
    "not_enrolled": "the member has no member code: ask for the payment PIN",
    "other_member": "the member code is another member's",
}


def check_code_names_member(body: dict, member_code: str) -> None:
    """A charge's `member_code` must be well formed and name the charge's member, whether or
    not this charge needs a confirmation (a code of another member means the till is on
    the wrong member): else InvalidRequest or GatewayRefused (`other_member`)."""
    if parse_member_code(member_code).account_id != body["account_id"]:
        raise GatewayRefused("member_code_refused", "member_code", _REASONS["other_member"], outcome="other_member",
                             attempts_left=0)


def check_member_code(gateway, kind: str, body: dict, terminal_id: str, member_code: str) -> None:
    """Check the scanned code of a charge that needs the member's confirmation; returns when
    it confirms it (used up by this charge's txn id), else
    GatewayRefused('member_code_refused', outcome, attempts_left)."""
    account_id = body["account_id"]
    check = gateway.member_codes.verify(parse_member_code(member_code), body["txn_id"])
    if check.ok:
        return
    outcome, attempts_left = check.outcome, check.attempts_left
    log.warning("%s %s for %s@%s: the member code refused (%s)", kind, body["txn_id"], account_id, terminal_id,
                outcome)
    raise GatewayRefused("member_code_refused", "member_code", _REASONS[outcome], outcome=outcome,
                         attempts_left=attempts_left)


def enrol_member_code(gateway, request, account_id: str, body: dict) -> dict:
    """POST /v1/members/{account_id}/code: a new secret for the member (replacing any
    earlier one) with a supervisor's approval; the answer's `otpauth_uri` is the only time
    the secret leaves the server (the till shows it as a QR once)."""
    terminal_id = gateway.terminal_of(request)
    session = gateway.session_of(request, terminal_id)
    check_fields(body, schema.MEMBER_CODE_ENROL, common=False)
    account_id = check_plain_id(account_id, "account_id")
    approval = body["approval"]
    if "grant" in approval:
        token = check_fields(approval, schema.APPROVAL_GRANT, common=False)["grant"]
        supervisor_id = gateway.use_grant(token, ENROL_GRANT_KIND, f"mcode-enrol:{account_id}",
                                          session.cashier_id, terminal_id)
    else:
        check_fields(approval, schema.APPROVAL, common=False)
        supervisor_id = gateway.check_supervisor(approval["supervisor_id"], approval["pin"], session.cashier_id)
    gateway.ledger.account(account_id)          # AccountNotFound for an unknown member
    uri = gateway.member_codes.enrol(account_id, holder=account_id)
    log.info("member %s: member code enrolled at %s by %s, approved by %s", account_id, terminal_id,
             session.cashier_id, supervisor_id)
    return {"outcome": "ok", "account_id": account_id, "otpauth_uri": uri, "approved_by": supervisor_id}
