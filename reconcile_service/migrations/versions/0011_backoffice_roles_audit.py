"""The back office manages the shop (issue 29): a role per login (owner, manager, clerk;
logins made before this are owners) and `audit_records`, each management action as
journaled (kind `audit`, whose row in ledger_entries is in the hash chain).

Revision ID: 0011
Revises: 0010
"""
import sqlalchemy as sa
from alembic import op


revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('backoffice_users') as batch:
        batch.add_column(sa.Column('role', sa.String(16), nullable=False, server_default='owner'))
    op.create_table(
        'audit_records',
        sa.Column('txn_id', sa.String(64), primary_key=True),
        sa.Column('username', sa.String(64), nullable=False),
        sa.Column('action', sa.String(80), nullable=False),
        sa.Column('target', sa.Text(), nullable=False),
        sa.Column('summary', sa.Text(), nullable=False),
        sa.Column('address', sa.String(64), nullable=False),
        sa.Column('record_json', sa.Text(), nullable=False),
        sa.Column('occurred_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('journal_partition', sa.Integer(), nullable=False),
        sa.Column('journal_id', sa.String(41), nullable=False),
    )
    op.create_index('ix_audit_records_occurred_at', 'audit_records', ['occurred_at'])
    op.create_index('ix_audit_records_user', 'audit_records', ['username', 'occurred_at'])


def downgrade() -> None:
    op.drop_index('ix_audit_records_user', table_name='audit_records')
    op.drop_index('ix_audit_records_occurred_at', table_name='audit_records')
    op.drop_table('audit_records')
    with op.batch_alter_table('backoffice_users') as batch:
        batch.drop_column('role')
