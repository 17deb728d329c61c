"""Holds: one row per hold (pre-authorisation) with its amount, expiry and resolution.

Filled from journal kinds `hold` (fields `held`, `exp`), `capture`, `void` and
`hold_expire` (whose `orig` names the hold). Entries consumed before this revision are
backfilled from `ledger_entries` (their amount and expiry were not kept: NULL).

Revision ID: 0002
Revises: 0001
"""
from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('holds',
    sa.Column('hold_txn_id', sa.String(length=64), nullable=False),
    sa.Column('account_id', sa.String(length=64), nullable=False),
    sa.Column('amount_minor', sa.BigInteger(), nullable=True),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('captured_minor', sa.BigInteger(), nullable=False),
    sa.Column('resolved_txn_id', sa.String(length=64), nullable=True),
    sa.Column('resolved_kind', sa.String(length=32), nullable=True),
    sa.Column('hold_journal_partition', sa.Integer(), nullable=True),
    sa.Column('hold_journal_id', sa.String(length=41), nullable=True),
    sa.Column('hold_journal_pos', sa.String(length=34), nullable=True),
    sa.Column('resolved_journal_id', sa.String(length=41), nullable=True),
    sa.Column('resolved_journal_pos', sa.String(length=34), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('resolved_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('hold_txn_id')
    )
    with op.batch_alter_table('holds', schema=None) as batch_op:
        batch_op.create_index('ix_holds_status_expires', ['status', 'expires_at'], unique=False)
        batch_op.create_index('ix_holds_account_id', ['account_id'], unique=False)
    # Backfill what the journal already brought (amounts and expiries were not kept).
    op.execute("""
        INSERT INTO holds (hold_txn_id, account_id, status, captured_minor, hold_journal_partition,
                           hold_journal_id, hold_journal_pos, created_at, updated_at)
        SELECT txn_id, account_id, 'active', 0, journal_partition, journal_id, journal_pos,
               occurred_at, applied_at FROM ledger_entries WHERE kind = 'hold'""")
    for kind, status in (("capture", "captured"), ("void", "voided"), ("hold_expire", "expired")):
        op.execute(f"""
            UPDATE holds SET status = '{status}', resolved_kind = '{kind}',
              resolved_txn_id = (SELECT MIN(e.txn_id) FROM ledger_entries e WHERE e.kind = '{kind}'
                                 AND e.original_txn_id = holds.hold_txn_id),
              captured_minor = COALESCE((SELECT MIN(-e.amount_minor) FROM ledger_entries e
                                 WHERE e.kind = '{kind}' AND e.original_txn_id = holds.hold_txn_id), 0),
              resolved_journal_id = (SELECT MIN(e.journal_id) FROM ledger_entries e WHERE e.kind = '{kind}'
                                 AND e.original_txn_id = holds.hold_txn_id),
              resolved_journal_pos = (SELECT MIN(e.journal_pos) FROM ledger_entries e WHERE e.kind = '{kind}'
                                 AND e.original_txn_id = holds.hold_txn_id)
            WHERE EXISTS (SELECT 1 FROM ledger_entries e WHERE e.kind = '{kind}'
                          AND e.original_txn_id = holds.hold_txn_id)""")


def downgrade() -> None:
    with op.batch_alter_table('holds', schema=None) as batch_op:
        batch_op.drop_index('ix_holds_account_id')
        batch_op.drop_index('ix_holds_status_expires')
    op.drop_table('holds')
