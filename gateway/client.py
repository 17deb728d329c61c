"""The till's side of the ledger gateway: `GatewayLedger`, with the methods a till uses of
`core.Ledger` (desktop/engine.py), the same arguments, return types and exceptions, over
HTTPS to one of a list of gateways. It imports no Redis client.

    ledger = GatewayLedger(urls=["https://gw1:8470", "https://gw2:8470"], token=TOKEN)
    signin = ledger.sign_in("c1", "1234")          # opens the cashier session
    ledger.deduct("A1", 500, txn_id="T1-d-...")    # core.Result

Outcomes: a decision is a core `Result` (`replayed=True` on a retry); a request the
gateway refused before deciding raises InvalidRequest (bad input) or its subclass
`GatewayRefused` (credential, session, approval, rights); a reused txn id raises
TxnConflict. No answer (connection refused or dropped, timeout, a gateway restart, HTTP
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

from core.errors import InvalidRequest, LedgerUnavailable
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
        self.session = session
        self._current = 0
        self.last_approved_by = ""     # the supervisor the gateway says approved the last operation
        self._lock = threading.Lock()
        if isinstance(verify, str):          # the shop's own CA (or the gateway's certificate)
            verify = ssl.create_default_context(cafile=verify)
        self._http = httpx.Client(
            timeout=httpx.Timeout(timeout_s), verify=verify, http2=False,
            limits=httpx.Limits(max_keepalive_connections=4, keepalive_expiry=25),
            headers={"Authorization": f"Bearer {token}", VERSION_HEADER: CLIENT_VERSION,
                     "User-Agent": CLIENT_VERSION})
        self.url_for_logs = self.urls[0]

    def close(self) -> None:
        self._http.close()

    # ---------------------------------------------------------------- transport

    def _request(self, method: str, path: str, *, body: dict | None = None, params: dict | None = None,
                 txn_id: str | None = None, expect: tuple[int, ...] = (200,)) -> tuple[int, object]:
        headers = {SESSION_HEADER: self.session} if self.session else {}
        with self._lock:
            start = self._current
        last_error = ""
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
                last_error = f"HTTP {response.status_code} from gateway {index + 1}"
                continue
            with self._lock:
                self._current = index
            if response.status_code in expect:
                return response.status_code, data
            wire.raise_error(response.status_code, data, txn_id)
        raise LedgerUnavailable(f"no gateway answered ({last_error})", txn_id)

    def _op(self, kind: str, txn_id: str, terminal_id: str | None, cashier_id: str | None, **fields) -> Result:
        body = {"txn_id": txn_id, **{k: v for k, v in fields.items() if v is not None}}
        if terminal_id:
            body["terminal_id"] = terminal_id
        if cashier_id:
            body["cashier_id"] = cashier_id
        _, data = self._request("POST", f"/ops/{kind}", body=body, txn_id=txn_id)
        result = wire.decode_result(data)
        self.last_approved_by = data.get("approved_by", "")
        return result

    # ---------------------------------------------------------------- sessions

    def sign_in(self, cashier_id: str, pin: str) -> SignIn:
        """Check the cashier's PIN on the gateway. On 'ok' this client keeps the session
        (every later call carries it); other outcomes: wrong_pin, locked, disabled."""
        status, data = self._request("POST", "/sessions", body={"cashier_id": cashier_id, "pin": pin},
                                     expect=(200, 401))
        if status == 401:
            if not isinstance(data, dict) or data.get("error") != "sign_in_refused":
                wire.raise_error(status, data, None)
            return SignIn(data.get("outcome", "wrong_pin"), locked_s=int(data.get("locked_s", 0)))
        cashier = CashierView(**data["cashier"])
        self.session = data["session"]
        return SignIn("ok", cashier, session=self.session)

    def sign_out(self) -> None:
        if self.session:
            try:
                self._request("DELETE", "/sessions", expect=(204,))
            finally:
                self.session = ""

    def ping(self) -> dict:
        return self._request("GET", "/ping")[1]

    # ---------------------------------------------------------------- money (core.Ledger's signatures)

    @staticmethod
    def _approval(supervisor_id: str | None, supervisor_pin: str | None) -> dict | None:
        if supervisor_id is None and supervisor_pin is None:
            return None
        return {"supervisor_id": supervisor_id, "pin": supervisor_pin}

    def deduct(self, account_id: str, amount_minor: int, *, txn_id: str, terminal_id: str | None = None,
               cashier_id: str | None = None, supervisor_id: str | None = None,
               supervisor_pin: str | None = None, card_no: str | None = None) -> Result:
        """`card_no`: the card the charge was presented with (checked by the ledger's script:
        CARD_BLOCKED, CARD_NOT_THIS_ACCOUNT)."""
        return self._op("deduct", txn_id, terminal_id, cashier_id, account_id=account_id, amount_minor=amount_minor,
                        card_no=card_no, approval=self._approval(supervisor_id, supervisor_pin))

    def credit(self, account_id: str, amount_minor: int, *, txn_id: str, method: str = "cash",
               bonus_minor: int = 0, terminal_id: str | None = None, cashier_id: str | None = None,
               supervisor_id: str | None = None, supervisor_pin: str | None = None) -> Result:
        return self._op("credit", txn_id, terminal_id, cashier_id, account_id=account_id, amount_minor=amount_minor,
                        method=method, bonus_minor=bonus_minor, approval=self._approval(supervisor_id, supervisor_pin))

    def refund(self, account_id: str, amount_minor: int, *, txn_id: str, original_txn_id: str,
               terminal_id: str | None = None, cashier_id: str | None = None,
               supervisor_id: str | None = None, supervisor_pin: str | None = None) -> Result:
        return self._op("refund", txn_id, terminal_id, cashier_id, account_id=account_id, amount_minor=amount_minor,
                        original_txn_id=original_txn_id, approval=self._approval(supervisor_id, supervisor_pin))

    def hold(self, account_id: str, amount_minor: int, *, txn_id: str, ttl_s: int, terminal_id: str | None = None,
             cashier_id: str | None = None, supervisor_id: str | None = None,
             supervisor_pin: str | None = None, card_no: str | None = None) -> Result:
        return self._op("hold", txn_id, terminal_id, cashier_id, account_id=account_id, amount_minor=amount_minor,
                        ttl_s=ttl_s, card_no=card_no, approval=self._approval(supervisor_id, supervisor_pin))

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
                      supervisor_pin: str | None = None) -> wire.CloseResult:
        return self._op("close", txn_id, terminal_id, cashier_id, account_id=account_id,
                        approval=self._approval(supervisor_id, supervisor_pin))

    def close_shift(self, *, shift_no: int, totals: dict, txn_id: str, opened_ms: int | None = None,
                    extra_totals: dict | None = None, shift_cashier_id: str | None = None,
                    supervisor_id: str | None = None, supervisor_pin: str | None = None) -> Result:
        """The shift's Z record (core.shifts.close_shift on the gateway; closed_by is the session's cashier)."""
        return self._op("shift_close", txn_id, None, None, shift_no=shift_no, totals=dict(totals),
                        opened_ms=opened_ms, extra_totals=extra_totals, shift_cashier_id=shift_cashier_id,
                        approval=self._approval(supervisor_id, supervisor_pin))

    # ---------------------------------------------------------------- reads

    def account(self, account_id: str) -> AccountInfo:
        return wire.decode_account(self._request("GET", f"/accounts/{_path(account_id)}")[1])

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

    def promotions(self) -> list[Promotion]:
        return [wire.decode_promotion(p) for p in self._request("GET", "/promotions")[1]["promotions"]]


def _path(value: object) -> str:
    """One path segment, quoted (the gateway checks the id itself)."""
    if not isinstance(value, str) or not value:
        raise InvalidRequest("id", "must not be empty")
    return quote(value, safe="")
