"""The till's offline sales (issue 27): what it keeps to sell while it reaches no gateway,
and whether one sale may be made offline.

Offline = no gateway answered (every URL refused or timed out) for more than
`offline_after_s` (a slow answer or a decline is not offline). Then a charge (and only a
plain charge: no top-up, refund, 退卡 or hold, nothing that needs a supervisor or the
member's PIN) may be made offline when all of these hold, else it is refused with a
reason the screen says in words:

- the till has the shop's offline settings (`GET /v1/offline`, fetched every
  `FACTS_INTERVAL_S` while online and kept in the data dir): per-member limit, per-till
  budget, maximum duration, member-PIN threshold, supervisor threshold, blocked cards;
- the outage is not older than the maximum duration;
- the card is not on the block list (its age is shown);
- the till saw the member's available balance at most `balance_max_age_s` ago (a look-up
  while online), and that balance minus what this till took offline from the member
  since covers the charge;
- this till's offline sales of the member, and of all members, stay within the limit and
  the budget, counted in windows of the maximum duration exactly as the server counts
  them (core/lua/offline_deduct.lua, gateway/offline.py), so an honest till is never
  refused at settlement.

Offline sales are outbox rows of kind 'offline' (their txn id saved before the receipt
prints); on reconnect they are sent in the order they were made (desktop/engine.py).
The till is untrusted: the server enforces the same limit and budget whatever it claims.
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

FACTS_FILE = "offline.json"
DEFAULT_OFFLINE_AFTER_S = 5                  # no gateway for this long: offline
DEFAULT_BALANCE_MAX_AGE_S = 12 * 3600        # a balance seen longer ago is not trusted offline
FACTS_INTERVAL_S = 60                        # the offline settings and block list, refreshed


@dataclass(frozen=True)
class OfflineFacts:
    """The shop's offline settings and block list as the gateway last answered them."""
    member_limit_minor: int = 0
    till_budget_minor: int = 0
    max_duration_s: int = 0
    member_pin_above_minor: int = 0
    approval_above_minor: int = 0
    blocked_cards: tuple = ()
    as_of_ms: int = 0


@dataclass(frozen=True)
class OfflineUse:
    """What the screen says while offline: "offline: ¥X of ¥Y budget used"."""
    used_minor: int
    budget_minor: int
    since_ms: int
    ends_ms: int
    blocklist_as_of_ms: int


@dataclass
class _Stored:
    facts: dict = field(default_factory=dict)
    seen: dict = field(default_factory=dict)        # account -> [available_minor, seen_ms, has_pin (1/0/-1)]
    offline_since_ms: int = 0                        # 0: online
    cards: dict = field(default_factory=dict)       # card number -> account (as a look-up found it)
    names: dict = field(default_factory=dict)       # account -> holder name (for the screen)


class OfflineStore:
    """The offline facts in the till's data dir (a JSON file, replaced atomically)."""

    def __init__(self, data_dir: Path):
        self.path = Path(data_dir) / FACTS_FILE
        self._lock = threading.Lock()      # written by the read workers and the UI thread
        self._data = _Stored()
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            self._data = _Stored(raw.get("facts", {}), raw.get("seen", {}), int(raw.get("offline_since_ms", 0)),
                                 raw.get("cards", {}), raw.get("names", {}))
        except (OSError, ValueError, TypeError, AttributeError):
            pass                        # none yet (or unreadable: as if none; nothing is sold on it)

    def _save(self) -> None:
        with self._lock:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(asdict(self._data), sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.path)

    @property
    def facts(self) -> OfflineFacts | None:
        f = self._data.facts
        if not f:
            return None
        return OfflineFacts(**{**f, "blocked_cards": tuple(f.get("blocked_cards", ()))})

    def note_facts(self, answer: dict) -> None:
        names = OfflineFacts.__dataclass_fields__
        self._data.facts = {k: (list(v) if k == "blocked_cards" else int(v)) for k, v in answer.items() if k in names}
        self._save()

    def note_balance(self, account_id: str, available_minor: int, seen_ms: int, has_pin: bool | None = None,
                     *, card_no: str = "", holder_name: str = "") -> None:
        before = self._data.seen.get(account_id)
        if card_no:
            self._data.cards[card_no] = account_id
        if holder_name:
            self._data.names[account_id] = holder_name
        pin = (-1 if has_pin is None else int(has_pin)) if has_pin is not None or before is None else before[2]
        self._data.seen[account_id] = [int(available_minor), int(seen_ms), pin]
        self._save()

    def seen(self, account_id: str) -> tuple[int, int, bool | None] | None:
        s = self._data.seen.get(account_id)
        if not s:
            return None
        return s[0], s[1], None if s[2] == -1 else bool(s[2])

    def account_of(self, query: str) -> str | None:
        """The account a card number (or an account id) stands for, as seen online."""
        account = self._data.cards.get(query, query)
        return account if account in self._data.seen else None

    def holder_name(self, account_id: str) -> str:
        return self._data.names.get(account_id, "")

    @property
    def offline_since_ms(self) -> int:
        return self._data.offline_since_ms

    def went_offline(self, at_ms: int) -> None:
        if not self._data.offline_since_ms:
            self._data.offline_since_ms = int(at_ms)
            self._save()

    def back_online(self) -> None:
        if self._data.offline_since_ms:
            self._data.offline_since_ms = 0
            self._save()


def windows(sales, window_ms: int, key) -> dict:
    """(start ms, sum) of the current window of each key(sale), as the server counts them:
    a sale made before its key's window ends counts in it, a later one opens a new window."""
    out: dict = {}
    for op in sales:
        k = key(op)
        w = out.get(k)
        if w is not None and op.created_ms < w[0] + window_ms:
            out[k] = (w[0], w[1] + op.amount_minor)
        else:
            out[k] = (op.created_ms, op.amount_minor)
    return out


def refusal(store: OfflineStore, sales, account_id: str, amount_minor: int, card_no: str, now_ms: int,
            *, balance_max_age_s: int = DEFAULT_BALANCE_MAX_AGE_S) -> str | None:
    """Why a charge of `amount_minor` to `account_id` may not be made offline now (a
    Refused reason), or None. `sales`: this till's offline sales that count (oldest first,
    Outbox.offline_sales_since)."""
    facts = store.facts
    if facts is None or facts.till_budget_minor <= 0 or facts.member_limit_minor <= 0:
        return "offline_not_set_up"
    since = store.offline_since_ms or now_ms
    if now_ms - since > facts.max_duration_s * 1000:
        return "offline_duration_over"
    if card_no and card_no in facts.blocked_cards:
        return "offline_card_blocked"
    if facts.approval_above_minor and amount_minor > facts.approval_above_minor:
        return "offline_needs_supervisor"
    seen = store.seen(account_id)
    if seen is None or now_ms - seen[1] > balance_max_age_s * 1000:
        return "offline_balance_unknown"
    available, seen_ms, has_pin = seen
    if amount_minor > facts.member_pin_above_minor and has_pin is not False:
        return "offline_needs_member_pin"      # the member has a PIN, or the till does not know
    window_ms = facts.max_duration_s * 1000
    taken_since_seen = sum(op.amount_minor for op in sales if op.account_id == account_id and op.created_ms >= seen_ms)
    if amount_minor > available - taken_since_seen:
        return "offline_over_balance"
    member = windows(sales, window_ms, lambda op: op.account_id).get(account_id)
    if member and now_ms < member[0] + window_ms and member[1] + amount_minor > facts.member_limit_minor:
        return "offline_member_limit"
    if amount_minor > facts.member_limit_minor:
        return "offline_member_limit"
    till = windows(sales, window_ms, lambda op: "").get("")
    if till and now_ms < till[0] + window_ms and till[1] + amount_minor > facts.till_budget_minor:
        return "offline_budget"
    if amount_minor > facts.till_budget_minor:
        return "offline_budget"
    return None


def use(store: OfflineStore, sales, now_ms: int) -> OfflineUse | None:
    """The budget used in the current window (None: no offline settings)."""
    facts = store.facts
    if facts is None:
        return None
    window_ms = facts.max_duration_s * 1000
    till = windows(sales, window_ms, lambda op: "").get("")
    used = till[1] if till and now_ms < till[0] + window_ms else 0
    since = store.offline_since_ms or now_ms
    return OfflineUse(used, facts.till_budget_minor, since, since + window_ms, facts.as_of_ms)
