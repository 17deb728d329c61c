"""The database of record: SQLAlchemy 2.0 typed models of every table the service owns.

`accounts` and `ledger_entries` are a contract that other tools read; the rest record
how the service works (journal progress, passes, discrepancies, duplicates, quarantined
entries, ledger settings). Schema changes go through the Alembic migrations in
`reconcile_service/migrations`; these models must match them.

Journal positions: a Redis stream id ``<ms>-<seq>`` is kept as written (`journal_id`)
and as `journal_pos`, 34 digits (ms padded to 15, seq to 19), whose text order is the
stream order under any collation, so SQL can take maxima and compare positions.

The balance identity, per account (one Redis account hash)::

    accounts.balance_minor == SUM(ledger_entries.amount_minor WHERE account_id = it)
                            + SUM(duplicate_entries.amount_minor WHERE account_id = it)

The same holds bucket by bucket (migration 0005): `accounts.principal_minor` and
`bonus_minor` are the sums of the entries' `principal_delta_minor` / `bonus_delta_minor`
(journal fields `pd`, `bd`; absent: all principal), and their sum is `balance_minor`.
`ledger_entries` is append-only (a PostgreSQL trigger) and hash-chained per partition
(`chain_seq`, `row_hash`; see reconcile_service.chain); `daily_totals` mirrors its sums
per UTC day for the reports.

A duplicate (a txn id applied twice in Redis) is refused by the unique `txn_id` of
`ledger_entries` but did change the Redis balance, so it is kept in `duplicate_entries`
and counted; its reversal is an ordinary `compensate` entry in `ledger_entries`.
"""
from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Boolean, Date, DateTime, Integer, String, Text, UniqueConstraint, Index
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ID_LEN = 64          # core.validation's limit for account, txn, terminal and cashier ids
JOURNAL_ID_LEN = 41  # "<20 digits>-<20 digits>"
POS_LEN = 34
METHOD_LEN = 16
HASH_LEN = 64      # hex SHA-256


def journal_pos(journal_id: str) -> str:
    """The sortable form of a stream id ('1712-3' -> 34 digits). Raises ValueError."""
    ms, _, seq = journal_id.partition("-")
    # the drain computes one per entry: the ids Redis makes (ASCII digits, no leading
    # zeros, within the widths) are padded as they are; anything else takes the checks below
    if 0 < len(ms) <= 15 and 0 < len(seq) <= 19 and ms.isascii() and ms.isdigit() and seq.isascii() \
            and seq.isdigit() and (ms[0] != "0" or len(ms) == 1) and (seq[0] != "0" or len(seq) == 1):
        return ms.zfill(15) + seq.zfill(19)
    ms_i, seq_i = int(ms), int(seq or 0)
    if ms_i < 0 or seq_i < 0 or ms_i >= 10 ** 15 or seq_i >= 10 ** 19:
        raise ValueError(f"journal id {journal_id!r} out of range")
    return f"{ms_i:015d}{seq_i:019d}"


class Base(DeclarativeBase):
    pass


class Account(Base):
    __tablename__ = "accounts"
    account_id: Mapped[str] = mapped_column(String(ID_LEN), primary_key=True)
    balance_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    journal_partition: Mapped[int] = mapped_column(Integer, nullable=False)
    last_journal_id: Mapped[str] = mapped_column(String(JOURNAL_ID_LEN), nullable=False)
    last_journal_pos: Mapped[str] = mapped_column(String(POS_LEN), nullable=False)
    # position of the entry that last set `status` (freeze/unfreeze/open), so that
    # batches committed out of order still leave the latest status
    status_journal_pos: Mapped[str] = mapped_column(String(POS_LEN), nullable=False)
    # from the `name` of the open / restore entry; None when none was given
    holder_name: Mapped[str | None] = mapped_column(String(ID_LEN))
    # the two buckets (balance_minor == principal_minor + bonus_minor): sums of the
    # entries' principal_delta_minor / bonus_delta_minor, like balance_minor of amounts
    principal_minor: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    bonus_minor: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    # from the `ph` field of the open / restore entry (migration 0006); None when none was given
    phone: Mapped[str | None] = mapped_column(String(24))


class LedgerEntry(Base):
    __tablename__ = "ledger_entries"
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    txn_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False, unique=True)
    account_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)
    kind: Mapped[str] = mapped_column(String(32), nullable=False)
    amount_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    balance_after_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    terminal_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    cashier_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    original_txn_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    occurred_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    journal_partition: Mapped[int] = mapped_column(Integer, nullable=False)
    journal_id: Mapped[str] = mapped_column(String(JOURNAL_ID_LEN), nullable=False)
    journal_pos: Mapped[str] = mapped_column(String(POS_LEN), nullable=False)
    applied_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    # the buckets (principal_delta + bonus_delta == amount) and a top-up's payment
    # method (cash, wechat, alipay, bank_card, other); journal fields pd, bd, m
    principal_delta_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    bonus_delta_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    method: Mapped[str | None] = mapped_column(String(METHOD_LEN))
    # the hash chain of the partition (reconcile_service.chain): 1, 2, 3, ... in the
    # order the book was written, and SHA-256 over the canonical row and the previous hash
    chain_seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    row_hash: Mapped[str] = mapped_column(String(HASH_LEN), nullable=False)
    __table_args__ = (UniqueConstraint("journal_partition", "journal_id", name="uq_ledger_entries_position"),
                      UniqueConstraint("journal_partition", "chain_seq", name="uq_ledger_entries_chain"),
                      Index("ix_ledger_entries_account_pos", "account_id", "journal_pos"),
                      Index("ix_ledger_entries_occurred_at", "occurred_at"))


class DuplicateEntry(Base):
    """A journal entry whose txn id was already in `ledger_entries` at another position."""
    __tablename__ = "duplicate_entries"
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    txn_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False, index=True)
    account_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False, index=True)
    kind: Mapped[str] = mapped_column(String(32), nullable=False)
    amount_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    balance_after_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    terminal_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    cashier_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    original_txn_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    occurred_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    journal_partition: Mapped[int] = mapped_column(Integer, nullable=False)
    journal_id: Mapped[str] = mapped_column(String(JOURNAL_ID_LEN), nullable=False)
    journal_pos: Mapped[str] = mapped_column(String(POS_LEN), nullable=False)
    first_journal_partition: Mapped[int] = mapped_column(Integer, nullable=False)
    first_journal_id: Mapped[str] = mapped_column(String(JOURNAL_ID_LEN), nullable=False)
    # open (to repair) | compensated | reported (needs a person) | no_effect (amount 0) |
    # forged (Redis never applied it: reconcile_service.applied_proof; never compensated)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    compensation_txn_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    detected_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    principal_delta_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    bonus_delta_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    method: Mapped[str | None] = mapped_column(String(METHOD_LEN))
    __table_args__ = (UniqueConstraint("journal_partition", "journal_id", name="uq_duplicate_entries_position"),)


class QuarantinedEntry(Base):
    """A journal entry that could not be parsed: kept verbatim, acknowledged, alerted."""
    __tablename__ = "quarantined_entries"
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    journal_partition: Mapped[int] = mapped_column(Integer, nullable=False)
    journal_id: Mapped[str] = mapped_column(String(JOURNAL_ID_LEN), nullable=False)
    fields_json: Mapped[str] = mapped_column(Text, nullable=False)
    error: Mapped[str] = mapped_column(Text, nullable=False)
    quarantined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    __table_args__ = (UniqueConstraint("journal_partition", "journal_id", name="uq_quarantined_position"),)


class JournalProgress(Base):
    """Per partition: how far the database has got (maxima; batches may commit out of order)."""
    __tablename__ = "journal_progress"
    journal_partition: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    entries_applied: Mapped[int] = mapped_column(BigInteger, nullable=False)
    last_journal_id: Mapped[str] = mapped_column(String(JOURNAL_ID_LEN), nullable=False)
    last_journal_pos: Mapped[str] = mapped_column(String(POS_LEN), nullable=False)
    last_batch_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class LedgerSetting(Base):
    """Settings of the Redis ledger the database mirrors (e.g. `partitions`, for restore)."""
    __tablename__ = "ledger_settings"
    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text, nullable=False)


class ReconcilePass(Base):
    __tablename__ = "reconcile_passes"
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # running | clean | discrepancies | failed
    outcome: Mapped[str] = mapped_column(String(16), nullable=False)
    accounts_checked: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    accounts_in_flight: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)
    discrepancies_found: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    repairs_made: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    consumer: Mapped[str] = mapped_column(String(128), nullable=False)
    detail: Mapped[str | None] = mapped_column(Text)


class Discrepancy(Base):
    """Something that does not add up, with its cause and evidence (JSON)."""
    __tablename__ = "discrepancies"
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    # balance_mismatch | status_mismatch | missing_in_redis | missing_in_db |
    # duplicate_txn | malformed_entry | repair_failed | forged_entry | refund_exceeds_sale |
    # split_history (migration 0010: what the dropped split-account columns said)
    kind: Mapped[str] = mapped_column(String(32), nullable=False)
    account_id: Mapped[str | None] = mapped_column(String(ID_LEN), index=True)
    txn_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    journal_partition: Mapped[int | None] = mapped_column(Integer)
    journal_id: Mapped[str | None] = mapped_column(String(JOURNAL_ID_LEN))
    redis_balance_minor: Mapped[int | None] = mapped_column(BigInteger)
    db_balance_minor: Mapped[int | None] = mapped_column(BigInteger)
    cause: Mapped[str] = mapped_column(Text, nullable=False)
    evidence_json: Mapped[str] = mapped_column(Text, nullable=False)
    # open | repaired | cleared (no longer observed) | resolved (a person, `resolve ID --note`)
    status: Mapped[str] = mapped_column(String(16), nullable=False, index=True)
    repair_txn_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    first_pass_id: Mapped[int | None] = mapped_column(BigInteger)
    last_pass_id: Mapped[int | None] = mapped_column(BigInteger)
    found_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # `reconcile-service resolve ID --note` (status 'resolved'): what a person found and did
    resolution_note: Mapped[str | None] = mapped_column(Text)
    resolved_by: Mapped[str | None] = mapped_column(String(ID_LEN))


class Hold(Base):
    """One hold (pre-authorisation) and how it was resolved, from the journal kinds `hold`,
    `capture`, `void` and `hold_expire` (whose `orig` is the hold's txn id). Rows are
    built order-independently: the hold's own fields come from its `hold` entry, the
    resolution from the resolving entry with the lowest journal position (a hold
    resolves once; a second resolution is a violation the invariant checker reports)."""
    __tablename__ = "holds"
    hold_txn_id: Mapped[str] = mapped_column(String(ID_LEN), primary_key=True)
    account_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)
    amount_minor: Mapped[int | None] = mapped_column(BigInteger)                # None until the hold entry came
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # active | captured | voided | expired | lost (Redis lost it; restore does not bring holds back)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    captured_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    resolved_txn_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    resolved_kind: Mapped[str | None] = mapped_column(String(32))
    hold_journal_partition: Mapped[int | None] = mapped_column(Integer)
    hold_journal_id: Mapped[str | None] = mapped_column(String(JOURNAL_ID_LEN))
    hold_journal_pos: Mapped[str | None] = mapped_column(String(POS_LEN))
    resolved_journal_id: Mapped[str | None] = mapped_column(String(JOURNAL_ID_LEN))
    resolved_journal_pos: Mapped[str | None] = mapped_column(String(POS_LEN))
    created_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    __table_args__ = (Index("ix_holds_status_expires", "status", "expires_at"),
                      Index("ix_holds_account_id", "account_id"))


class ChainHead(Base):
    """Each partition's last link of the hash chain. Writers lock this row (an upsert)
    before they chain a batch, so batches of one partition committed by two daemons at
    once are chained one after the other, never both after the same row."""
    __tablename__ = "chain_heads"
    journal_partition: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    last_seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    last_hash: Mapped[str] = mapped_column(String(HASH_LEN), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class SaleTender(Base):
    """The tenders of split-tender sales (issue 31, migration 0013): one row per tender of
    a `sale` entry besides its card leg (field tn; `amount_minor` positive, `change_minor`
    on its cash row) and one per `tender_refund` entry (fields m, ta; `amount_minor`
    negative: given back). Written by the transaction that writes the entries, so the book
    has every sale whole; the card leg is the entry's own amount in ledger_entries. Not in
    the hash chain (its canonical form is frozen): `verify` checks each sale's rows add up
    with its card leg to the journaled total, and none without its entry."""
    __tablename__ = "sale_tenders"
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    txn_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)          # the entry's
    sale_txn_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)     # the sale's
    kind: Mapped[str] = mapped_column(String(32), nullable=False)                 # sale | tender_refund
    account_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)
    method: Mapped[str] = mapped_column(String(METHOD_LEN), nullable=False)
    amount_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    change_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    sale_total_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)    # sale rows: card + tenders
    terminal_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    cashier_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    occurred_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    journal_partition: Mapped[int] = mapped_column(Integer, nullable=False)
    journal_id: Mapped[str] = mapped_column(String(JOURNAL_ID_LEN), nullable=False)
    __table_args__ = (UniqueConstraint("journal_partition", "journal_id", "method", name="uq_sale_tenders_entry"),
                      Index("ix_sale_tenders_sale", "sale_txn_id"),
                      Index("ix_sale_tenders_occurred_at", "occurred_at"))


class OfflineDebt(Base):
    """A change of an account's offline debt (issue 27): +debt by an offline sale the balance
    did not cover (kind offline_debt: its journal field dt), -paid by a top-up that paid it
    (kind credit: dp). The entry itself is in ledger_entries, in the chain; an account's
    open debt is the sum of its rows (verify compares it with Redis's `dt`)."""
    __tablename__ = "offline_debts"
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    txn_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)
    account_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)
    kind: Mapped[str] = mapped_column(String(32), nullable=False)
    debt_delta_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    terminal_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    cashier_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    # when the till made the sale (offline), and when the ledger applied the entry
    made_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    occurred_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    journal_partition: Mapped[int] = mapped_column(Integer, nullable=False)
    journal_id: Mapped[str] = mapped_column(String(JOURNAL_ID_LEN), nullable=False)
    journal_pos: Mapped[str] = mapped_column(String(POS_LEN), nullable=False)
    applied_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    __table_args__ = (UniqueConstraint("txn_id", name="uq_offline_debts_txn"),
                      Index("ix_offline_debts_account", "account_id", "journal_pos"))


class ShiftClose(Base):
    """A terminal's Z record: one closed shift, from the journal kind `shift_close`
    (core.shifts). The entry itself is also in ledger_entries (amount 0), in the chain."""
    __tablename__ = "shift_closes"
    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True,
                                    autoincrement=True)
    txn_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)
    terminal_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)
    shift_no: Mapped[int] = mapped_column(BigInteger, nullable=False)
    cashier_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    closed_by: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)
    opened_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    closed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    sales_count: Mapped[int] = mapped_column(BigInteger, nullable=False)
    sales_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    refunds_count: Mapped[int] = mapped_column(BigInteger, nullable=False)
    refunds_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    topups_count: Mapped[int] = mapped_column(BigInteger, nullable=False)
    topups_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    record_json: Mapped[str] = mapped_column(Text, nullable=False)      # the Z record as journaled
    journal_partition: Mapped[int] = mapped_column(Integer, nullable=False)
    journal_id: Mapped[str] = mapped_column(String(JOURNAL_ID_LEN), nullable=False)
    journal_pos: Mapped[str] = mapped_column(String(POS_LEN), nullable=False)
    applied_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    __table_args__ = (UniqueConstraint("txn_id", name="uq_shift_closes_txn"),
                      Index("ix_shift_closes_terminal", "terminal_id", "shift_no"),
                      Index("ix_shift_closes_closed_at", "closed_at"))


class BackofficeUser(Base):
    """A login of the back-office page; `password_hash` is an argon2id hash."""
    __tablename__ = "backoffice_users"
    username: Mapped[str] = mapped_column(String(ID_LEN), primary_key=True)
    password_hash: Mapped[str] = mapped_column(Text, nullable=False)
    # owner | manager | clerk (migration 0011; logins made before it are owners)
    role: Mapped[str] = mapped_column(String(16), nullable=False, default="owner")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)


class AuditRecord(Base):
    """A back-office management action (core.audit), from the journal kind `audit`: the
    entry itself is in ledger_entries (amount 0, in the chain; its cashier_id is who, its
    occurred_at when) and its txn id commits to `record_json` (the SHA-256 prefix), so an
    edited record here no longer matches its chained row (`verify` reports it)."""
    __tablename__ = "audit_records"
    txn_id: Mapped[str] = mapped_column(String(ID_LEN), primary_key=True)
    username: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)
    action: Mapped[str] = mapped_column(String(80), nullable=False)
    target: Mapped[str] = mapped_column(Text, nullable=False)
    summary: Mapped[str] = mapped_column(Text, nullable=False)
    address: Mapped[str] = mapped_column(String(64), nullable=False)
    record_json: Mapped[str] = mapped_column(Text, nullable=False)      # as journaled
    occurred_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    journal_partition: Mapped[int] = mapped_column(Integer, nullable=False)
    journal_id: Mapped[str] = mapped_column(String(JOURNAL_ID_LEN), nullable=False)
    __table_args__ = (Index("ix_audit_records_occurred_at", "occurred_at"),
                      Index("ix_audit_records_user", "username", "occurred_at"))


class BackofficeSession(Base):
    """A signed-in session of the back-office page, kept on the server so that signing
    out, a password change or the login's deletion ends it at once (a copied cookie
    proves nothing then). `token_hash` is the SHA-256 of the cookie's session token;
    `expires_at` is an absolute lifetime from sign-in, never renewed."""
    __tablename__ = "backoffice_sessions"
    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    username: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)
    address: Mapped[str] = mapped_column(String(64), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    __table_args__ = (Index("ix_backoffice_sessions_user", "username"),)


class DailyTotal(Base):
    """Per partition, UTC day, kind, payment method and whether the rows are duplicates:
    the sums of the entries' bucket deltas, kept by the same transaction that inserts the
    entries (so always equal to them). The liability report adds whole days from here and
    reads only the partial days at a period's edges from ledger_entries. One row set per
    partition, so consumers of different partitions never wait for each other."""
    __tablename__ = "daily_totals"
    journal_partition: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    kind: Mapped[str] = mapped_column(String(32), primary_key=True)
    method: Mapped[str] = mapped_column(String(METHOD_LEN), primary_key=True)   # '' when none
    duplicate: Mapped[bool] = mapped_column(Boolean, primary_key=True)
    principal_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    bonus_minor: Mapped[int] = mapped_column(BigInteger, nullable=False)
    entries: Mapped[int] = mapped_column(BigInteger, nullable=False)


# ---------------------------------------------------------------- members (issue 14, migration 0006)

class Card(Base):
    """A member card (a credential of an account), from the journal kinds `card_issue` and
    `card_block` (field `card`). A card is issued once and blocked at most once; each
    half of the row comes from its own entry, so batches may commit in any order."""
    __tablename__ = "cards"
    card_no: Mapped[str] = mapped_column(String(ID_LEN), primary_key=True)
    account_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)       # active | blocked
    block_reason: Mapped[str | None] = mapped_column(String(16))          # lost | damaged | stolen | other
    issue_txn_id: Mapped[str | None] = mapped_column(String(ID_LEN))      # None: an account id used as a card
    issued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    block_txn_id: Mapped[str | None] = mapped_column(String(ID_LEN))
    blocked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    __table_args__ = (Index("ix_cards_account_id", "account_id"),)


class ShopSetting(Base):
    """A shop setting as journaled by `setting` entries (spend_order, balance_cap,
    promo:<id>); the entry with the highest position wins ('' = removed). Partitions after
    the first repeat the spending order and the cap: the first partition's entry is kept."""
    __tablename__ = "shop_settings"
    name: Mapped[str] = mapped_column(String(80), primary_key=True)
    value: Mapped[str] = mapped_column(String(64), nullable=False)
    txn_id: Mapped[str] = mapped_column(String(ID_LEN), nullable=False)
    journal_pos: Mapped[str] = mapped_column(String(POS_LEN), nullable=False)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
