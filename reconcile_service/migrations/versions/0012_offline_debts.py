"""Offline debts (issue 27): the table `offline_debts`, one row per journal entry that
changes an account's offline debt (an offline sale the balance did not cover, kind
offline_debt, +dt; a top-up that paid a debt, kind credit, -dp). A book written before has
no such entries: the table starts empty. Nothing else changes (the hash chain's canonical
form is untouched: the entries themselves are in ledger_entries as before).

Revision ID: 0012
Revises: 0011
"""
import sqlalchemy as sa
from alembic import op


revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'offline_debts',
        sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), primary_key=True, autoincrement=True),
        sa.Column('txn_id', sa.String(64), nullable=False),
        sa.Column('account_id', sa.String(64), nullable=False),
        sa.Column('kind', sa.String(32), nullable=False),
        sa.Column('debt_delta_minor', sa.BigInteger(), nullable=False),
        sa.Column('terminal_id', sa.String(64)),
        sa.Column('cashier_id', sa.String(64)),
        sa.Column('made_at', sa.DateTime(timezone=True)),
        sa.Column('occurred_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('journal_partition', sa.Integer(), nullable=False),
        sa.Column('journal_id', sa.String(41), nullable=False),
        sa.Column('journal_pos', sa.String(34), nullable=False),
        sa.Column('applied_at', sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint('txn_id', name='uq_offline_debts_txn'),
    )
    op.create_index('ix_offline_debts_account', 'offline_debts', ['account_id', 'journal_pos'])


def downgrade() -> None:
    op.drop_index('ix_offline_debts_account', table_name='offline_debts')
    op.drop_table('offline_debts')
