"""The sale screen's state and rules, without Qt: who is signed in, the one operation in
flight, the account on screen and whose result the panel shows, the shift's history,
and the rules that decide what may start and what an answer changes.

The sale screen (desktop/sale.py) is a view over one `SaleSession`: it asks the session
and shows the answer. A refusal is a value (`Refusal`, with a `Reason` or one of the
engine's refusal codes), turned into words by the view (texts.refusal_words) and handed
as a value to the dialogs that start operations through the screen. Background reads
are tracked by their task handles (desktop/workers.Task): a look-up the cashier moved
on from is cancelled, so its answer is dropped, never shown for another customer.

`engine` is only read here (its outbox, `closed`), duck-typed: this module imports no Qt.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

from core import InvalidRequest
from core.kinds import REFUNDABLE_KINDS, TILL_HOLD_RESOLUTIONS
from core.validation import check_id

from . import money
from .outbox import HOLD_OPEN, Op, now_ms

LARGE_AMOUNT_MINOR = 100_000   # default: amounts above ¥1,000 are confirmed with the amount in words
# connection states in which the engine refuses every new operation (the panel says so)
REFUSING_STATES = ("offline", "not_initialized", "unsafe", "revoked")


class Reason(str, Enum):
    """Why the sale screen itself refused to start an operation (the engine's own
    refusals come as its codes: offline, account_pending, ...)."""
    BUSY = "busy"                  # the screen's operation has not been answered yet
    NO_SHIFT = "no_shift"          # nobody signed in
    HOLD_CLOSED = "hold_closed"    # completing or releasing a hold that is no longer open
    NO_HOLD = "no_hold"            # no open hold to act on
    NOT_LOOKED_UP = "not_looked_up"  # the account field was edited: the account typed is not on screen yet


@dataclass(frozen=True)
class Refusal:
    """An operation that was not started, and why (`reason`: a Reason value or an
    engine refusal code, both plain strings for texts.refusal_words)."""
    reason: str

    def __post_init__(self) -> None:
        if isinstance(self.reason, Reason):
            object.__setattr__(self, "reason", self.reason.value)


@dataclass(frozen=True)
class Controls:
    """Which of the screen's actions can be used now, and the hold the panel acts on."""
    charge: bool
    refund: bool
    top_up: bool
    hold_actions: bool
    hold: Op | None


@dataclass(frozen=True)
class Entry:
    """The account and amount typed, checked: the values, or why each field is refused
    (core.validation's reason for the account, a money.AmountError reason for the amount)."""
    account_id: str
    amount_minor: int | None
    account_reason: str = ""
    amount_reason: str = ""

    @property
    def ok(self) -> bool:
        return not (self.account_reason or self.amount_reason)


def parse_amount(text: str, decimal_point: str) -> tuple[int | None, str]:
    """(the amount in minor units, "") or (None, why it is not an amount)."""
    try:
        return money.parse_amount_minor(text, decimal_point=decimal_point), ""
    except money.AmountError as exc:
        return None, exc.reason


def check_entry(account_id: str, amount_text: str, decimal_point: str) -> Entry:
    """The sale form's fields as a charge or hold takes them."""
    try:
        check_id(account_id, "account_id")
        account_reason = ""
    except InvalidRequest as exc:
        account_reason = exc.reason
    amount_minor, amount_reason = parse_amount(amount_text, decimal_point)
    return Entry(account_id, amount_minor, account_reason, amount_reason)


@dataclass(frozen=True)
class Resolution:
    """What an operation's answer changes on the screen."""
    account_changed: bool = False   # the account on screen was updated from the answer (re-read it too)
    read_account: bool = False      # the account typed (never looked up) is read now
    notice: bool = False            # it was being checked and the panel moved on: say it in the notice
    decided: bool = False           # the panel's own operation: show its decision


@dataclass(frozen=True)
class HistoryChange:
    new_row: bool                   # a row is inserted at the top
    also: Op | None = None          # another row to show again (the hold a capture or void resolved)


@dataclass
class ShiftHistory:
    """The shift's operations as the history lists them: row 0 is the newest."""
    rows: dict[str, int] = field(default_factory=dict)     # txn id -> row
    ops: dict[str, Op] = field(default_factory=dict)

    def clear(self) -> None:
        self.rows.clear()
        self.ops.clear()

    def add(self, op: Op, shift_id: int | None, *, any_shift: bool = False) -> HistoryChange | None:
        """Put `op` in the list (new at the top, else its row updated); None when it is
        another shift's finished operation that this list does not show."""
        if op.shift_id != shift_id and op.txn_id not in self.rows and not op.pending and not any_shift:
            return None
        self.ops[op.txn_id] = op
        new_row = op.txn_id not in self.rows
        if new_row:
            self.rows = {t: r + 1 for t, r in self.rows.items()}
            self.rows[op.txn_id] = 0
        also = self.ops[op.original_txn_id] if (op.kind in TILL_HOLD_RESOLUTIONS
                                                and op.original_txn_id in self.rows) else None
        return HistoryChange(new_row, also)

    def op(self, txn_id) -> Op | None:
        return self.ops.get(txn_id)

    def holds(self) -> list[Op]:
        return [op for op in self.ops.values() if op.kind == "hold"]


class SaleSession:
    def __init__(self, engine):
        self.engine = engine
        self.cashier = None
        self.shift_id: int | None = None
        self.busy_txn: str | None = None          # the sale's operation until answered
        self.watch_txn: str | None = None         # the panel's operation while it is being checked
        self.checking: set[str] = set()           # operations shown as being checked, not yet resolved
        self.account = None                       # the AccountView on screen
        self.screen_account = ""                  # the customer on screen (looked up or charged)
        self.result_account: str | None = None    # whose result the panel shows
        self.result_reason = ""                   # the refusal the panel shows (e.g. offline)
        self.last_result: tuple | None = None     # ("approved" | "declined", Op) the panel shows
        self.large_amount_minor = LARGE_AMOUNT_MINOR
        self.history = ShiftHistory()
        self.lookup = None                        # the look-up task whose answer may still be shown
        self.refresh = None                       # the re-read of the account on screen in flight
        # The cashier edited the account field: what is typed is nobody on screen yet, so
        # nothing is charged to it until it is looked up and shown (never the account
        # that was on screen, never the one typed unseen).
        self.unconfirmed = False

    # ---------------------------------------------------------------- shift

    def start(self, cashier, shift_id: int) -> None:
        self.cashier, self.shift_id = cashier, shift_id
        self.history.clear()

    def stop(self) -> None:
        self.cashier, self.shift_id = None, None

    def new_sale(self) -> None:
        """The next customer: a charge still being checked stays with the engine."""
        self.busy_txn = None
        self.watch_txn = None
        self.screen_account = ""
        self.account = None
        self.unconfirmed = False

    # ---------------------------------------------------------------- result panel

    def result_shown(self, remember: tuple | None, account_id: str | None, reason: str) -> None:
        self.last_result = remember
        self.result_account = remember[1].account_id if remember else account_id
        self.result_reason = reason

    # ---------------------------------------------------------------- account

    def cancel_lookup(self) -> None:
        """An answer to what was there before is not for what is there now."""
        if self.lookup is not None:
            self.lookup.cancel()

    def lookup_wanted(self, lookup) -> bool:
        """Is look-up `lookup` still the one whose answer may be shown?"""
        return lookup is not None and lookup is self.lookup and not lookup.cancelled

    def account_edited(self, text: str) -> tuple[bool, bool]:
        """The account field was edited: (the account shown is dropped, the result is
        another customer's)."""
        self.cancel_lookup()
        dropped = self.account is not None
        self.account = None
        self.unconfirmed = bool(text.strip())
        return dropped, self.result_account is not None and self.result_account != text.strip()

    def customer_changes_to(self, account_id: str) -> tuple[bool, bool] | None:
        """A different account comes on screen: None if it is the same one, else (clear
        the amount typed for the previous customer, clear the panel's result)."""
        if account_id == self.screen_account:
            return None
        clear_amount = bool(self.screen_account)
        self.screen_account = account_id
        self.busy_txn = None                  # still with the engine; its end goes to the notice
        self.watch_txn = None
        return clear_amount, self.result_account != account_id

    def looking_up(self) -> None:
        """What the field holds is being looked up (the account line says whom): no
        longer an edit nobody has seen."""
        self.account = None
        self.unconfirmed = False

    def account_shown(self, view) -> None:
        """`view` is on screen: what the field holds is now looked up and seen."""
        self.account = view
        self.unconfirmed = False

    def found_as(self, query: str, account_id: str) -> None:
        """`query` (a card, a phone) found `account_id`: the same customer, so what was
        typed and shown for them meanwhile stays."""
        self.cancel_lookup()
        if query and self.screen_account == query:
            self.screen_account = account_id
            if self.result_account == query:
                self.result_account = account_id

    def refreshed(self, new) -> bool:
        """A re-read answered: True when it replaces the account on screen (same account,
        not older than what is shown)."""
        self.refresh = None
        current = self.account
        if current is not None and current.account_id == new.account_id and new.read_ms >= current.read_ms:
            # a re-read by id: the customer is still the one found by their card
            self.account = replace(new, card_no=new.card_no or current.card_no)
            return True
        return False

    def account_after(self, view, op: Op):
        """The account on screen right after `op` applied, from the op's own (fresh) answer:
        the balance after it (a hold answers the available balance instead)."""
        if op.kind == "hold":
            return replace(view, available_minor=op.balance_after_minor, read_ms=now_ms())
        held_minor = view.held_minor
        if op.kind == "credit":           # the bonus came with it
            view = replace(view, bonus_minor=view.bonus_minor + op.bonus_minor)
        elif op.kind == "close":
            view = replace(view, bonus_minor=0, status="closed")
        elif op.bonus_delta_minor is not None:
            view = replace(view, bonus_minor=max(0, view.bonus_minor + op.bonus_delta_minor))
        if op.kind in TILL_HOLD_RESOLUTIONS:
            hold = self.engine.outbox.get(op.original_txn_id)
            held_minor = max(0, held_minor - (hold.amount_minor if hold else 0))
        # a charge's split is read later: until the refresh, never more bonus than balance
        return replace(view, balance_minor=op.balance_after_minor, bonus_minor=min(view.bonus_minor,
                                                                                   op.balance_after_minor),
                       available_minor=op.balance_after_minor - held_minor, read_ms=now_ms())

    # ---------------------------------------------------------------- rules

    @property
    def idle(self) -> bool:
        return self.busy_txn is None and self.cashier is not None

    @staticmethod
    def refundable(op: Op | None) -> Op | None:
        """`op` if it is an applied charge or completed sale (a capture refunds like a charge)."""
        # an offline sale that left a debt is not refundable (the ledger refuses it: refund.lua)
        return op if op is not None and op.kind in REFUNDABLE_KINDS and op.applied and not op.debt_minor else None

    def target_hold(self, selected: Op | None, typed_account_id: str) -> Op | None:
        """The hold the panel acts on: the open hold selected in the history, else the
        newest open hold of the account typed; None when there is none."""
        if self.engine.closed:
            return None
        outbox = self.engine.outbox
        if selected is not None and selected.kind == "hold":
            if selected.applied and outbox.hold_state(selected) == HOLD_OPEN:
                return selected
            return None
        if not typed_account_id:
            return None
        for hold in outbox.open_holds(typed_account_id):
            if outbox.hold_state(hold) == HOLD_OPEN:
                return hold
        return None

    def controls(self, online: bool, selected: Op | None, typed_account_id: str,
                 offline_sales: bool = False) -> Controls:
        """`offline_sales`: the till sells offline (desktop/offline.py): a charge may be made,
        nothing else."""
        go = self.idle and online
        hold = self.target_hold(selected, typed_account_id)
        return Controls(charge=go or (self.idle and offline_sales), refund=go and self.refundable(selected) is not None,
                        top_up=go, hold_actions=go and hold is not None, hold=hold)

    def typed_refusal(self, typed_account_id: str) -> Refusal | None:
        """Why a charge or hold on the account typed cannot start now: the screen's
        operation is in flight, nobody is signed in (the screen says nothing), or the
        field was edited and what it holds has not been looked up and shown."""
        if self.busy_txn is not None:
            return Refusal(Reason.BUSY)
        if self.cashier is None or self.shift_id is None:
            return Refusal(Reason.NO_SHIFT)
        if self.unconfirmed and typed_account_id:
            return Refusal(Reason.NOT_LOOKED_UP)
        return None

    def refusal(self, kind: str, original_txn_id: str = "") -> Refusal | None:
        """Why `kind` cannot start now as the screen's operation (None: it may)."""
        if self.busy_txn is not None:
            return Refusal(Reason.BUSY)
        if self.cashier is None:
            return Refusal(Reason.NO_SHIFT)
        if kind in TILL_HOLD_RESOLUTIONS:
            hold = self.engine.outbox.get(original_txn_id)
            if hold is not None and hold.kind == "hold" and self.engine.outbox.hold_state(hold) != HOLD_OPEN:
                return Refusal(Reason.HOLD_CLOSED)
        return None

    def hold_refusal(self, hold: Op | None) -> Refusal | None:
        """Complete sale… / Release hold on `hold` (the panel's target)."""
        if self.busy_txn is not None:
            return Refusal(Reason.BUSY)
        return Refusal(Reason.NO_HOLD) if hold is None else None

    def hold_to_act_on(self, selected: Op | None, typed_account_id: str) -> Op | Refusal:
        """The hold Complete sale… / Release hold act on (`target_hold`), or why they cannot."""
        hold = self.target_hold(selected, typed_account_id)
        refusal = self.hold_refusal(hold)
        return hold if refusal is None else refusal

    def needs_confirming(self, amount_minor: int) -> bool:
        """A large amount is confirmed with the amount in words first."""
        return amount_minor > self.large_amount_minor

    def released_minor(self, op: Op) -> int:
        """What a completed sale gave back of its hold (0 when it took all of it)."""
        if op.kind != "capture":
            return 0
        hold = self.engine.outbox.get(op.original_txn_id)
        return hold.amount_minor - op.amount_minor if hold is not None and hold.amount_minor > op.amount_minor else 0

    # ---------------------------------------------------------------- answers

    def started(self, op: Op, account_id: str) -> None:
        self.busy_txn = op.txn_id
        self.watch_txn = op.txn_id
        self.screen_account = account_id

    def resolved(self, op: Op, typed_account_id: str) -> Resolution:
        """The engine decided `op` (already in the history)."""
        account_changed = read_account = False
        if op.applied and self.account is not None and self.account.account_id == op.account_id:
            self.account = self.account_after(self.account, op)
            account_changed = True
        elif op.applied and self.account is None and typed_account_id == op.account_id:
            read_account = True           # typed without a look-up (fresh: this write dropped the cache)
        was_checked = op.txn_id in self.checking
        self.checking.discard(op.txn_id)
        if op.txn_id != self.watch_txn:
            return Resolution(account_changed, read_account, notice=was_checked)
        self.busy_txn = None
        self.watch_txn = None
        return Resolution(account_changed, read_account, decided=True)

    def uncertain(self, op: Op) -> bool:
        """`op` has no answer yet and is being checked: True if it is the panel's. Only
        its account waits (the engine refuses it until the answer is known); the next
        customer can be served meanwhile."""
        self.checking.add(op.txn_id)
        if op.txn_id == self.watch_txn:
            self.busy_txn = None
            return True
        return False

    def connection_changed(self, state: str, online: bool) -> str | Refusal | None:
        """"again" when the panel's connection refusal is over, a Refusal when the
        connection is lost while nothing is in flight, else None."""
        if self.watch_txn is not None:
            return None
        if online and self.result_reason in REFUSING_STATES:
            return "again"
        if state in REFUSING_STATES:
            return Refusal(state)
        return None
