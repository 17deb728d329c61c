"""The terminal's engine: sends charges, refunds, top-ups and holds (hold, capture,
void) to the central ledger without ever losing or doubling one, and watches the
connection to the ledger; its reads for display (accounts, look-ups, member profiles,
past operations) are desktop/engine_reads.py, mixed into `Engine`.

The till holds no Redis login: every call goes to the shop's ledger gateway
(`gateway.client.GatewayLedger`: a list of gateway URLs and this terminal's
credential), which decides every authority. Cashiers sign in there (`sign_in`, the
session it answers goes with each of their operations); a supervisor's approval
(`approve`) is a one-operation grant the gateway issued, kept in memory only and sent
with the one operation it was asked for (`submit(approved_by=...)`), never saved in
the outbox: a row re-sent after a restart without it is answered with its first
decision, or refused (nothing changed) when it was never decided.

Every operation gets its txn id here and is committed to the local outbox before
the first send (on the single, ordered operations worker). The ledger answers with
a decision (approved or declined: resolved) or raises `LedgerUnavailable` (outcome
unknown: the operation stays pending and is "being checked"). Pending operations
are re-sent with the same txn id and the same request every `retry_interval_ms`
until the ledger answers, including, first thing after a restart, the ones a crash or
power cut left behind. A connection monitor pings the gateway every `ping_interval_ms`;
while the ledger is unreachable new operations are refused with a plain reason. A
revoked credential (`cashierctl terminal revoke`) is its own state: the till says so
and keeps what is pending (an earlier send may have been decided before the revocation).
Member operations go the same way: `open` (a member account and its first card),
`card_replace` (block a lost card, issue the new one: no money moves) and `close`
(退卡: the ledger answers the cash to pay out), each one outbox row whose ledger calls
use txn ids derived from the row's (so a re-send replays every step). The shift's Z
record (`close_shift`, core/shifts.py) is saved and sent like an operation but is
never refused: a shift closed while the ledger is away is journaled once it is back
(on the terminal's credential alone, `closed_by` stated: its cashier may have signed out).
After an applied charge, completed sale or refund the bucket split the script decided
is read from its journal entry (a read worker, best effort) for the shift report.
`find` resolves what the cashier typed or scanned (card, account id, phone, holder
name, pinyin initials) to one account or a short list of members.
An operation still pending when it is older than the ledger's idempotency retention
(the shop's setting, read on every ping) minus `RESEND_MARGIN_S` (1 h) is never re-sent
on its own: its record may have expired, and a re-send would then be applied a second
time. Such rows are "too old to re-send" (`stale_ops`, `staleChanged`): they stay
unresolved (their account waits, the shift cannot close) until a supervisor marks one
abandoned (`abandon`: recorded in the outbox, counted in the shift report) or re-checks
it (`recheck`: reads the ledger's record of its txn id, never sends; a record found
resolves the row with the decision it holds). The gateway's ping also answers Redis's
memory share (the readings doctor and `cashierctl capacity` use); the engine says
`memoryChanged(share)` and the main window shows a supervisor notice above
`MEMORY_NOTICE_SHARE` (90 %) of maxmemory.
Offline sales (issue 27, desktop/offline.py): once no gateway has answered for
`offline_after_s`, a plain charge within the shop's offline limits is saved as an outbox
row of kind 'offline' (before the receipt prints: `offlineSale`) and settled in the order
made when a gateway answers again (`offline_deduct`, with the cashier who made it);
`offlineChanged` says "offline: ¥X of ¥Y budget used". The engine's clock (`clock`, ms)
can be replaced by a test's.
All results come back to the UI thread as Qt signals; nothing here blocks it.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from dataclasses import replace
from urllib.parse import parse_qsl, urlsplit
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from core import (InvalidRequest, LedgerNotInitialized, LedgerUnavailable,
                  OperationNotFound, Status, TxnConflict, UnsafeRedisConfig)
from core import kinds, sales
from core.capacity import MEMORY_NOTICE_SHARE
from core.shifts import SHIFT_BOOK_ACCOUNT, ShiftTotals, shift_txn_id
from core.validation import DEFAULT_RETENTION_S, RESEND_MARGIN_S, check_id
from gateway.wire import GatewayRefused, GatewayUnauthorized

# the read half, and the values it answers (importable from here, as before the split)
from .engine_reads import (MAX_MATCHES, PROFILE_RECENT_COUNT, AccountView, Found, LedgerReads,  # noqa: F401
                           MemberProfile)
from .engine_confirm import CONFIRMATION_REQUIRED, MEMBER_REFUSALS, MemberConfirmations
from . import offline as offline_sales
from .outbox import CONFLICT, INVALID, NOT_SENT, RESOLVED, Op, Outbox, now_ms
from .workers import Background, Task

log = logging.getLogger(__name__)

# connection states (reconnecting: the gateway says its Sentinel deployment is switching to another
# primary; charges in flight wait and are re-sent with their txn id, new ones start once it is done;
# revoked: the gateway refuses this terminal's credential)
CONNECTING, ONLINE, OFFLINE, NOT_INITIALIZED, UNSAFE, RECONNECTING, REVOKED = (
    "connecting", "online", "offline", "not_initialized", "unsafe", "reconnecting", "revoked")

DEFAULT_PING_INTERVAL_MS = 2000
DEFAULT_RETRY_INTERVAL_MS = 1500
DEFAULT_HOLD_TTL_S = 30 * 60         # how long a hold reserves its amount (capped by the retention)
# the kinds whose request carries a supervisor's approval grant (gateway/schema.py OPS)
APPROVABLE_KINDS = frozenset({"deduct", "credit", "refund", "hold", "close", "sale", "tender_refund"})
# re-exported: the share of maxmemory above which the supervisor notice shows
MEMORY_NOTICE = MEMORY_NOTICE_SHARE
STALE = "stale"          # a pending row too old to re-send (see the module docstring)
# a pending row the gateway would not take without its cashier's session (a row of an earlier
# run, or a session that ended): it waits, unresolved, until that cashier signs in again, then
# is re-sent with their session. Never resolved as refused: it may still be undecided.
AWAITING_CASHIER = "awaiting_cashier"
SESSION_REFUSALS = frozenset({"session_required", "session_invalid"})

# from core.kinds (still importable from here): one letter per kind in txn ids
# ('<terminal>-<letter>-<32 hex>'); the kinds whose bucket split the script decides
TXN_LETTERS = kinds.TXN_LETTERS
TENDER_METHODS = sales.TENDER_METHODS
SPLIT_KINDS = kinds.SPLIT_KINDS


class Refused(Exception):
    """A new operation was not started (nothing saved, nothing sent). `reason` is a code."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


def safe_url(url: str) -> str:
    """A server URL as logs may show it: scheme, host and port only (no user info, path or
    query, which could carry a secret)."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        return f"{parts.scheme}://{host}" if parts.scheme and host else "(unreadable URL)"
    except ValueError:
        return "(unreadable URL)"


def url_secrets(url: str) -> list[str]:
    """What must never be logged of `url`: the URL itself, its user info and the values of
    its query options whose name mentions a password or a token."""
    found = [url]
    try:
        parts = urlsplit(url)
        userinfo = parts.netloc.rpartition("@")[0]
        found += [p for p in (userinfo, parts.password) if p]
        found += [v for k, v in parse_qsl(parts.query) if ("pass" in k.lower() or "token" in k.lower()) and v]
    except ValueError:
        pass
    return sorted(set(found), key=len, reverse=True)


def new_txn_id(terminal_id: str, kind: str) -> str:
    """A fresh txn id: '<terminal>-<d|r|c|h|k|v|o|n|x>-<32 hex>' (at most 55 characters)."""
    return f"{terminal_id[:20]}-{TXN_LETTERS[kind]}-{uuid.uuid4().hex}"


def step_txn_id(txn_id: str, step: str) -> str:
    """The txn id of a later ledger call of one outbox row (e.g. the card issued after
    opening the account): derived, so a re-send of the row replays it (at most 60 chars)."""
    return f"{txn_id}.{step}"


def new_member_id() -> str:
    """A member account id for an account opened at the till: 'M' and 12 digits (cards
    are credentials; the account keeps this id whatever cards it gets)."""
    return f"M{uuid.uuid4().int % 10**12:012d}"


class Engine(LedgerReads, MemberConfirmations, QObject):
    opResolved = Signal(object)        # Op: the ledger decided (or the request was invalid)
    opUncertain = Signal(object)       # Op: sent, no answer yet; being checked
    pendingChanged = Signal(int)       # operations still being resolved
    connectionChanged = Signal(str, str)   # state, detail for the log/tooltip
    recoveryFinished = Signal(list)    # [Op]: operations of earlier runs, now resolved
    staleChanged = Signal(list)        # [Op]: pending rows too old to re-send (a supervisor decides)
    memoryChanged = Signal(object)     # float: Redis used / maxmemory; None: unknown or no maxmemory
    offlineSale = Signal(object)       # Op: a sale made offline, saved (print its receipt, marked OFFLINE)
    offlineChanged = Signal(object)    # offline.OfflineUse while selling offline, None otherwise

    def __init__(self, ledger, terminal_id: str, data_dir: Path, *,
                 ping_interval_ms: int = DEFAULT_PING_INTERVAL_MS,
                 retry_interval_ms: int = DEFAULT_RETRY_INTERVAL_MS,
                 hold_ttl_s: int = DEFAULT_HOLD_TTL_S,
                 offline_after_s: float = offline_sales.DEFAULT_OFFLINE_AFTER_S,
                 balance_max_age_s: int = offline_sales.DEFAULT_BALANCE_MAX_AGE_S, parent=None):
        """`ledger`: a `gateway.client.GatewayLedger` (this terminal's credential, the
        shop's gateway URLs); the engine owns it from here (closes it)."""
        super().__init__(parent)
        self.terminal_id = terminal_id
        self.ledger = ledger
        self.gateway_urls = list(ledger.urls)   # what this run uses (the settings dialog shows them)
        # the credential, the sessions and the URLs' user info never reach a log or the outbox
        self._url_secrets = {s for url in ledger.urls for s in url_secrets(url) if s != url}
        # a hold lasts at most the ledger's idempotency retention (its record must outlive it):
        # `hold_ttl_s` caps this by the retention as last read (nothing is read here: the
        # gateway may be away when the till starts)
        self._hold_ttl_wanted_s = int(hold_ttl_s)
        self.memory_share: float | None = None     # last reading (None: unknown or no maxmemory)
        self._stale: dict[str, Op] = {}            # txn id -> pending row too old to re-send
        # supervisor approvals (gateway grants), in memory only: supervisor id -> grant not yet
        # given to an operation; txn id -> the grant its sends carry
        self._grants: dict[str, str] = {}
        self._op_grants: dict[str, str] = {}
        self._awaiting_cashier: dict[str, str] = {}    # txn id -> the cashier whose session it waits for
        self._init_confirmations()                     # the member's PIN / code, in memory (engine_confirm.py)
        self.outbox = Outbox(Path(data_dir) / "outbox.sqlite3")
        # offline sales: the shop's offline settings and the balances seen, in the data dir
        self.offline_store = offline_sales.OfflineStore(Path(data_dir))
        self.offline_after_s = offline_after_s
        self.balance_max_age_s = balance_max_age_s
        self.clock = now_ms                        # ms; a test may set its own
        self._unreachable = False                  # the last failure: no gateway answered at all
        self._offline_announced = False            # offlineChanged said "selling offline"
        self._facts_read_ms = 0
        self.ops = Background(1, "operations")     # money operations, strictly in order
        self.reads = Background(2, "reads")        # lookups, PIN checks, pings
        self.state, self.state_detail = CONNECTING, ""
        self._unresolved: dict[str, Op] = {}       # txn id -> op not yet decided
        self._awaiting_retry: set[str] = set()     # of those: sent once without an answer
        self._from_earlier_run: set[str] = set()
        self._recovered: list[Op] = []
        self._resolving = False
        self._pinging = False
        self._closed = False
        self._ping_timer = QTimer(self, interval=ping_interval_ms, timeout=self.ping)
        self._retry_timer = QTimer(self, interval=retry_interval_ms, timeout=self._retry_pending)

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Load what an earlier run left pending, resolve it first, start watching Redis."""
        # the URL without its password (core.connection.redacted): never log the URL itself
        log.info("terminal %s: ledger gateway(s) %s; holds last %d s", self.terminal_id,
                 ", ".join(safe_url(u) for u in self.gateway_urls), self.hold_ttl_s)
        for op in self.outbox.pending():
            self._unresolved[op.txn_id] = op
            self._awaiting_retry.add(op.txn_id)
            self._from_earlier_run.add(op.txn_id)
        if self._from_earlier_run:
            log.warning("%d operation(s) of an earlier run are unresolved; resolving them first",
                        len(self._from_earlier_run))
        self.pendingChanged.emit(len(self._unresolved))
        self.ping()
        self._retry_pending()
        self._ping_timer.start()
        self._retry_timer.start()

    def close(self, timeout_ms: int = 15_000) -> None:
        """Stop timers, wait for every worker job, close the gateway client and the outbox."""
        if self._closed:
            return
        self._closed = True
        self._ping_timer.stop()
        self._retry_timer.stop()
        self.ops.wait(timeout_ms)
        self.reads.wait(timeout_ms)
        try:
            self.ledger.close()
        except Exception:   # closing a dead connection must not stop shutdown
            pass
        self.outbox.close()

    @property
    def retention_s(self) -> int:
        """The ledger's idempotency retention as last read (the default until the gateway answered)."""
        known = self.ledger.known_retention_s()
        return DEFAULT_RETENTION_S if known is None else known

    @property
    def hold_ttl_s(self) -> int:
        return max(1, min(self._hold_ttl_wanted_s, self.retention_s))

    @property
    def resend_limit_s(self) -> int:
        """A pending row older than this (s) is never re-sent on its own."""
        return self.retention_s - RESEND_MARGIN_S

    def too_old_to_resend(self, op: Op, at_ms: int | None = None) -> bool:
        return (now_ms() if at_ms is None else at_ms) - op.created_ms >= self.resend_limit_s * 1000

    def stale_ops(self) -> list[Op]:
        """Pending rows too old to re-send, oldest first (a supervisor decides each)."""
        return sorted(self._stale.values(), key=lambda op: op.created_ms)

    @property
    def closed(self) -> bool:
        """True once close() ran: the outbox and the gateway client are gone; screens must not read."""
        return self._closed

    @property
    def pending_count(self) -> int:
        return len(self._unresolved)

    def unresolved(self) -> list[Op]:
        return list(self._unresolved.values())

    @property
    def recovering(self) -> bool:
        """Operations of an earlier run are still being re-sent (the ones too old to re-send
        wait for a supervisor instead and do not hold up the report of the others)."""
        return bool((self._from_earlier_run & self._unresolved.keys()) - self._stale.keys())

    # ---------------------------------------------------------------- connection

    def ping(self) -> None:
        if self._pinging or self._closed:
            return
        self._pinging = True

        def probe():
            answer = self.ledger.ping()      # the gateway, and the ledger behind it, answer
            if answer.get("terminal_id") not in (None, self.terminal_id):
                # the credential is another terminal's: its txn ids would carry the wrong prefix
                raise UnsafeRedisConfig(f"this till's credential belongs to terminal {answer['terminal_id']!r}, "
                                        f"not {self.terminal_id!r}: enrol this terminal (cashierctl terminal enroll)")
            return self.ledger.memory_share

        def answered(share) -> None:
            self._memory_read(share)
            self._pinged(ONLINE, "")
        self.reads.run(probe, answered, lambda exc: self._pinged(*self._state_of(exc)))

    def _memory_read(self, share) -> None:
        before, self.memory_share = self.memory_share, share
        if (share is not None and share >= MEMORY_NOTICE) and (before is None or before < MEMORY_NOTICE):
            log.warning("Redis memory at %.0f%% of maxmemory: above %.0f%%", share * 100, MEMORY_NOTICE * 100)
        if share != before:
            self.memoryChanged.emit(share)

    @property
    def memory_notice(self) -> bool:
        """True while Redis is above MEMORY_NOTICE of its maxmemory (the supervisor notice)."""
        return self.memory_share is not None and self.memory_share >= MEMORY_NOTICE

    def scrub(self, text: str) -> str:
        """`text` without this terminal's credential, its sessions or a URL's user info
        (for logs and the outbox)."""
        for secret in sorted(self._url_secrets | set(self.ledger.secrets()), key=len, reverse=True):
            text = text.replace(secret, "***")
        return text

    def _pinged(self, state: str, detail: str) -> None:
        self._pinging = False
        self._set_state(state, detail)

    def _state_of(self, exc: Exception) -> tuple[str, str]:
        if isinstance(exc, LedgerNotInitialized):
            return NOT_INITIALIZED, self.scrub(str(exc))
        if isinstance(exc, GatewayUnauthorized):
            return REVOKED, self.scrub(str(exc))
        if isinstance(exc, (UnsafeRedisConfig, InvalidRequest)):   # InvalidRequest: cs:meta's retention_s
            return UNSAFE, self.scrub(str(exc))
        if getattr(exc, "switching", False):
            return RECONNECTING, self.scrub(f"{type(exc).__name__}: {exc}")
        self._unreachable = bool(getattr(exc, "unreachable", False))
        return OFFLINE, self.scrub(f"{type(exc).__name__}: {exc}")

    def _set_state(self, state: str, detail: str) -> None:
        if self._closed:
            return
        if state == OFFLINE and self._unreachable:
            self.offline_store.went_offline(self.clock())     # kept from the first failure on
            if self.selling_offline and not self._offline_announced:
                self._offline_announced = True                # offline_after_s have passed: say so
                self.offlineChanged.emit(self.offline_use())
        elif state == ONLINE:
            self._offline_announced = False
            was_offline = bool(self.offline_store.offline_since_ms)
            self.offline_store.back_online()
            if was_offline:
                self.offlineChanged.emit(None)
            self._refresh_offline_facts()
        changed = state != self.state
        self.state, self.state_detail = state, detail
        if changed:
            log.warning("connection to the ledger: %s %s", state, detail) if state != ONLINE else \
                log.info("connection to the ledger: online")
            self.connectionChanged.emit(state, detail)
            if state == ONLINE:
                self._retry_pending()

    # ---------------------------------------------------------------- operations

    def check_can_start(self, account_id: str) -> None:
        """Raise Refused when a new operation on `account_id` must not start now."""
        if self._closed:
            raise Refused("closed")
        if self.state == NOT_INITIALIZED:
            raise Refused("not_initialized")
        if self.state == UNSAFE:
            raise Refused("unsafe")
        if self.state == REVOKED:
            raise Refused("revoked")
        if self.state != ONLINE:
            raise Refused("reconnecting" if self.state == RECONNECTING else "offline")
        if any(op.account_id == account_id for op in self._stale.values()):
            raise Refused("account_stale")        # a supervisor must decide its old operation first
        if any(op.account_id == account_id for op in self._unresolved.values()):
            raise Refused("account_pending")

    def submit(self, kind: str, account_id: str, amount_minor: int, cashier_id: str, *,
               shift_id: int | None, original_txn_id: str = "", approved_by: str = "",
               method: str = "", bonus_minor: int = 0, card_no: str = "",
               detail: dict | None = None) -> Op:
        """Start one operation. Returns the Op (pending); its answer comes as a signal.
        Raises Refused (nothing saved or sent) when it must not start.

        kind: deduct, refund (original_txn_id = the charge or capture), credit, hold
        (reserved for `hold_ttl_s`), capture (original_txn_id = the hold; amount = what
        is taken, at most the held amount) or void (original_txn_id = the hold; amount =
        the held amount, for the history: the ledger is asked to release all of it).
        Top-ups carry `method` and `bonus_minor`; open (`card_no`: the first card,
        detail holder/phone), card_replace (`card_no`: the new card, detail old_card and
        reason) and close (amount 0: the ledger answers the payout) are member operations.
        `approved_by`: the supervisor whose approval (`approve`) this operation carries: the
        grant the gateway gave goes with it (a supervisor approves one operation).
        While the till sells offline (`selling_offline`), a charge is made offline
        (`submit_offline`) or refused with the offline reason."""
        if kind == "deduct" and self.selling_offline and not self._closed:
            if approved_by:
                raise Refused("offline_needs_supervisor")
            return self.submit_offline(account_id, amount_minor, cashier_id, shift_id=shift_id, card_no=card_no)
        self.check_can_start(account_id)
        if kind in kinds.TILL_HOLD_RESOLUTIONS and not original_txn_id:
            raise ValueError(f"{kind} needs the hold's txn id")
        grant = self._grants.pop(approved_by, "") if approved_by else ""
        op = Op(new_txn_id(self.terminal_id, kind), kind, account_id, amount_minor, self.terminal_id,
                cashier_id, shift_id, now_ms(), original_txn_id=original_txn_id,
                approved_by=approved_by, ttl_s=self.hold_ttl_s if kind == "hold" else 0,
                method=method or ("cash" if kind == "credit" else ""), bonus_minor=bonus_minor,
                card_no=card_no, detail=json.dumps(detail, ensure_ascii=False, sort_keys=True) if detail else "")
        if grant and kind in APPROVABLE_KINDS:
            self._op_grants[op.txn_id] = grant
        return self._enqueue(op)

    # ---------------------------------------------------------------- offline sales

    @property
    def selling_offline(self) -> bool:
        """No gateway has answered for `offline_after_s` or more: a charge may be made offline."""
        since = self.offline_store.offline_since_ms
        return (self.state == OFFLINE and self._unreachable and bool(since)
                and self.clock() - since >= self.offline_after_s * 1000)

    def _offline_sales(self) -> list[Op]:
        facts = self.offline_store.facts
        window_s = facts.max_duration_s if facts else 0
        return self.outbox.offline_sales_since(self.clock() - 2 * window_s * 1000)

    def offline_use(self) -> offline_sales.OfflineUse | None:
        """"offline: ¥X of ¥Y budget used" (None: not selling offline, or no settings)."""
        if not self.selling_offline:
            return None
        return offline_sales.use(self.offline_store, self._offline_sales(), self.clock())

    def offline_refusal(self, account_id: str, amount_minor: int, card_no: str = "") -> str | None:
        """Why a charge may not be made offline now (a Refused reason), or None."""
        if not self.selling_offline:
            return "offline"
        if any(op.account_id == account_id and not op.offline for op in self._unresolved.values()):
            return "account_pending"       # an online charge of unknown outcome: the balance is unknown
        if any(op.account_id == account_id for op in self._stale.values()):
            return "account_stale"
        return offline_sales.refusal(self.offline_store, self._offline_sales(), account_id, amount_minor, card_no,
                                     self.clock(), balance_max_age_s=self.balance_max_age_s)

    def submit_offline(self, account_id: str, amount_minor: int, cashier_id: str, *, shift_id: int | None,
                       card_no: str = "") -> Op:
        """Make a charge offline: saved in the outbox (committed before this returns, so before
        the receipt prints), settled in order on reconnect. Raises Refused (nothing saved)
        with the offline reason when it may not be made."""
        if not cashier_id:
            raise Refused("offline_no_cashier")
        reason = self.offline_refusal(account_id, amount_minor, card_no)
        if reason:
            raise Refused(reason)
        op = Op(new_txn_id(self.terminal_id, "offline"), "offline", account_id, amount_minor, self.terminal_id,
                cashier_id, shift_id, self.clock(), card_no=card_no)
        self.outbox.add(op)
        log.warning("txn %s: charge of %d to %s made offline by %s", op.txn_id, amount_minor, account_id, cashier_id)
        self._unresolved[op.txn_id] = op
        self._awaiting_retry.add(op.txn_id)
        self.pendingChanged.emit(len(self._unresolved))
        self.offlineSale.emit(op)
        self.offlineChanged.emit(self.offline_use())
        return op

    def _refresh_offline_facts(self) -> None:
        """The shop's offline settings and block list (worker), at most every FACTS_INTERVAL_S."""
        now = self.clock()
        if now - self._facts_read_ms < offline_sales.FACTS_INTERVAL_S * 1000 or self._closed:
            return
        self._facts_read_ms = now
        fetch = getattr(self.ledger, "offline_info", None)
        if fetch is None:
            return

        def failed(exc) -> None:
            self._facts_read_ms = 0
            log.info("offline settings not read (%s)", type(exc).__name__)
        self.reads.run(fetch, self.offline_store.note_facts, failed)

    def _view(self, account_id: str, card_no: str = ""):
        """An account read for display, remembered for offline sales (its available balance,
        when, and whether the member has a payment PIN)."""
        view = super()._view(account_id, card_no)
        pins = getattr(self.ledger, "member_pin_set", {})
        self.offline_store.note_balance(account_id, view.available_minor, self.clock(), pins.get(account_id),
                                        card_no=card_no, holder_name=view.holder_name)
        return view

    def _offline_view(self, query: str) -> AccountView | None:
        """While selling offline, a look-up answered from what the till saw online: the
        available balance then (`read_ms` says when), less this till's offline sales since."""
        account_id = self.offline_store.account_of(query)
        if account_id is None:
            return None
        available, seen_ms, _pin = self.offline_store.seen(account_id)
        taken = sum(op.amount_minor for op in self._offline_sales()
                    if op.account_id == account_id and op.created_ms >= seen_ms)
        left = max(0, available - taken)
        return AccountView(account_id, "active", left, left, seen_ms, self.offline_store.holder_name(account_id),
                           0, query if query != account_id else "")

    def _offline_or(self, query: str, on_done, on_error, wrap):
        """An error handler of a look-up: while selling offline, answer from `_offline_view`."""
        def handle(exc) -> None:
            view = self._offline_view(query) if self.selling_offline and isinstance(exc, LedgerUnavailable) else None
            if view is None:
                on_error(exc)
            else:
                on_done(wrap(view))
        return handle

    def find(self, query: str, on_done, on_error):
        return super().find(query, on_done, self._offline_or(query, on_done, on_error,
                                                             lambda view: Found(query, view=view)))

    def lookup(self, account_id: str, on_done, on_error):
        return super().lookup(account_id, on_done, self._offline_or(account_id, on_done, on_error, lambda v: v))

    def close_shift(self, shift, closed_by: str, totals: ShiftTotals, extra_totals: dict[str, int]) -> Op:
        """Journal the Z record of a closed `shift` (outbox.Shift) through the outbox: never
        refused (offline too); sent now, else re-sent with the same txn id until the ledger
        answers, on the terminal's credential with `closed_by` stated. The txn id is core.shifts' own (terminal + shift number + opening time:
        a reinstalled till numbers its shifts from 1 again): a shift is recorded once
        however often this runs."""
        if self._closed:
            raise Refused("closed")
        txn_id = shift_txn_id(self.terminal_id, shift.shift_id, opened_ms=shift.opened_ms)
        stored = self.outbox.get(txn_id)
        if stored is not None:
            return stored
        detail = {"shift_no": shift.shift_id, "closed_by": closed_by, "cashier_id": shift.opened_by,
                  "opened_ms": shift.opened_ms, "totals": dataclasses.asdict(totals), "extra": extra_totals}
        op = Op(txn_id, "shift_close", SHIFT_BOOK_ACCOUNT, 0, self.terminal_id, closed_by, shift.shift_id,
                now_ms(), detail=json.dumps(detail, sort_keys=True))
        return self._enqueue(op)

    def _enqueue(self, op: Op) -> Op:
        self._unresolved[op.txn_id] = op
        self.pendingChanged.emit(len(self._unresolved))
        self.ops.run(lambda: self._send(op, first=True), self._sent,
                     lambda exc: self._first_send_failed(op, exc))
        return op

    def _first_send_failed(self, op: Op, exc: Exception) -> None:
        self._worker_bug(exc)
        if self.outbox.get(op.txn_id) is None:
            # Not saved, so never sent: the sale did not happen; say so instead of waiting.
            self._unresolved.pop(op.txn_id, None)
            self.pendingChanged.emit(len(self._unresolved))
            self.opResolved.emit(replace(op, state=RESOLVED, status=NOT_SENT,
                                         last_error=self.scrub(f"{type(exc).__name__}: {exc}")))
        else:
            self._awaiting_retry.add(op.txn_id)

    def _send(self, op: Op, *, first: bool) -> tuple[str, Op, tuple[str, str]]:
        """Worker thread: save (first send only), send, record the answer."""
        if first:
            self.outbox.add(op)           # committed before anything goes to the ledger
        else:
            stored = self.outbox.get(op.txn_id)
            if stored is not None and not stored.pending:
                return "resolved", stored, (ONLINE, "")
            try:
                self.ledger.retention_s               # the shop's retention (read at the last ping)
            except Exception as exc:                  # noqa: BLE001 (ledger away: as a send without answer)
                detail = self.scrub(f"{type(exc).__name__}: {exc}")
                self.outbox.note_attempt(op.txn_id, detail)
                return "uncertain", self.outbox.get(op.txn_id) or op, self._state_of(exc)
            if self.too_old_to_resend(op):
                # its record may have expired: a re-send could apply it twice. Never sent again
                # on its own; a supervisor decides (stale_ops, abandon, recheck).
                log.warning("txn %s: pending for %d s, older than the retention minus %d s: "
                            "not re-sent; a supervisor must decide", op.txn_id,
                            (now_ms() - op.created_ms) // 1000, RESEND_MARGIN_S)
                return STALE, stored or op, (ONLINE, "")
        recovered = op.txn_id in self._from_earlier_run
        try:
            result, extra = self._call_ledger(op, first=first)
        except GatewayRefused as exc:
            if exc.code in MEMBER_REFUSALS:       # the member's PIN or code refused: nothing changed
                refusal = f"{exc.code}:{exc.detail.get('outcome', '')}:{exc.detail.get('attempts_left', 0)}"
                return "resolved", self.outbox.resolve(op.txn_id, CONFIRMATION_REQUIRED, None, recovered=recovered,
                                                       error=refusal), (ONLINE, "")
            if exc.code not in SESSION_REFUSALS:
                return "resolved", self.outbox.resolve(op.txn_id, INVALID, None, recovered=recovered,
                                                       error=self.scrub(f"{exc.field}: {exc.reason}")), (ONLINE, "")
            # not decided yet and not sendable without its cashier's session: it waits for them
            if exc.code == "session_invalid":
                self.ledger.forget_session(op.cashier_id)
            log.warning("txn %s: waits for cashier %s to sign in again (%s)", op.txn_id, op.cashier_id, exc.code)
            self.outbox.note_attempt(op.txn_id, f"{exc.code}: waits for cashier {op.cashier_id} to sign in")
            return AWAITING_CASHIER, self.outbox.get(op.txn_id) or op, (ONLINE, "")
        except InvalidRequest as exc:     # refused before the ledger decided: nothing changed
            return "resolved", self.outbox.resolve(op.txn_id, INVALID, None, recovered=recovered,
                                                   error=self.scrub(f"{exc.field}: {exc.reason}")), (ONLINE, "")
        except TxnConflict as exc:        # the id was used for another request: nothing changed
            log.error("txn conflict: %s", self.scrub(str(exc)))
            return "resolved", self.outbox.resolve(op.txn_id, CONFLICT, None, recovered=recovered,
                                                   error=self.scrub(str(exc))), (ONLINE, "")
        except (LedgerUnavailable, UnsafeRedisConfig, LedgerNotInitialized, OSError) as exc:
            # Outcome unknown (or not sent): stays pending, re-sent with the same txn id.
            detail = self.scrub(f"{type(exc).__name__}: {exc}")
            log.warning("txn %s: no answer (%s); will retry with the same txn id", op.txn_id, detail)
            self.outbox.note_attempt(op.txn_id, detail)
            return "uncertain", self.outbox.get(op.txn_id) or op, self._state_of(exc)
        log.info("txn %s %s %s %d: %s%s", op.txn_id, op.kind, op.account_id, op.amount_minor,
                 result.status.value, " (replayed)" if result.replayed else "")
        return "resolved", self.outbox.resolve(op.txn_id, result.status.value, result.balance_minor,
                                               replayed=result.replayed, recovered=recovered,
                                               **extra), (ONLINE, "")

    def _call_ledger(self, op: Op, *, first: bool = False):
        """Worker thread: the ledger call(s) of one outbox row, always the same request for
        the same row (a charge's member PIN or code only with the one send it was given
        for: engine_confirm.py). Returns (Result, extra fields for Outbox.resolve)."""
        send = self._SENDERS.get(op.kind)
        if send is None:
            raise ValueError(f"unknown kind {op.kind!r}")
        who = dict(terminal_id=op.terminal_id, cashier_id=op.cashier_id, **self._confirmation_for(op, first))
        grant = self._op_grants.get(op.txn_id)
        return send(self, op, {**who, "approval_grant": grant} if grant else who)

    def _send_deduct(self, op: Op, who: dict):
        # found by card: the card goes with the charge, so a block since the look-up declines it
        return self.ledger.deduct(op.account_id, op.amount_minor, txn_id=op.txn_id, card_no=op.card_no or None,
                                  **who), {}

    def _send_credit(self, op: Op, who: dict):
        r = self.ledger.credit(op.account_id, op.amount_minor, txn_id=op.txn_id, method=op.method or "cash",
                               bonus_minor=op.bonus_minor, **who)
        # a top-up pays an open offline debt first (debt_minor): the principal got the rest
        return r, {"split": (op.amount_minor - r.debt_minor, op.bonus_minor), "debt_minor": r.debt_minor} \
            if r.applied else {}

    def _send_offline(self, op: Op, who: dict):
        # on the terminal's credential with the cashier who made it (gateway/offline.py)
        r = self.ledger.offline_deduct(op.account_id, op.amount_minor, txn_id=op.txn_id, made_at_ms=op.created_ms,
                                       made_by=op.cashier_id, card_no=op.card_no or None)
        return r, {"debt_minor": r.debt_minor}

    def _send_hold(self, op: Op, who: dict):       # the same ttl_s on every send: same request, same answer
        return self.ledger.hold(op.account_id, op.amount_minor, txn_id=op.txn_id, ttl_s=op.ttl_s,
                                card_no=op.card_no or None, **who), {}

    @staticmethod
    def _plain(who: dict) -> dict:
        """`who` without an approval grant (the calls that take none)."""
        return {k: v for k, v in who.items() if k != "approval_grant"}

    def _send_capture(self, op: Op, who: dict):
        return self.ledger.capture(op.original_txn_id, op.amount_minor, txn_id=op.txn_id,
                                   account_id=op.account_id, **self._plain(who)), {}

    def _send_void(self, op: Op, who: dict):
        return self.ledger.void(op.original_txn_id, txn_id=op.txn_id, account_id=op.account_id,
                                **self._plain(who)), {}

    def _send_refund(self, op: Op, who: dict):
        return self.ledger.refund(op.account_id, op.amount_minor, txn_id=op.txn_id,
                                  original_txn_id=op.original_txn_id, **who), {}

    def _send_sale(self, op: Op, who: dict):
        # a split-tender sale: the card leg and the other tenders, one ledger record; the row's
        # detail keeps the tenders, so a re-send is the same request (a different one: TXN_CONFLICT)
        d = op.details
        return self.ledger.sale(op.account_id, op.amount_minor, d["tenders"], txn_id=op.txn_id,
                                total_minor=d["total_minor"], change_minor=d.get("change_minor", 0),
                                card_no=op.card_no or None, **who), {}

    def _send_tender_refund(self, op: Op, who: dict):
        # the refund of a split sale, one row (one supervisor approval): the card leg back to
        # the card (`refund` under the row's txn id) and each other tender given back
        # (`tender_refund` under '<txn id>.t<n>', n its place in TENDER_METHODS); a re-send
        # replays every step. The answer is the first step that was not applied, else the last.
        d = op.details
        result = None
        if d.get("card_minor"):
            result = self.ledger.refund(op.account_id, d["card_minor"], txn_id=op.txn_id,
                                        original_txn_id=op.original_txn_id, **who)
            if not result.applied:
                return result, {}
        for method, amount_minor in d.get("tenders", {}).items():
            result = self.ledger.tender_refund(op.account_id, amount_minor,
                                               txn_id=step_txn_id(op.txn_id, f"t{TENDER_METHODS.index(method)}"),
                                               original_txn_id=op.original_txn_id, method=method, **who)
            if not result.applied:
                return result, {}
        return result, {}

    def _send_open(self, op: Op, who: dict):
        led, d, who = self.ledger, op.details, self._plain(who)
        r = led.open_account(op.account_id, txn_id=op.txn_id, holder_name=d.get("holder") or None,
                             phone=d.get("phone") or None, **who)
        if r.applied and op.card_no:
            card = led.issue_card(op.account_id, op.card_no, txn_id=step_txn_id(op.txn_id, "card"), **who)
            if not card.applied:      # the account is open; the card's refusal is the answer
                return replace(r, status=card.status), {}
        return r, {}

    def _send_card_replace(self, op: Op, who: dict):
        return self._replace_card(op, op.details, self._plain(who)), {}

    def _send_close(self, op: Op, who: dict):
        r = self.ledger.close_account(op.account_id, txn_id=op.txn_id, **who)
        if not r.applied:
            return r, {}
        return r, {"split": (-r.payout_minor, -r.bonus_forfeited_minor), "amount_minor": r.payout_minor}

    def _send_shift_close(self, op: Op, who: dict):
        # on the terminal's credential, the closer stated: the till journals a Z record whenever
        # the ledger is back, often after its cashier signed out or the till restarted
        d = op.details
        totals = dataclasses.asdict(ShiftTotals(**d["totals"]))      # every total, in core's order
        r = self.ledger.close_shift(shift_no=d["shift_no"], totals=totals, txn_id=op.txn_id,
                                    opened_ms=d.get("opened_ms") or None, extra_totals=d.get("extra") or None,
                                    shift_cashier_id=d.get("cashier_id") or None, closed_by=d["closed_by"])
        return r, {}

    # the ledger call(s) of each outbox row kind: one per core.kinds.TILL_KINDS (a test checks)
    _SENDERS = {"deduct": _send_deduct, "offline": _send_offline, "credit": _send_credit, "hold": _send_hold,
                "capture": _send_capture, "void": _send_void, "refund": _send_refund, "open": _send_open,
                "card_replace": _send_card_replace, "close": _send_close, "shift_close": _send_shift_close,
                "sale": _send_sale, "tender_refund": _send_tender_refund}

    def _replace_card(self, op: Op, d: dict, who: dict):
        """Block the old card (when named) and issue the new one (when named) to the same
        account: no money moves. The old card must be this account's (it is checked
        first, so another member's card is never blocked by a typo); one already
        blocked (reported lost before) does not stop the new card."""
        led, old = self.ledger, d.get("old_card", "")
        from core.result import Result
        answer = Result(Status.APPLIED, 0, False, op.txn_id, op.account_id, "card_replace", 0)
        if old:
            card = led.resolve_card(old)
            if card.status is Status.CARD_NOT_FOUND or card.account_id != op.account_id:
                return replace(answer, status=Status.CARD_NOT_FOUND)
            blocked = led.block_card(old, txn_id=op.txn_id, reason=d.get("reason") or "lost", **who)
            if blocked.status not in (Status.APPLIED, Status.CARD_BLOCKED):
                return replace(answer, status=blocked.status)
            answer = replace(answer, replayed=blocked.replayed, journal_id=blocked.journal_id)
        if op.card_no:
            issued = led.issue_card(op.account_id, op.card_no, txn_id=step_txn_id(op.txn_id, "card"), **who)
            answer = replace(issued, kind="card_replace", txn_id=op.txn_id)
        info = led.account(op.account_id)
        return replace(answer, balance_minor=info.balance_minor)

    def _sent(self, answer) -> None:
        outcome, op, (state, detail) = answer
        if outcome == "uncertain" and state == OFFLINE:
            # One operation without an answer does not mean Redis is gone (a reply may
            # have been lost): refusing everyone else would block the whole till for one
            # account. The connection monitor decides, now.
            self.ping()
        else:
            self._set_state(state, detail)
        if outcome == STALE:
            self._mark_stale([op])
        elif outcome == AWAITING_CASHIER:
            self._unresolved[op.txn_id] = op
            self._awaiting_retry.discard(op.txn_id)
            self._awaiting_cashier[op.txn_id] = op.cashier_id
            if op.txn_id not in self._from_earlier_run:   # an earlier run's row is reported once resolved
                self.opUncertain.emit(op)
        elif outcome == "resolved":
            self._resolved(op)
        else:
            self._unresolved[op.txn_id] = op
            self._awaiting_retry.add(op.txn_id)
            self.opUncertain.emit(op)

    def _read_split(self, op: Op) -> None:
        """What an applied charge, completed sale or refund took from (gave to) each
        bucket, from its journal entry, into the outbox for the shift report (a read
        worker; best effort: a failed read leaves it unknown, and the report says so).
        An entry without pd/bd touched the principal only (core/lua/includes/buckets.lua)."""
        sign = 1 if op.kind == "refund" else -1

        def read():
            past = self.history.load(op.txn_id)
            if not past.has_entry:
                return None
            pd = past.principal_delta_minor
            return (sign * op.amount_minor if pd is None else pd), past.bonus_delta_minor or 0

        def done(split) -> None:
            if split is not None and not self._closed:
                self.outbox.note_split(op.txn_id, *split)
        self.reads.run(read, done, lambda exc: log.info("txn %s: bucket split not read (%s)", op.txn_id,
                                                         type(exc).__name__))

    def _worker_bug(self, exc: Exception) -> None:
        # Only a bug gets here (e.g. the outbox disk is full). The op, if saved, stays
        # pending and is retried; if it was not saved it was never sent.
        log.error("operation worker failed: %s: %s", type(exc).__name__, self.scrub(str(exc)))

    def _resolved(self, op: Op) -> None:
        """`op` is decided (an answer, a re-check, a supervisor's abandon): report it once."""
        if self._unresolved.pop(op.txn_id, None) is None:
            return                     # already reported
        self._awaiting_retry.discard(op.txn_id)
        self._op_grants.pop(op.txn_id, None)
        self._awaiting_cashier.pop(op.txn_id, None)
        if self._stale.pop(op.txn_id, None) is not None:
            self.staleChanged.emit(self.stale_ops())
        self.pendingChanged.emit(len(self._unresolved))
        if op.txn_id in self._from_earlier_run:
            self._recovered.append(op)
            self._report_recovery()
        self.opResolved.emit(op)
        if op.applied and op.kind in SPLIT_KINDS and op.principal_delta_minor is None:
            self._read_split(op)

    def _report_recovery(self) -> None:
        if self._recovered and not self.recovering:
            self.recoveryFinished.emit(list(self._recovered))
            self._recovered.clear()

    def _mark_stale(self, ops: list[Op]) -> None:
        """Rows too old to re-send: out of the retry loop, still unresolved, shown to a supervisor."""
        new = False
        for op in ops:
            if op.txn_id not in self._unresolved:
                continue
            self._awaiting_retry.discard(op.txn_id)
            new |= op.txn_id not in self._stale
            self._stale[op.txn_id] = op
        if new:
            self.staleChanged.emit(self.stale_ops())
            self._report_recovery()            # the rest of an earlier run may be done now

    def abandon(self, txn_id: str, supervisor_id: str) -> Op | None:
        """A supervisor's decision on a row too old to re-send: it is given up (the
        customer was not charged, or it is handled by hand). Recorded in the outbox
        (status ABANDONED, who decided), never sent again; None if it is not such a row."""
        if txn_id not in self._stale or self._closed:
            return None
        check_id(supervisor_id, "supervisor_id")
        op = self.outbox.abandon(txn_id, supervisor_id)
        log.warning("txn %s %s %s %d: abandoned by supervisor %s (too old to re-send)", op.txn_id, op.kind,
                    op.account_id, op.amount_minor, supervisor_id)
        self._resolved(op)
        return op

    def recheck(self, txn_id: str, on_done, on_error) -> None:
        """Look a row too old to re-send up in the ledger, read-only (a worker): when Redis
        still holds its txn id's record, the row is resolved with the decision recorded
        there (`on_done("resolved", op)`); else `on_done("not_found", op)` and it stays
        with the supervisor. Never sends the operation."""
        op = self._stale.get(txn_id)
        if op is None:
            return

        def read():
            try:
                past = self.history.load(txn_id)
            except OperationNotFound:
                return "not_found", op
            resolved = self.outbox.resolve(txn_id, past.status or "APPLIED", past.balance_after_minor,
                                           replayed=True, recovered=txn_id in self._from_earlier_run)
            return "resolved", resolved

        def done(answer) -> None:
            outcome, row = answer
            if outcome == "resolved":
                self._resolved(row)
            on_done(outcome, row)
        self.reads.run(read, done, on_error)

    def _retry_pending(self) -> None:
        if self._resolving or self._closed or not self._awaiting_retry:
            return
        waiting = [self._unresolved[t] for t in sorted(self._awaiting_retry,
                                                        key=lambda t: self._unresolved[t].created_ms)
                   if t in self._unresolved]
        if self.ledger.known_retention_s() is not None:
            self._mark_stale([op for op in waiting if self.too_old_to_resend(op)])
        batch = [op for op in waiting if op.txn_id not in self._stale]
        if not batch:
            return
        self._resolving = True

        def resend_all():
            answers = []
            for op in batch:
                answer = self._send(op, first=False)
                answers.append(answer)
                if answer[0] == "uncertain":
                    break                 # Redis still away: try the rest next time
            return answers

        def done(answers):
            self._resolving = False
            for answer in answers:
                self._sent(answer)

        def failed(exc):
            self._resolving = False
            self._worker_bug(exc)
        self.ops.run(resend_all, done, failed)

    # ---------------------------------------------------------------- sessions

    def sign_in(self, cashier_id: str, pin: str, on_done, on_error) -> Task:
        """Check the PIN on the gateway (worker thread): a SignIn to on_done ('ok' opens the
        cashier's session there, which their operations then carry)."""
        def answered(signin) -> None:
            if signin.ok:
                self._cashier_back(cashier_id)
            on_done(signin)
        return self.reads.run(lambda: self.ledger.sign_in(cashier_id, pin), answered, on_error)

    def _cashier_back(self, cashier_id: str) -> None:
        """`cashier_id` has a session again: their rows that waited for it are re-sent."""
        waiting = [t for t, c in self._awaiting_cashier.items() if c == cashier_id]
        for txn_id in waiting:
            del self._awaiting_cashier[txn_id]
            if txn_id in self._unresolved:
                self._awaiting_retry.add(txn_id)
        if waiting and not self._closed:
            self._retry_pending()

    def sign_out(self, cashier_id: str) -> None:
        """End `cashier_id`'s session on the gateway (best effort: a session the gateway
        cannot be told about expires there on its own)."""
        if self._closed or not cashier_id:
            return
        if any(op.cashier_id == cashier_id for op in self._unresolved.values()):
            # their pending operations are re-sent with this session (else an undecided one is
            # refused); it expires on the gateway on its own
            return
        self.reads.run(lambda: self.ledger.sign_out(cashier_id), lambda _: None,
                       lambda exc: log.info("sign-out of %s not sent (%s)", cashier_id, type(exc).__name__))

    def approve(self, supervisor_id: str, pin: str, on_done, on_error, *, kind: str = "",
                cashier_id: str | None = None) -> Task:
        """A supervisor's PIN, checked by the gateway for one operation (worker thread):
        (SignIn, Approval | None) to on_done. The grant is kept here until the next
        operation submitted with `approved_by=supervisor_id` takes it. kind 'settings' or 'drawer':
        the till's own settings or printer (no operation; no cashier needs to be signed in)."""
        def answered(answer) -> None:
            signin, approval = answer
            if approval is not None and approval.grant:
                self._grants[approval.supervisor_id] = approval.grant
            on_done(answer)
        return self.reads.run(lambda: self.ledger.approve(supervisor_id, pin, kind=kind, cashier_id=cashier_id),
                              answered, on_error)
