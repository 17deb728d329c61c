"""Holds as the database sees them: the expiry sweep and the per-account summary.

An expired hold stops counting in Redis by itself; the database learns of its release
only from a journaled `hold_expire` entry, which `Ledger.expire_holds(account_id)`
writes. `HoldSweeper.sweep()` finds accounts whose database holds are still `active`
past their expiry (oldest first, at most `max_accounts` per sweep) and asks the ledger
to journal their release; the entries come back through the journal like any other,
so the sweep itself writes nothing to the database. Accounts the ledger had nothing to
release for (entries still in flight, or Redis no longer has the hold) are left alone
for `retry_after_s`, so a stuck row never makes the sweep spin.
"""
from __future__ import annotations

import logging
import time
from datetime import timedelta

from sqlalchemy import and_, func, select
from sqlalchemy.engine import Engine

from core import AccountNotFound, InvalidRequest, Ledger

from .models import Hold
from .dialect import utcnow

log = logging.getLogger(__name__)

EXPIRY_GRACE_S = 0.2        # Redis' clock and ours may differ a little


class HoldSweeper:
    def __init__(self, ledger: Ledger, engine: Engine, *, max_accounts: int = 200,
                 retry_after_s: float = 10.0):
        self.ledger, self.engine = ledger, engine
        self.max_accounts = max_accounts
        self.retry_after_s = retry_after_s
        self._quiet_until: dict[str, float] = {}

    def due_accounts(self) -> list[str]:
        cutoff = utcnow() - timedelta(seconds=EXPIRY_GRACE_S)
        with self.engine.connect() as conn:
            rows = conn.execute(select(Hold.account_id).where(
                Hold.status == "active", Hold.expires_at < cutoff).group_by(Hold.account_id)
                .order_by(func.min(Hold.expires_at)).limit(self.max_accounts * 2)).all()
        now = time.monotonic()
        due = []
        for (account_id,) in rows:
            if self._quiet_until.get(account_id, 0.0) > now:
                continue
            due.append(account_id)
            if len(due) >= self.max_accounts:
                break
        return due

    def sweep(self) -> int:
        """Journal the release of expired holds; answers how many the ledger released."""
        released = 0
        for account_id in self.due_accounts():
            try:
                count = self.ledger.expire_holds(account_id, limit=100)
            except (AccountNotFound, InvalidRequest) as exc:
                log.warning("cannot expire holds of account", extra={"account_id": account_id,
                                                                      "detail": str(exc)})
                count = 0
            released += count
            if count == 0:
                self._quiet_until[account_id] = time.monotonic() + self.retry_after_s
            else:
                self._quiet_until.pop(account_id, None)
        if len(self._quiet_until) > 100_000:
            now = time.monotonic()
            self._quiet_until = {a: t for a, t in self._quiet_until.items() if t > now}
        if released:
            log.info("expired holds released", extra={"holds": released})
        return released


def summary(engine: Engine, limit: int = 50) -> dict:
    """Active holds per account (count and sum)."""
    now = utcnow()
    with engine.connect() as conn:
        active = and_(Hold.status == "active", Hold.expires_at > now)
        by_account = conn.execute(select(Hold.account_id, func.count(), func.sum(Hold.amount_minor))
                                  .where(active).group_by(Hold.account_id).order_by(Hold.account_id)).all()
        expired = conn.execute(select(func.count()).select_from(Hold).where(
            Hold.status == "active", Hold.expires_at <= now)).scalar_one()
    return {"active_count": sum(int(r[1]) for r in by_account),
            "active_minor": sum(int(r[2] or 0) for r in by_account),
            "accounts": len(by_account), "expired_unreleased": int(expired),
            "by_account": [{"account_id": r[0], "count": int(r[1]), "sum_minor": int(r[2] or 0)}
                           for r in by_account[:limit]]}
