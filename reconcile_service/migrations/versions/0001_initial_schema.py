"""Initial schema: accounts, ledger_entries and the reconciliation tables.

Revision ID: 0001
Revises: 
Create Date: 2026-11-30 04:40:52.065105
"""
from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('accounts',
    sa.Column('account_id', sa.String(length=64), nullable=False),
    sa.Column('balance_minor', sa.BigInteger(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('journal_partition', sa.Integer(), nullable=False),
    sa.Column('last_journal_id', sa.String(length=41), nullable=False),
    sa.Column('last_journal_pos', sa.String(length=34), nullable=False),
    sa.Column('status_journal_pos', sa.String(length=34), nullable=False),
    sa.PrimaryKeyConstraint('account_id')
    )
    op.create_table('discrepancies',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('account_id', sa.String(length=64), nullable=True),
    sa.Column('txn_id', sa.String(length=64), nullable=True),
    sa.Column('journal_partition', sa.Integer(), nullable=True),
    sa.Column('journal_id', sa.String(length=41), nullable=True),
    sa.Column('redis_balance_minor', sa.BigInteger(), nullable=True),
    sa.Column('db_balance_minor', sa.BigInteger(), nullable=True),
    sa.Column('cause', sa.Text(), nullable=False),
    sa.Column('evidence_json', sa.Text(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('repair_txn_id', sa.String(length=64), nullable=True),
    sa.Column('first_pass_id', sa.BigInteger(), nullable=True),
    sa.Column('last_pass_id', sa.BigInteger(), nullable=True),
    sa.Column('found_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('resolved_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('discrepancies', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_discrepancies_account_id'), ['account_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_discrepancies_status'), ['status'], unique=False)

    op.create_table('duplicate_entries',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('txn_id', sa.String(length=64), nullable=False),
    sa.Column('account_id', sa.String(length=64), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('amount_minor', sa.BigInteger(), nullable=False),
    sa.Column('balance_after_minor', sa.BigInteger(), nullable=False),
    sa.Column('terminal_id', sa.String(length=64), nullable=True),
    sa.Column('cashier_id', sa.String(length=64), nullable=True),
    sa.Column('original_txn_id', sa.String(length=64), nullable=True),
    sa.Column('occurred_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('journal_partition', sa.Integer(), nullable=False),
    sa.Column('journal_id', sa.String(length=41), nullable=False),
    sa.Column('journal_pos', sa.String(length=34), nullable=False),
    sa.Column('first_journal_partition', sa.Integer(), nullable=False),
    sa.Column('first_journal_id', sa.String(length=41), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('compensation_txn_id', sa.String(length=64), nullable=True),
    sa.Column('detected_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('resolved_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('journal_partition', 'journal_id', name='uq_duplicate_entries_position')
    )
    with op.batch_alter_table('duplicate_entries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_duplicate_entries_account_id'), ['account_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_duplicate_entries_txn_id'), ['txn_id'], unique=False)

    op.create_table('journal_progress',
    sa.Column('journal_partition', sa.Integer(), autoincrement=False, nullable=False),
    sa.Column('entries_applied', sa.BigInteger(), nullable=False),
    sa.Column('last_journal_id', sa.String(length=41), nullable=False),
    sa.Column('last_journal_pos', sa.String(length=34), nullable=False),
    sa.Column('last_batch_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('journal_partition')
    )
    op.create_table('ledger_entries',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('txn_id', sa.String(length=64), nullable=False),
    sa.Column('account_id', sa.String(length=64), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('amount_minor', sa.BigInteger(), nullable=False),
    sa.Column('balance_after_minor', sa.BigInteger(), nullable=False),
    sa.Column('terminal_id', sa.String(length=64), nullable=True),
    sa.Column('cashier_id', sa.String(length=64), nullable=True),
    sa.Column('original_txn_id', sa.String(length=64), nullable=True),
    sa.Column('occurred_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('journal_partition', sa.Integer(), nullable=False),
    sa.Column('journal_id', sa.String(length=41), nullable=False),
    sa.Column('journal_pos', sa.String(length=34), nullable=False),
    sa.Column('applied_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('journal_partition', 'journal_id', name='uq_ledger_entries_position'),
    sa.UniqueConstraint('txn_id')
    )
    with op.batch_alter_table('ledger_entries', schema=None) as batch_op:
        batch_op.create_index('ix_ledger_entries_account_pos', ['account_id', 'journal_pos'], unique=False)

    op.create_table('ledger_settings',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('value', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('name')
    )
    op.create_table('quarantined_entries',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('journal_partition', sa.Integer(), nullable=False),
    sa.Column('journal_id', sa.String(length=41), nullable=False),
    sa.Column('fields_json', sa.Text(), nullable=False),
    sa.Column('error', sa.Text(), nullable=False),
    sa.Column('quarantined_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('journal_partition', 'journal_id', name='uq_quarantined_position')
    )
    op.create_table('reconcile_passes',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('outcome', sa.String(length=16), nullable=False),
    sa.Column('accounts_checked', sa.BigInteger(), nullable=False),
    sa.Column('accounts_in_flight', sa.BigInteger(), nullable=False),
    sa.Column('discrepancies_found', sa.Integer(), nullable=False),
    sa.Column('repairs_made', sa.Integer(), nullable=False),
    sa.Column('consumer', sa.String(length=128), nullable=False),
    sa.Column('detail', sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )


def downgrade() -> None:
    op.drop_table('reconcile_passes')
    op.drop_table('quarantined_entries')
    op.drop_table('ledger_settings')
    with op.batch_alter_table('ledger_entries', schema=None) as batch_op:
        batch_op.drop_index('ix_ledger_entries_account_pos')

    op.drop_table('ledger_entries')
    op.drop_table('journal_progress')
    with op.batch_alter_table('duplicate_entries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_duplicate_entries_txn_id'))
        batch_op.drop_index(batch_op.f('ix_duplicate_entries_account_id'))

    op.drop_table('duplicate_entries')
    with op.batch_alter_table('discrepancies', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_discrepancies_status'))
        batch_op.drop_index(batch_op.f('ix_discrepancies_account_id'))

    op.drop_table('discrepancies')
    op.drop_table('accounts')
