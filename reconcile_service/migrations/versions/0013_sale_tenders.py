"""The tenders of split-tender sales (issue 31): `sale_tenders`, one row per tender of a
`sale` entry besides its card leg and one per `tender_refund` entry (models.SaleTender).
A new table only: the book's rows and their hash chain are unchanged.

Revision ID: 0013
Revises: 0012
"""
import sqlalchemy as sa
from alembic import op


revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'sale_tenders',
        sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), primary_key=True, autoincrement=True),
        sa.Column('txn_id', sa.String(64), nullable=False),
        sa.Column('sale_txn_id', sa.String(64), nullable=False),
        sa.Column('kind', sa.String(32), nullable=False),
        sa.Column('account_id', sa.String(64), nullable=False),
        sa.Column('method', sa.String(16), nullable=False),
        sa.Column('amount_minor', sa.BigInteger(), nullable=False),
        sa.Column('change_minor', sa.BigInteger(), nullable=False),
        sa.Column('sale_total_minor', sa.BigInteger(), nullable=False),
        sa.Column('terminal_id', sa.String(64)),
        sa.Column('cashier_id', sa.String(64)),
        sa.Column('occurred_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('journal_partition', sa.Integer(), nullable=False),
        sa.Column('journal_id', sa.String(41), nullable=False),
        sa.UniqueConstraint('journal_partition', 'journal_id', 'method', name='uq_sale_tenders_entry'),
    )
    op.create_index('ix_sale_tenders_sale', 'sale_tenders', ['sale_txn_id'])
    op.create_index('ix_sale_tenders_occurred_at', 'sale_tenders', ['occurred_at'])


def downgrade() -> None:
    op.drop_index('ix_sale_tenders_occurred_at', table_name='sale_tenders')
    op.drop_index('ix_sale_tenders_sale', table_name='sale_tenders')
    op.drop_table('sale_tenders')
