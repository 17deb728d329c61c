"""Drop the two indexes of `ledger_entries` that no query reads (issue 17): `root_account_id`
and `transfer_id` were indexed for split accounts, which were removed (issue 12); every
new row has root = its account and no transfer, and nothing looks rows up by either.
Each index costs every inserted row a B-tree insertion (the drain's per-row cost in
PostgreSQL is mostly index maintenance); the columns stay.

Revision ID: 0008
Revises: 0007
"""
from alembic import op


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('ledger_entries') as batch:
        batch.drop_index('ix_ledger_entries_root')
        batch.drop_index('ix_ledger_entries_transfer')


def downgrade() -> None:
    with op.batch_alter_table('ledger_entries') as batch:
        batch.create_index('ix_ledger_entries_root', ['root_account_id'], unique=False)
        batch.create_index('ix_ledger_entries_transfer', ['transfer_id'], unique=False)
