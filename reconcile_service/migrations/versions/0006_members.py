"""Members and cards (issue 14): the member's phone on `accounts`, the `cards` table
(from card_issue / card_block entries) and `shop_settings` (from setting entries:
spending order, balance cap, top-up promotions), so a restore brings them back.

Revision ID: 0006
Revises: 0005
"""
from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('accounts') as batch:
        batch.add_column(sa.Column('phone', sa.String(length=24), nullable=True))
    op.create_table(
        'cards',
        sa.Column('card_no', sa.String(length=64), primary_key=True),
        sa.Column('account_id', sa.String(length=64), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('block_reason', sa.String(length=16), nullable=True),
        sa.Column('issue_txn_id', sa.String(length=64), nullable=True),
        sa.Column('issued_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('block_txn_id', sa.String(length=64), nullable=True),
        sa.Column('blocked_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index('ix_cards_account_id', 'cards', ['account_id'])
    op.create_table(
        'shop_settings',
        sa.Column('name', sa.String(length=80), primary_key=True),
        sa.Column('value', sa.String(length=64), nullable=False),
        sa.Column('txn_id', sa.String(length=64), nullable=False),
        sa.Column('journal_pos', sa.String(length=34), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table('shop_settings')
    op.drop_index('ix_cards_account_id', table_name='cards')
    op.drop_table('cards')
    with op.batch_alter_table('accounts') as batch:
        batch.drop_column('phone')
