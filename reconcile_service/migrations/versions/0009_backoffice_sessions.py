"""Server-side sessions of the back-office page (issue 25 item 12): a session is a row
here, so signing out, a password change or deleting the login ends it, and its lifetime
is absolute. Sessions signed before this migration (signed cookies only) are not in the
table and so end: everyone signs in again once.

Revision ID: 0009
Revises: 0008
"""
import sqlalchemy as sa
from alembic import op


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'backoffice_sessions',
        sa.Column('token_hash', sa.String(64), primary_key=True),
        sa.Column('username', sa.String(64), nullable=False),
        sa.Column('address', sa.String(64), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index('ix_backoffice_sessions_user', 'backoffice_sessions', ['username'])


def downgrade() -> None:
    op.drop_index('ix_backoffice_sessions_user', table_name='backoffice_sessions')
    op.drop_table('backoffice_sessions')
