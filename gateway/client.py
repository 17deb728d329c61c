"""The till's side of the ledger gateway: `GatewayLedger`, with the methods a till uses of
`core.Ledger` (desktop/engine.py), the same arguments, return types and exceptions, over
HTTPS to one of a list of gateways. It imports no Redis client.

    ledger = GatewayLedger(urls=["https://gw1:8470", "https://gw2:8470"], token=TOKEN)
    signin = ledger.sign_in("c1", "1234")          # opens the cashier session
    ledger.deduct("A1", 500, txn_id="T1-d-...")    # core.Result
    _, grant = ledger.approve("sup", "9876", kind="refund")   # a supervisor's approval, checked there
    ledger.refund("A1", 200, txn_id="T1-r-...", original_txn_id="T1-d-...", approval_grant=grant.grant)
    ledger.deduct_many([DeductRequest("A1", 100, "T1-d-1"), ...])   # [Result | LedgerError], in order

Sessions: one per signed-in cashier (several may be signed in at one till: a lock
screen handed to the next cashier). A money call that names `cashier_id=` goes with
that cashier's session, or with none when this client holds none for them (a row of
an earlier run: the gateway then answers a decided txn id with its first decision and
refuses an undecided one, `session_required`); other calls go with the last session
opened. A Z record with `closed_by=` and an offline sale's settlement (`offline_deduct`,
with `made_by=`) go on the terminal's credential alone.

Outcomes: a decision is a core `Result` (`replayed=True` on a retry); a request the
gateway refused before deciding raises InvalidRequest (bad input) or its subclass
`GatewayRefused` (credential, session, approval, rights); a reused txn id raises
TxnConflict. `deduct_many` answers as core's: a list in the requests' order, each a
`Result` or the exception instance of an item refused or not decided (`approval_required`
above the threshold, `TxnConflict`...); the whole batch raises as a single call does. No
answer (connection refused or dropped, timeout, a gateway restart, HTTP
5xx) raises core's `LedgerUnavailable` carrying the txn id: the outcome is unknown and
the till retries with the same txn id and the same request, which is always safe (core
decides each txn id once). On a transport failure the next URL of the list is tried
once within the same call, then the call gives up; the next call starts at the URL
that answered last.

`terminal_id=` / `cashier_id=` arguments are accepted like core's and sent along; the
gateway refuses a request that names another terminal or cashier than its credential
and session (it records those, never the body's).
"""
from __future__ import annotations

import ssl
import threading
from typing import Sequence
from urllib.parse import quote

import httpx

from core.errors import InvalidRequest, LedgerError, LedgerUnavailable, OperationNotFound
from core.records import DeductRequest
from core.result import Result

from . import wire
from .wire import (API_VERSION, SESSION_HEADER, VERSION_HEADER, AccountInfo, Card, CashierView, MemberMatch,
                   Promotion, SignIn)

DEFAULT_TIMEOUT_S = 3.0
CLIENT_VERSION = "cashier-till/0.1.0"


class GatewayLedger:
    """A `core.Ledger` look-alike for tills: every call goes to a gateway."""

    def __init__(self, urls: Sequence[str] | str, token: str, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 verify: bool | str | ssl.SSLContext = True, session: str = ""):
        urls = [urls] if isinstance(urls, str) else list(urls)
        if not urls:
            raise InvalidRequest("urls", "at least one gateway URL is needed")
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise InvalidRequest("urls", "each gateway URL starts with https:// (or http:// on loopback)")
        self.urls = [u.rstrip("/") for u in urls]
        self.timeout_s = timeout_s
        self.session = session          # the last session opened (reads, calls naming no cashier)
        self.sessions: dict[str, str] = {}      # cashier id -> session token
        self._retention_s: int | None = None    # the shop's idempotency retention, as the last ping said
        self.memory_share: float | None = None  # Redis used / maxmemory, as the last ping said
        self._current = 0
        self.last_approved_by = ""     # the supervisor the gateway says approved the last operation
        self.member_pin_set: dict[str, bool] = {}   # account -> has a payment PIN, as the last look-up said
        self._lock = threading.Lock()
        if isinstance(verify, str):          # the shop's own CA (or the gateway's certificate)
            verify = ssl.create_default_context(cafile=verify)
        self._http = httpx.Client(
            timeout=httpx.Timeout(timeout_s), verify=verify, http2=False,
            limits=httpx.Limits(max_keepalive_connections=4, keepalive_expiry=25),
            headers={"Authorization": f"Bearer {token}", VERSION_HEADER: CLIENT_VERSION,
                     "User-Agent": CLIENT_VERSION})
        self.url_for_logs = self.urls[0]
        self._token = token

    def secrets(self) -> list[str]:
        """What must never be logged or stored by a till: its credential and its sessions."""
        return [t for t in (self._token, self.session, *self.sessions.values()) if t]

    def close(self) -> None:
        self._http.close()

    # ---------------------------------------------------------------- transport

    def _request(self, method: str, path: str, *, body: dict | None = None, params: dict | None = None,
                 txn_id: str | None = None, expect: tuple[int, ...] = (200,),
                 session: str | None = None) -> tuple[int, object]:
        session = self.session if session is None else session
        headers = {SESSION_HEADER: session} if session else {}
        with self._lock:
            start = self._current
        last_error = ""
        some_answered = False           # a gateway answered (5xx): not "no gateway at all"
        for step in range(len(self.urls)):
            index = (start + step) % len(self.urls)
            url = f"{self.urls[index]}/{API_VERSION}{path}"
            try:
                response = self._http.request(method, url, json=body, params=params, headers=headers)
                data = response.json() if response.content else None
            except (httpx.TransportError, ValueError) as exc:
                # no answer (or half of one): the outcome is unknown; the next gateway may answer
                last_error = f"{type(exc).__name__} from gateway {index + 1} of {len(self.urls)}"
                continue
            if response.status_code >= 500 and step + 1 < len(self.urls):
                some_answered = True
                last_error = f"HTTP {response.status_code} from gateway {index + 1}"
                continue
            with self._lock:
                self._current = index
            if response.status_code in expect:
                return response.status_code, data
            wire.raise_error(response.status_code, data, txn_id)
        unreachable = LedgerUnavailable(f"no gateway answered ({last_error})", txn_id)
        # no gateway at all (every URL refused, timed out or broke off), not a gateway's 5xx:
        # what a till may sell offline through (desktop/offline.py)
        unreachable.unreachable = not some_answered
        raise unreachable

    def session_for(self, cashier_id: str | None) -> str:
        """The session a call for `cashier_id` goes with ('' : none; see the module docstring)."""
        if not cashier_id:
            return self.session
        return self.sessions.get(cashier_id, "")

    def _op(self, kind: str, txn_id: str, terminal_id: str | None, cashier_id: str | None, *,
            session: str | None = None, **fields) -> Result:
        body = {"txn_id": txn_id, **{k: v for k, v in fields.items() if v is not None}}
        if terminal_id:
            body["terminal_id"] = terminal_id
        if cashier_id:
            body["cashier_id"] = cashier_id
        session = self.session_for(cashier_id) if session is None else session
        _, data = self._request("POST", f"/ops/{kind}", body=body, txn_id=txn_id, session=session)
        result = wire.decode_result(data)
        self.last_approved_by = data.get("approved_by", "")
        return result

    # ---------------------------------------------------------------- sessions

    def sign_in(self, cashier_id: str, pin: str) -> SignIn:
        """Check the cashier's PIN on the gateway. On 'ok' this client keeps the session
        (every later call for this cashier carries it); other outcomes: wrong_pin
        (`attempts_left`), locked (`locked_s`), disabled."""
        status, data = self._request("POST", "/sessions", body={"cashier_id": cashier_id, "pin": pin},
                                     expect=(200, 401), session="")
        if status == 401:
            if not isinstance(data, dict) or data.get("error") != "sign_in_refused":
                wire.raise_error(status, data, None)
            return SignIn(data.get("outcome", "wrong_pin"), locked_s=int(data.get("locked_s", 0)),
                          attempts_left=int(data.get("attempts_left", 0)))
        cashier = CashierView(**data["cashier"])
        self.session = data["session"]
        self.sessions[cashier.cashier_id] = self.session
        return SignIn("ok", cashier, session=self.session)

    def forget_session(self, cashier_id: str) -> None:
        """Drop the session this client holds for `cashier_id` (the gateway said it ended)."""
        token = self.sessions.pop(cashier_id, "")
        if token and token == self.session:
            self.session = ""

    def sign_out(self, cashier_id: str | None = None) -> None:
        """End the session of `cashier_id` (default: the last one opened) on the gateway."""
        token = self.sessions.pop(cashier_id, "") if cashier_id else self.session
        if not cashier_id:
            self.sessions = {c: t for c, t in self.sessions.items() if t != token}
        if token == self.session:
            self.session = ""
        if token:
            self._request("DELETE", "/sessions", expect=(204,), session=token)

    def approve(self, supervisor_id: str, pin: str, *, kind: str = "",
                cashier_id: str | None = None) -> tuple[SignIn, "Approval | None"]:
        """A supervisor's approval checked by the gateway for ONE operation of this
        cashier's session (`kind`: that operation's, '' for any): (SignIn, Approval) when
        granted, (SignIn with the refusal's outcome, None) when not. The Approval's
        `grant` goes with the operation (`approval_grant=`)."""
        body = {"supervisor_id": supervisor_id, "pin": pin, **({"kind": kind} if kind else {})}
        status, data = self._request("POST", "/approvals", body=body, expect=(200, 403),
                                     session=self.session_for(cashier_id))
        # (kind 'settings': a till-local action, asked with or without a signed-in cashier; no grant)
        if status == 403:
            if not isinstance(data, dict) or data.get("error") not in ("approval_refused", "self_approval"):
                wire.raise_error(status, data, None)
            outcome = "self_approval" if data["error"] == "self_approval" else data.get("outcome", "wrong_pin")
            return SignIn(outcome, locked_s=int(data.get("locked_s", 0)),
                          attempts_left=int(data.get("attempts_left", 0))), None
        return SignIn("ok"), Approval(data["supervisor_id"], data["grant"])

    def set_member_pin(self, account_id: str, pin: str, pin_again: str, *, old_pin: str | None = None,
                       cashier_id: str | None = None) -> dict:
        """The member's new payment PIN (6 digits), entered twice; `old_pin` when the member
        has one. Refusals raise InvalidRequest naming the field, or GatewayRefused
        'member_pin_refused' (`outcome`, `attempts_left`)."""
        body = {"pin": pin, "pin_again": pin_again, **({"old_pin": old_pin} if old_pin is not None else {})}
        return self._request("POST", f"/members/{account_id}/pin", body=body,
                             session=self.session_for(cashier_id))[1]

    def reset_member_pin(self, account_id: str, *, supervisor_id: str | None = None,
                         supervisor_pin: str | None = None, approval_grant: str | None = None,
                         cashier_id: str | None = None) -> dict:
        """A supervisor removes the member's payment PIN and lifts its lock (a grant of kind
        member_pin_reset, or the supervisor's id and PIN)."""
        body = {"approval": self._approval(supervisor_id, supervisor_pin, approval_grant)}
        return self._request("POST", f"/members/{account_id}/pin/reset", body=body,
                             session=self.session_for(cashier_id))[1]

    def enrol_member_code(self, account_id: str, *, supervisor_id: str | None = None,
                          supervisor_pin: str | None = None, approval_grant: str | None = None,
                          cashier_id: str | None = None) -> dict:
        """A new member code secret for the member, with a supervisor's approval (a grant of
        kind member_code_enrol, or the supervisor's id and PIN): the answer's `otpauth_uri`
        is the only time the secret is answered (show it as a QR once, keep it nowhere)."""
        body = {"approval": self._approval(supervisor_id, supervisor_pin, approval_grant)}
        return self._request("POST", f"/members/{account_id}/code", body=body,
                             session=self.session_for(cashier_id))[1]

    def ping(self) -> dict:
        """The gateway and the ledger behind it answer (terminal credential only); keeps the
        shop's retention and Redis's memory share it reports."""
        data = self._request("GET", "/ping", session="")[1]
        if isinstance(data.get("retention_s"), int):
            self._retention_s = data["retention_s"]
        self.memory_share = data.get("memory_share")
        return data

    def known_retention_s(self) -> int | None:
        """The shop's idempotency retention as the last ping said (None: no ping answered yet)."""
        return self._retention_s

    def load_retention(self) -> int:
        self.ping()
        if self._retention_s is None:
            raise LedgerUnavailable("the gateway did not say the retention", None)
        return self._retention_s

    @property
    def retention_s(self) -> int:
        return self._retention_s if self._retention_s is not None else self.load_retention()

    # ---------------------------------------------------------------- money (core.Ledger's signatures)

    @staticmethod
    def _approval(supervisor_id: str | None, supervisor_pin: str | None, grant: str | None = None) -> dict | None:
        if grant:
            return {"grant": grant}
        if supervisor_id is None and supervisor_pin is None:
            return None
        return {"supervisor_id": supervisor_id, "pin": supervisor_pin}

    def deduct(self, account_id: str, amount_minor: int, *, txn_id: str, terminal_id: str | None = None,
               cashier_id: str | None = None, supervisor_id: str | None = None,
               supervisor_pin: str | None = None, card_no: str | None = None,
               approval_grant: str | None = None, member_pin: str | None = None,
               member_code: str | None = None) -> Result:
        """`card_no`: the card the charge was presented with (checked by the ledger's script:
        CARD_BLOCKED, CARD_NOT_THIS_ACCOUNT). `member_pin`: the member's payment PIN, for a
        charge above the shop's threshold of a member who has one (without it:
        CONFIRMATION_REQUIRED; a wrong one: GatewayRefused 'member_pin_refused'); or
        `member_code`, the scanned member code (refused: 'member_code_refused')."""
        return self._op("deduct", txn_id, terminal_id, cashier_id, account_id=account_id, amount_minor=amount_minor,
                        card_no=card_no, member_pin=member_pin, member_code=member_code, approval=self._approval(
                            supervisor_id, supervisor_pin, approval_grant))

    def deduct_many(self, requests: Sequence[DeductRequest], *,
                    cashier_id: str | None = None) -> list[Result | LedgerError]:
        """core.Ledger.deduct_many through the gateway (POST /v1/ops/deduct_many): one request
        for the batch (at most wire.MAX_BATCH_ITEMS), its answer one item per request in the
        same order, each a `Result` or the exception instance for an item refused or not
        decided. A batch carries no approval: an item above the gateway's approval threshold
        is answered `GatewayRefused('approval_required')` (send it alone with `deduct`).

        The batch goes with the session of `cashier_id` (else of the one cashier the requests
        name, else the last opened); requests naming different terminals or cashiers are
        refused here, as one batch is one session's. No answer raises LedgerUnavailable for
        the whole batch: re-send it as it was, each item is then decided once (`replayed`)."""
        items, terminals, cashiers = [], set(), set()
        for req in requests:
            item = {"txn_id": req.txn_id, "account_id": req.account_id, "amount_minor": req.amount_minor}
            if req.card_no is not None:
                item["card_no"] = req.card_no
            items.append(item)
            if req.terminal_id:
                terminals.add(req.terminal_id)
            if req.cashier_id:
                cashiers.add(req.cashier_id)
        if cashier_id:
            cashiers.add(cashier_id)
        if len(terminals) > 1 or len(cashiers) > 1:
            raise InvalidRequest("terminal_id" if len(terminals) > 1 else "cashier_id",
                                 "a batch is one terminal's and one cashier's")
        body: dict = {"items": items}
        if terminals:
            body["terminal_id"] = terminals.pop()
        if cashiers:
            body["cashier_id"] = cashier_id = cashiers.pop()
        _, data = self._request("POST", "/ops/deduct_many", body=body, session=self.session_for(cashier_id))
        results = data["results"] if isinstance(data, dict) else None
        if not isinstance(results, list) or len(results) != len(items):
            raise LedgerUnavailable("the gateway answered the batch without one result per item", None)
        return [wire.decode_batch_item(r, item["txn_id"]) for r, item in zip(results, items)]

    def credit(self, account_id: str, amount_minor: int, *, txn_id: str, method: str = "cash",
               bonus_minor: int = 0, terminal_id: str | None = None, cashier_id: str | None = None,
               supervisor_id: str | None = None, supervisor_pin: str | None = None,
               approval_grant: str | None = None) -> Result:
        return self._op("credit", txn_id, terminal_id, cashier_id, account_id=account_id, amount_minor=amount_minor,
                        method=method, bonus_minor=bonus_minor, approval=self._approval(
                            supervisor_id, supervisor_pin, approval_grant))

    def refund(self, account_id: str, amount_minor: int, *, txn_id: str, original_txn_id: str,
               terminal_id: str | None = None, cashier_id: str | None = None,
               supervisor_id: str | None = None, supervisor_pin: str | None = None,
               approval_grant: str | None = None) -> Result:
        return self._op("refund", txn_id, terminal_id, cashier_id, account_id=account_id, amount_minor=amount_minor,
                        original_txn_id=original_txn_id, approval=self._approval(
                            supervisor_id, supervisor_pin, approval_grant))

    def sale(self, account_id: str, card_minor: int, tenders: dict, *, txn_id: str, total_minor: int,
             change_minor: int = 0, terminal_id: str | None = None, cashier_id: str | None = None,
             supervisor_id: str | None = None, supervisor_pin: str | None = None, card_no: str | None = None,
             approval_grant: str | None = None, member_pin: str | None = None) -> Result:
        """core.Ledger.sale through the gateway (POST /v1/ops/sale): the card leg
        `card_minor` (approval threshold and member PIN as for `deduct`) and `tenders`
        {method: amount_minor} in one record, or nothing when the card leg is declined."""
        return self._op("sale", txn_id, terminal_id, cashier_id, account_id=account_id, amount_minor=card_minor,
                        tenders=dict(tenders), total_minor=total_minor, change_minor=change_minor or None,
                        card_no=card_no, member_pin=member_pin,
                        approval=self._approval(supervisor_id, supervisor_pin, approval_grant))

    def tender_refund(self, account_id: str, amount_minor: int, *, txn_id: str, original_txn_id: str, method: str,
                      terminal_id: str | None = None, cashier_id: str | None = None,
                      supervisor_id: str | None = None, supervisor_pin: str | None = None,
                      approval_grant: str | None = None) -> Result:
        """core.Ledger.tender_refund through the gateway (a supervisor's approval, as `refund`)."""
        return self._op("tender_refund", txn_id, terminal_id, cashier_id, account_id=account_id,
                        amount_minor=amount_minor, original_txn_id=original_txn_id, method=method,
                        approval=self._approval(supervisor_id, supervisor_pin, approval_grant))

    def hold(self, account_id: str, amount_minor: int, *, txn_id: str, ttl_s: int, terminal_id: str | None = None,
             cashier_id: str | None = None, supervisor_id: str | None = None,
             supervisor_pin: str | None = None, card_no: str | None = None,
               approval_grant: str | None = None, member_pin: str | None = None,
               member_code: str | None = None) -> Result:
        return self._op("hold", txn_id, terminal_id, cashier_id, account_id=account_id, amount_minor=amount_minor,
                        ttl_s=ttl_s, card_no=card_no, member_pin=member_pin, member_code=member_code,
                        approval=self._approval(
                            supervisor_id, supervisor_pin, approval_grant))

    def capture(self, hold_txn_id: str, amount_minor: int, *, txn_id: str, account_id: str | None = None,
                terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        return self._op("capture", txn_id, terminal_id, cashier_id, hold_txn_id=hold_txn_id,
                        amount_minor=amount_minor, account_id=account_id)

    def void(self, hold_txn_id: str, *, txn_id: str, account_id: str | None = None,
             terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        return self._op("void", txn_id, terminal_id, cashier_id, hold_txn_id=hold_txn_id, account_id=account_id)

    def open_account(self, account_id: str, *, txn_id: str, terminal_id: str | None = None,
                     cashier_id: str | None = None, holder_name: str | None = None,
                     phone: str | None = None) -> Result:
        return self._op("open", txn_id, terminal_id, cashier_id, account_id=account_id, holder_name=holder_name,
                        phone=phone)

    def issue_card(self, account_id: str, card_no: str, *, txn_id: str, terminal_id: str | None = None,
                   cashier_id: str | None = None) -> Result:
        return self._op("issue_card", txn_id, terminal_id, cashier_id, account_id=account_id, card_no=card_no)

    def block_card(self, card_no: str, *, txn_id: str, reason: str, terminal_id: str | None = None,
                   cashier_id: str | None = None) -> Result:
        return self._op("block_card", txn_id, terminal_id, cashier_id, card_no=card_no, reason=reason)

    def close_account(self, account_id: str, *, txn_id: str, terminal_id: str | None = None,
                      cashier_id: str | None = None, supervisor_id: str | None = None,
                      supervisor_pin: str | None = None, approval_grant: str | None = None) -> wire.CloseResult:
        return self._op("close", txn_id, terminal_id, cashier_id, account_id=account_id,
                        approval=self._approval(
                            supervisor_id, supervisor_pin, approval_grant))

    def close_shift(self, *, shift_no: int, totals: dict, txn_id: str, opened_ms: int | None = None,
                    extra_totals: dict | None = None, shift_cashier_id: str | None = None,
                    supervisor_id: str | None = None, supervisor_pin: str | None = None,
                    approval_grant: str | None = None, closed_by: str | None = None) -> Result:
        """The shift's Z record (core.shifts.close_shift on the gateway). closed_by: the
        session's cashier; or, with `closed_by=`, as this terminal states it, sent on its
        credential alone (a till journals a Z record whenever the ledger is back)."""
        if closed_by:
            return self._op("shift_close", txn_id, None, None, session="", shift_no=shift_no, totals=dict(totals),
                            opened_ms=opened_ms, extra_totals=extra_totals, shift_cashier_id=shift_cashier_id,
                            closed_by=closed_by)
        return self._op("shift_close", txn_id, None, None, shift_no=shift_no, totals=dict(totals),
                        opened_ms=opened_ms, extra_totals=extra_totals, shift_cashier_id=shift_cashier_id,
                        approval=self._approval(
                            supervisor_id, supervisor_pin, approval_grant))

    def offline_deduct(self, account_id: str, amount_minor: int, *, txn_id: str, made_at_ms: int,
                       made_by: str, card_no: str | None = None, terminal_id: str | None = None) -> Result:
        """Settle a sale this till made offline (core's `Ledger.offline_deduct` on the
        gateway), on the terminal's credential alone with the cashier who made it
        (`made_by`): `Result.debt_minor` is the offline debt it left; OFFLINE_LIMIT_EXCEEDED
        past the server's bounds."""
        return self._op("offline_deduct", txn_id, terminal_id, None, session="", account_id=account_id,
                        amount_minor=amount_minor, made_at_ms=made_at_ms, made_by=made_by, card_no=card_no)

    def offline_info(self) -> dict:
        """GET /v1/offline: the shop's offline limits (member_limit_minor, till_budget_minor,
        max_duration_s), member_pin_above_minor, blocked_cards and as_of_ms."""
        return self._request("GET", "/offline", session="")[1]

    # ---------------------------------------------------------------- reads

    def account(self, account_id: str) -> AccountInfo:
        data = self._request("GET", f"/accounts/{_path(account_id)}")[1]
        if "member_pin_set" in data:     # what an offline sale needs to know (desktop/offline.py)
            self.member_pin_set[account_id] = bool(data["member_pin_set"])
        return wire.decode_account(data)

    def balance(self, account_id: str) -> int:
        return self.account(account_id).balance_minor

    def balances(self, account_id: str) -> tuple[int, int]:
        data = self._request("GET", f"/accounts/{_path(account_id)}/balances")[1]
        return data["balance_minor"], data["available_minor"]

    def available(self, account_id: str) -> int:
        return self.balances(account_id)[1]

    def resolve_card(self, card_no: str) -> Card:
        return wire.decode_card(self._request("GET", f"/cards/{_path(card_no)}")[1])

    def hold_account(self, hold_txn_id: str) -> str | None:
        return self._request("GET", f"/holds/{_path(hold_txn_id)}/account")[1]["account_id"]

    def find_members(self, query: str, *, limit: int = 8) -> list[MemberMatch]:
        data = self._request("GET", "/members", params={"query": query, "limit": str(limit)})[1]
        return [wire.decode_match(m) for m in data["matches"]]

    def load_operation(self, txn_id: str) -> wire.PastOperation:
        """core.history.History(ledger).load(txn_id): one past operation by its receipt number.
        GatewayRefused('operation_not_found') when Redis no longer holds it."""
        return wire.decode_operation(self._request("GET", f"/txns/{_path(txn_id)}")[1])

    def recent(self, account_id: str, *, count: int = 20) -> list[wire.PastOperation]:
        """core.history.History(ledger).recent(account_id, count=count)."""
        data = self._request("GET", f"/accounts/{_path(account_id)}/history", params={"count": str(count)})[1]
        return [wire.decode_operation(o) for o in data["operations"]]

    def member_profile(self, account_id: str) -> tuple[AccountInfo, list[Card], str]:
        """The member's account, their cards with states and reasons, and their phone
        masked by the gateway ('138****8000'; '' when none)."""
        data = self._request("GET", f"/accounts/{_path(account_id)}/profile")[1]
        return (wire.decode_account(data["account"]), [wire.decode_card(c) for c in data["cards"]],
                data.get("phone_masked", ""))

    def promotions(self) -> list[Promotion]:
        return [wire.decode_promotion(p) for p in self._request("GET", "/promotions")[1]["promotions"]]

    @property
    def history(self) -> "GatewayHistory":
        """What `core.history.History(ledger)` answers a till, through the gateway."""
        return GatewayHistory(self)


class GatewayHistory:
    """`core.history.History`'s reads a till uses (`load`, `recent`, `retention_s`), over
    the gateway: the same answers and exceptions (OperationNotFound when Redis no longer
    holds a txn id)."""

    def __init__(self, ledger: GatewayLedger):
        self.ledger = ledger

    @property
    def retention_s(self) -> int:
        return self.ledger.retention_s

    def load(self, txn_id: str) -> wire.PastOperation:
        try:
            return self.ledger.load_operation(txn_id)
        except wire.GatewayRefused as exc:
            if exc.code != "operation_not_found":
                raise
            known = self.ledger.known_retention_s()
            raise OperationNotFound(txn_id, known if known is not None else 0) from None

    def recent(self, account_id: str, *, count: int = 20) -> list[wire.PastOperation]:
        return self.ledger.recent(account_id, count=count)


class Approval:
    """A supervisor's approval the gateway granted for one operation: `grant` goes with it.
    `use()` answers the supervisor's id once (as core.cashiers.SupervisorApproval)."""

    def __init__(self, supervisor_id: str, grant: str):
        self.supervisor_id = supervisor_id
        self.grant = grant
        self._used = False

    def use(self) -> str:
        if self._used:
            raise InvalidRequest("supervisor_pin", "this approval was already used; ask again")
        self._used = True
        return self.supervisor_id


def _path(value: object) -> str:
    """One path segment, quoted (the gateway checks the id itself)."""
    if not isinstance(value, str) or not value:
        raise InvalidRequest("id", "must not be empty")
    return quote(value, safe="")
