"""Drop what the removed split accounts (issue 12) left in the schema (issue 28 item 10):
the table `sub_balances` (one row per Redis account hash; since the removal it has held
exactly the rows of `accounts`, which the reconcile pass and verify now read instead)
and the columns `root_account_id`, `transfer_id`, `peer_account_id` of `ledger_entries`
and `duplicate_entries` (with `ix_duplicate_entries_root`). Every row the service wrote
since the removal has root = its account and no transfer.

The hash chain is untouched: none of the dropped columns is in a row's canonical form
(reconcile_service.chain, version 1), so every row already in the book verifies as
before; no row is rewritten (on PostgreSQL, ALTER TABLE ... DROP COLUMN fires no row
trigger; on SQLite the batch copies the table, values and ids as they were).

A book that ever held a split account would lose what those columns said, so before
dropping anything the upgrade keeps it as one open discrepancy `split_history` per
account with such rows (an entry whose root is not its account or that names a transfer
or a peer; a `sub_balances` row that is not its `accounts` row: a shard 'A#k', a root's
own part, split state), the values in its evidence. A book without split history (every
book written since the removal) gets none. A person resolves them
(`reconcile-service resolve`).

Downgrade puts the columns back (root = the entry's account, no transfer) and rebuilds
`sub_balances` from `accounts`; the split_history discrepancies stay.

Revision ID: 0010
Revises: 0009
"""
from __future__ import annotations

import json
from collections import defaultdict

import sqlalchemy as sa
from alembic import op


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None

ENTRY_TABLES = ('ledger_entries', 'duplicate_entries')
SPLIT_HISTORY = 'split_history'


def _split_history(conn) -> dict[str, dict]:
    """{account id: what the dropped columns and table say about it} for the accounts
    with split history (empty for a book written since the removal)."""
    found: dict[str, dict] = defaultdict(dict)
    for table in ENTRY_TABLES:
        for r in conn.execute(sa.text(
                f"SELECT txn_id, account_id, kind, journal_partition, journal_id, root_account_id, transfer_id, "
                f"peer_account_id FROM {table} WHERE transfer_id IS NOT NULL OR peer_account_id IS NOT NULL "
                f"OR (root_account_id IS NOT NULL AND root_account_id <> account_id) ORDER BY journal_pos")):
            found[r.account_id].setdefault(table, []).append(dict(r._mapping))
    for r in conn.execute(sa.text(
            "SELECT s.account_id, s.root_account_id, s.balance_minor, s.status, s.last_journal_id, s.closed, "
            "s.shards, a.account_id AS in_accounts FROM sub_balances s LEFT JOIN accounts a "
            "ON a.account_id = s.account_id WHERE a.account_id IS NULL OR s.root_account_id <> s.account_id "
            "OR s.shards <> 0 OR s.closed OR s.balance_minor <> a.balance_minor OR s.status <> a.status "
            "OR s.last_journal_pos <> a.last_journal_pos")):
        row = dict(r._mapping)
        row["closed"] = bool(row["closed"])
        row["in_accounts"] = row["in_accounts"] is not None
        found[r.account_id]["sub_balance"] = row
    return found


def _keep_split_history(conn) -> None:
    history = _split_history(conn)
    if not history:
        return
    rows = []
    for account_id in sorted(history):
        evidence = history[account_id]
        n = sum(len(v) for k, v in evidence.items() if k in ENTRY_TABLES)
        rows.append(dict(kind=SPLIT_HISTORY, account_id=account_id, status='open',
                         cause=(f"split-account history of {account_id} (split accounts were removed; "
                                f"migration 0010 dropped sub_balances and the entries' root/transfer/peer "
                                f"columns): {n} entries with a root, transfer or peer"
                                + (", a sub-balance row" if "sub_balance" in evidence else "")
                                + "; the values are in the evidence"),
                         evidence_json=json.dumps(evidence, sort_keys=True, default=str)))
    conn.execute(sa.text("INSERT INTO discrepancies (kind, account_id, cause, evidence_json, status, found_at) "
                         "VALUES (:kind, :account_id, :cause, :evidence_json, :status, CURRENT_TIMESTAMP)"), rows)


def upgrade() -> None:
    conn = op.get_bind()
    _keep_split_history(conn)
    with op.batch_alter_table('duplicate_entries') as batch:
        batch.drop_index('ix_duplicate_entries_root')
    for table in ENTRY_TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column('peer_account_id')
            batch.drop_column('transfer_id')
            batch.drop_column('root_account_id')
    with op.batch_alter_table('sub_balances') as batch:
        batch.drop_index('ix_sub_balances_root')
    op.drop_table('sub_balances')


def downgrade() -> None:
    conn = op.get_bind()
    op.create_table('sub_balances',
        sa.Column('account_id', sa.String(length=64), nullable=False),
        sa.Column('root_account_id', sa.String(length=64), nullable=False),
        sa.Column('balance_minor', sa.BigInteger(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('journal_partition', sa.Integer(), nullable=False),
        sa.Column('last_journal_id', sa.String(length=41), nullable=False),
        sa.Column('last_journal_pos', sa.String(length=34), nullable=False),
        sa.Column('status_journal_pos', sa.String(length=34), nullable=False),
        sa.Column('closed', sa.Boolean(), nullable=False),
        sa.Column('closed_journal_pos', sa.String(length=34), nullable=False),
        sa.Column('shards', sa.Integer(), nullable=False),
        sa.Column('split_journal_pos', sa.String(length=34), nullable=False),
        sa.PrimaryKeyConstraint('account_id'))
    with op.batch_alter_table('sub_balances') as batch:
        batch.create_index('ix_sub_balances_root', ['root_account_id'], unique=False)
    conn.execute(sa.text("""
        INSERT INTO sub_balances (account_id, root_account_id, balance_minor, status, created_at, updated_at,
            journal_partition, last_journal_id, last_journal_pos, status_journal_pos, closed,
            closed_journal_pos, shards, split_journal_pos)
        SELECT account_id, account_id, balance_minor, status, created_at, updated_at, journal_partition,
            last_journal_id, last_journal_pos, status_journal_pos, false, '', 0, ''
        FROM accounts"""))
    for table in ENTRY_TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column('root_account_id', sa.String(length=64), nullable=True))
            batch.add_column(sa.Column('transfer_id', sa.String(length=32), nullable=True))
            batch.add_column(sa.Column('peer_account_id', sa.String(length=64), nullable=True))
    with op.batch_alter_table('duplicate_entries') as batch:
        batch.create_index('ix_duplicate_entries_root', ['root_account_id'], unique=False)
    # root = the entry's account, as every row written since the removal had; the book
    # is append-only on PostgreSQL (migration 0005), so its trigger is off for this
    # statement only, inside this migration's transaction
    postgres = conn.dialect.name == 'postgresql'
    for table in ENTRY_TABLES:
        if postgres and table == 'ledger_entries':
            conn.execute(sa.text("ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only"))
        conn.execute(sa.text(f"UPDATE {table} SET root_account_id = account_id"))
        if postgres and table == 'ledger_entries':
            conn.execute(sa.text("ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only"))
