"""The member layer in the database of record (issue 14): cards and shop settings.

`apply_member_entries` runs inside the consumer's batch transaction (`store.apply_batch`)
and turns `card_issue` / `card_block` entries into `cards` rows and `setting` entries into
`shop_settings` rows, order-independently (issue half and block half of a card each come
from their own entry; a setting follows the entry with the highest position). These
kinds move no money, so `store` leaves them out of the balance rows. `restore_members`
brings cards and settings back into a Redis that lost them (`reconcile-service restore`);
`verify_members` compares them with Redis (`verify`).
"""
from __future__ import annotations

import hashlib
import logging
from datetime import datetime
from typing import Iterable

from sqlalchemy import case, select
from sqlalchemy.engine import Connection, Engine

from core import JournalEntry, Ledger, Status
from core.kinds import CARD_KINDS, SETTING_KIND
from core.members import card_key, card_map_key, settings_key
from core.validation import internal_txn_id

from .dialect import insert_for, ms_to_datetime
from .models import Account, Card, ShopSetting, journal_pos

log = logging.getLogger(__name__)

# Kinds that move no money and belong to no balance row: cards and shop settings.
NON_BALANCE_KINDS = (*CARD_KINDS, SETTING_KIND)


def apply_member_entries(conn: Connection, entries: Iterable[JournalEntry], now: datetime) -> None:
    cards: dict[str, dict] = {}
    settings: dict[str, dict] = {}
    for e in sorted(entries, key=lambda e: journal_pos(e.journal_id)):
        if e.kind in CARD_KINDS and e.card_no:
            row = cards.setdefault(e.card_no, dict(
                card_no=e.card_no, account_id=e.account_id, status="active", block_reason=None,
                issue_txn_id=None, issued_at=None, block_txn_id=None, blocked_at=None, updated_at=now))
            if e.kind == "card_issue":
                row.update(account_id=e.account_id, issue_txn_id=e.txn_id, issued_at=ms_to_datetime(e.occurred_ms))
            else:
                row.update(account_id=e.account_id, status="blocked", block_reason=e.card_reason or None,
                           block_txn_id=e.txn_id, blocked_at=ms_to_datetime(e.occurred_ms))
        elif e.kind == SETTING_KIND and e.setting and not e.txn_id.startswith("@set:"):
            # partitions after the first repeat the setting under internal ids: one row is enough
            settings[e.setting] = dict(name=e.setting, value=e.setting_value, txn_id=e.txn_id,
                                       journal_pos=journal_pos(e.journal_id), updated_at=now)
    if cards:
        ins = insert_for(conn, Card)
        ex, tbl = ins.excluded, Card.__table__.c
        blocked = ex.block_txn_id.isnot(None)
        issued = ex.issue_txn_id.isnot(None)
        conn.execute(ins.on_conflict_do_update(index_elements=["card_no"], set_=dict(
            status=case((blocked, ex.status), else_=tbl.status),
            block_reason=case((blocked, ex.block_reason), else_=tbl.block_reason),
            block_txn_id=case((blocked, ex.block_txn_id), else_=tbl.block_txn_id),
            blocked_at=case((blocked, ex.blocked_at), else_=tbl.blocked_at),
            issue_txn_id=case((issued, ex.issue_txn_id), else_=tbl.issue_txn_id),
            issued_at=case((issued, ex.issued_at), else_=tbl.issued_at),
            updated_at=ex.updated_at)), [cards[k] for k in sorted(cards)])
    if settings:
        ins = insert_for(conn, ShopSetting)
        ex, tbl = ins.excluded, ShopSetting.__table__.c
        newer = ex.journal_pos > tbl.journal_pos
        conn.execute(ins.on_conflict_do_update(index_elements=["name"], set_=dict(
            value=case((newer, ex.value), else_=tbl.value),
            txn_id=case((newer, ex.txn_id), else_=tbl.txn_id),
            journal_pos=case((newer, ex.journal_pos), else_=tbl.journal_pos),
            updated_at=ex.updated_at)), [settings[k] for k in sorted(settings)])


def bonus_column() -> list:
    """`accounts.bonus_minor` (backoffice's migration 0005, from the entries' `bd`) when the
    schema has it: restore gives each account its bonus bucket back."""
    column = getattr(Account, "bonus_minor", None)
    return [column] if column is not None else []


# ---------------------------------------------------------------- restore

def restore_txn_id(*parts: object) -> str:
    """Deterministic per database state, in the reserved namespace ('@rst:...')."""
    return internal_txn_id("rst", hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest()[:40])


def restore_members(ledger: Ledger, engine: Engine) -> dict[str, int]:
    """Cards and shop settings the database has and Redis does not (never overwriting)."""
    counts = {"cards_restored": 0, "cards_present": 0, "settings_restored": 0}
    with engine.connect() as conn:
        cards = conn.execute(select(Card).order_by(Card.card_no)).all()
        settings = conn.execute(select(ShopSetting).order_by(ShopSetting.name)).all()
    for c in cards:
        part = ledger.schema.partition_of(c.card_no)
        reply = ledger._with_retry(ledger._script, "card_restore", [card_key(part, c.card_no), card_map_key(part)],
                                   [c.card_no, c.account_id, c.status, c.block_reason or ""], txn_id=None)
        if reply[0] == "APPLIED":
            counts["cards_restored"] += 1
        elif reply[0] == "CARD_IN_USE":
            counts["cards_present"] += 1
        else:
            raise RuntimeError(f"restoring card {c.card_no} was answered {reply[0]}: {reply[3]}")
        # the account's own card list, which a charge presented by card is checked against
        ledger.members.record_card(c.account_id, c.card_no, "blocked" if c.status == "blocked" else "active")
    present = ledger.client.hgetall(settings_key(ledger.partitions[0]))
    for s in settings:
        if not s.value or present.get(s.name) == s.value:
            continue
        every = not s.name.startswith("promo:")
        result = ledger._setting(s.name, s.value, txn_id=restore_txn_id(s.name, s.value, s.journal_pos),
                                 every_partition=every, terminal_id=None, cashier_id=None, internal=True)
        if result.status is Status.APPLIED:
            counts["settings_restored"] += 1
    return counts


# ---------------------------------------------------------------- verify

def verify_members(ledger: Ledger, engine: Engine, report) -> None:
    """Every card of the database is in Redis with the same account and status, and every
    shop setting has its database value on every partition that reads it."""
    with engine.connect() as conn:
        cards = conn.execute(select(Card)).all()
        settings = conn.execute(select(ShopSetting)).all()
    pipe = ledger.client.pipeline(transaction=False)
    for c in cards:
        pipe.hmget(card_key(ledger.schema.partition_of(c.card_no), c.card_no), "a", "st")
    live = pipe.execute() if cards else []
    for c, (owner, st) in zip(cards, live):
        report.checked["cards"] += 1
        if owner is None:
            report.add("card_missing_in_redis", c.account_id, f"card {c.card_no} is in the database, not in Redis",
                       card_no=c.card_no)
        elif (owner, st) != (c.account_id, c.status):
            report.add("card_mismatch", c.account_id, f"card {c.card_no}: Redis {owner}/{st}, database "
                       f"{c.account_id}/{c.status}", card_no=c.card_no)
    _verify_buckets(ledger, engine, report)
    cfgs = [ledger.client.hgetall(settings_key(p)) for p in ledger.partitions]
    for s in settings:
        report.checked["settings"] += 1
        parts = cfgs[:1] if s.name.startswith("promo:") else cfgs
        for i, cfg in enumerate(parts):
            if cfg.get(s.name, "") != s.value:
                report.add("setting_mismatch", None, f"setting {s.name}: database {s.value!r}, Redis partition "
                           f"{i} {cfg.get(s.name, '')!r}", setting=s.name)


def _verify_buckets(ledger: Ledger, engine: Engine, report) -> None:
    """Each Redis account's bonus bucket lies within 0..balance (a closed account holds
    nothing), and equals the database's `accounts.bonus_minor` where the schema has it and
    the account's entries are all in the database."""
    ids = [a for p in ledger.partitions for a in ledger.account_ids(p)]
    live = ledger.accounts(ids)
    db_bonus = {}
    column = bonus_column()
    if column:
        with engine.connect() as conn:
            db_bonus = {r[0]: (int(r[1] or 0), r[2]) for r in conn.execute(
                select(Account.account_id, column[0], Account.last_journal_pos))}
    for account_id, info in live.items():
        if info is None:
            continue
        report.checked["buckets"] += 1
        if not 0 <= info.bonus_minor <= info.balance_minor:
            report.add("bucket_out_of_range", account_id, f"bonus {info.bonus_minor} outside 0..balance "
                       f"{info.balance_minor}", bonus_minor=info.bonus_minor)
        if info.status == "closed" and info.balance_minor != 0:
            report.add("closed_with_balance", account_id, f"closed account holds {info.balance_minor}")
        row = db_bonus.get(account_id)
        if row is not None and info.last_journal_id and journal_pos(info.last_journal_id) == row[1] \
                and row[0] != info.bonus_minor:
            report.add("bucket_mismatch", account_id, f"Redis bonus {info.bonus_minor} != database "
                       f"{row[0]}", redis_bonus_minor=info.bonus_minor, db_bonus_minor=row[0])
