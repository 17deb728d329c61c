"""Restore / cold start: bring accounts that Redis lost back from the database of record.

Order is what makes it safe:
  1. The partition count comes from Redis (`cs:meta`) or, on an empty Redis, from the
     database (`ledger_settings.partitions`, stored by the consumer).
  2. Every journal stream that still exists is drained into the database first (and
     entries pending at other consumers are waited for), so a balance is never restored
     from a database that is missing entries Redis had already journaled.
  3. Each database account that Redis does not hold is recreated with
     `Ledger.restore_account` (a core script: journaled as kind 'restore', never
     overwriting an account that exists).
  4. On an empty Redis, `cs:meta` is written last: until then terminals (which open the
     ledger with auto_init=False) get LedgerNotInitialized instead of declining sales
     against accounts that are not back yet.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from sqlalchemy import func, select, update
from sqlalchemy.engine import Engine

from core import Ledger, Status
from core.keys import META_KEY
from core.validation import internal_txn_id

from .journal import Consumer
from .members import bonus_column, restore_members
from .metrics import Metrics
from .models import Account, Hold, OfflineDebt
from .dialect import utcnow
from .store import get_setting

log = logging.getLogger(__name__)

PAGE_SIZE = 1000


class RestoreRefused(Exception):
    """Restore cannot proceed safely; the message says why and what to do."""


@dataclass
class RestoreReport:
    partitions: int
    redis_was_empty: bool
    entries_drained: int = 0
    accounts_checked: int = 0
    accounts_restored: int = 0
    accounts_present: int = 0
    members: dict = None            # cards and shop settings restored / present

    def __post_init__(self):
        self.members = {}

    def as_dict(self) -> dict:
        return dict(partitions=self.partitions, redis_was_empty=self.redis_was_empty,
                    entries_drained=self.entries_drained, accounts_checked=self.accounts_checked,
                    accounts_restored=self.accounts_restored, accounts_present=self.accounts_present,
                    **self.members)


def restore_txn_id(account_id: str, balance_minor: int, status: str, last_journal_pos: str) -> str:
    """Deterministic per database state: a retried restore replays, a later one is new.
    In the reserved namespace ('@rst:<digest>'), so no client txn id can equal it."""
    digest = hashlib.sha1(f"{account_id}|{balance_minor}|{status}|{last_journal_pos}".encode()).hexdigest()
    return internal_txn_id("rst", digest[:40])


def redis_has_ledger(ledger: Ledger) -> bool:
    return ledger.client.hget(META_KEY, "partitions") is not None


def database_partitions(engine: Engine) -> int | None:
    value = get_setting(engine, "partitions")
    return int(value) if value else None


def _holds_lost(engine: Engine, account_id: str) -> None:
    """restore_account brings back balance and status, not holds: the account's holds
    that were active are gone from Redis (their money is available again), so the
    database stops showing them as active."""
    with engine.begin() as conn:
        conn.execute(update(Hold).where(Hold.account_id == account_id, Hold.status == "active")
                     .values(status="lost", resolved_kind="restore", updated_at=utcnow()))


def restore(ledger: Ledger, engine: Engine, consumer_name: str, metrics: Metrics, *,
            batch_size: int = 500, claim_idle_ms: int = 30_000, progress=None, stop=lambda: False) -> RestoreReport:
    empty = not redis_has_ledger(ledger)
    db_partitions = database_partitions(engine)
    if empty:
        if db_partitions is None:
            raise RestoreRefused("Redis holds no ledger and the database has no ledger settings "
                                 "(nothing was ever consumed into it): there is nothing to restore. "
                                 "For a new installation run `cashierctl init`.")
        # streams and groups first, cs:meta last (step 4): terminals wait for it
        ledger.prepare_partitions(db_partitions)
    elif db_partitions is not None and db_partitions != len(ledger.partitions):
        log.warning("Redis and the database disagree on the partition count; Redis' count is used",
                    extra={"redis_partitions": len(ledger.partitions), "database_partitions": db_partitions})
    report = RestoreReport(len(ledger.partitions), empty)

    consumer = Consumer(ledger, engine, consumer_name, batch_size=batch_size,
                        claim_idle_ms=claim_idle_ms, metrics=metrics)
    report.entries_drained = consumer.drain(wait_for_pending=True, stop=stop)
    if stop():
        raise RestoreRefused("stopped before the journal was drained; nothing was restored")
    log.info("journal drained before restore", extra={"entries": report.entries_drained})

    after = ""
    while not stop():
        with engine.connect() as conn:
            rows = conn.execute(select(Account.account_id, Account.balance_minor, Account.status,
                                       Account.last_journal_pos, Account.holder_name, Account.phone,
                                       *bonus_column())
                                .where(Account.account_id > after)
                                .order_by(Account.account_id).limit(PAGE_SIZE)).all()
        if not rows:
            break
        after = rows[-1].account_id
        present = ledger.accounts([r.account_id for r in rows])
        with engine.connect() as conn:        # their open offline debts (issue 27), from the book
            debts = {a: int(d) for a, d in conn.execute(
                select(OfflineDebt.account_id, func.sum(OfflineDebt.debt_delta_minor))
                .where(OfflineDebt.account_id.in_([r.account_id for r in rows]))
                .group_by(OfflineDebt.account_id))}
        for r in rows:
            report.accounts_checked += 1
            if present[r.account_id] is not None:
                report.accounts_present += 1
                continue
            result = ledger.restore_account(
                r.account_id, r.balance_minor, status=r.status, holder_name=r.holder_name, phone=r.phone,
                bonus_minor=int(getattr(r, "bonus_minor", 0) or 0), debt_minor=max(0, debts.get(r.account_id, 0)),
                txn_id=restore_txn_id(r.account_id, r.balance_minor, r.status, r.last_journal_pos))
            if result.status is Status.APPLIED:
                report.accounts_restored += 1
                metrics.restored_accounts.inc()
                _holds_lost(engine, r.account_id)
            elif result.status is Status.ACCOUNT_EXISTS:
                report.accounts_present += 1      # came back meanwhile: never overwritten
            else:
                raise RestoreRefused(f"restoring account {r.account_id} was answered {result.status.value}")
        if progress:
            progress(report.accounts_checked)
    if stop():
        raise RestoreRefused(f"stopped after restoring {report.accounts_restored} accounts; run restore "
                             "again to finish (it never overwrites)")
    report.members = restore_members(ledger, engine)     # cards and shop settings
    if empty:
        ledger.init(partitions=report.partitions)   # cs:meta last: the ledger is open again
    log.info("restore finished", extra=report.as_dict())
    return report
