"""The gateway's side of offline sales (issue 27): settling what a till sold while it could
reach no gateway, and what a till needs to know to sell offline at all.

Settlement (`POST /v1/ops/offline_deduct`) goes on the terminal's credential alone, with
`made_by`, the cashier the till states was signed in when it made the sale (like a Z
record's `closed_by`): an offline sale happened, and its settlement must not wait for that
cashier to sign in again. A till can always claim to have been offline; what bounds it is
checked on the server: per account and till the ledger's script (offline_deduct.lua,
`offline_member_limit` per window of `offline_max_duration_s`), and per till here, the
shop's `offline_till_budget` over the same windows of sale times (`OfflineBudgets`).

`GET /v1/offline` answers what a till keeps for its offline decisions: the shop's offline
limits, the member-PIN threshold, and the blocked cards (a listing of O(cards), asked every
few minutes by each till).
"""
from __future__ import annotations

import time

from redis.exceptions import WatchError

from core.offline import OfflineLimits
from core.result import Status

BUDGET_KEY_PREFIX = "cs:offline_budget:"


def budget_key(terminal_id: str) -> str:
    """The till's budget record: one hash in one slot ({terminal} hash tag)."""
    return f"{BUDGET_KEY_PREFIX}{{{terminal_id}}}"


class OfflineBudgets:
    """Per-till offline budgets: hash fields `start` (ms: the window's first sale time),
    `sum` (minor units) and one field per txn id in the window (`t:<txn id>` -> amount), so
    a retry of a txn counts once. Windows move only forward (as the script's); a new window
    replaces the record, so it holds one window's txns. No TTL: a ledger key never expires
    (core/key_ttls.py)."""

    def __init__(self, client):
        self.client = client

    def reserve(self, terminal_id: str, txn_id: str, amount_minor: int, made_at_ms: int,
                limits: OfflineLimits) -> bool:
        """Count `txn_id` in the till's budget; False when it would pass the budget."""
        key = budget_key(terminal_id)
        window_ms = limits.max_duration_s * 1000
        while True:
            with self.client.pipeline() as pipe:
                try:
                    pipe.watch(key)
                    if pipe.hexists(key, f"t:{txn_id}"):
                        return True
                    start, total = pipe.hmget(key, "start", "sum")
                    new_window = start is None or made_at_ms >= int(start) + window_ms
                    total = 0 if new_window else int(total or 0)
                    if total + amount_minor > limits.till_budget_minor:
                        return False
                    pipe.multi()
                    if new_window:
                        pipe.delete(key)
                        pipe.hset(key, "start", made_at_ms)
                    pipe.hset(key, mapping={"sum": total + amount_minor, f"t:{txn_id}": amount_minor})
                    pipe.execute()
                    return True
                except WatchError:
                    continue

    def release(self, terminal_id: str, txn_id: str) -> None:
        """Give back a reservation the ledger did not apply (it declined the txn)."""
        key = budget_key(terminal_id)
        while True:
            with self.client.pipeline() as pipe:
                try:
                    pipe.watch(key)
                    amount = pipe.hget(key, f"t:{txn_id}")
                    if amount is None:
                        return
                    pipe.multi()
                    pipe.hdel(key, f"t:{txn_id}")
                    pipe.hincrby(key, "sum", -int(amount))
                    pipe.execute()
                    return
                except WatchError:
                    continue


def offline_info(ledger, approval_above_minor: int = 0) -> dict:
    """GET /v1/offline: what a till keeps to decide offline sales (`approval_above_minor`:
    the gateway's supervisor threshold: a charge above it is never sold offline)."""
    limits = ledger.offline_limits()
    blocked = sorted(c.card_no for c in ledger.cards() if c.status is Status.CARD_BLOCKED)
    return {"member_limit_minor": limits.member_limit_minor, "till_budget_minor": limits.till_budget_minor,
            "max_duration_s": limits.max_duration_s,
            "member_pin_above_minor": ledger.shop_settings().member_pin_above_minor,
            "approval_above_minor": approval_above_minor,
            "blocked_cards": blocked, "as_of_ms": int(time.time() * 1000)}
