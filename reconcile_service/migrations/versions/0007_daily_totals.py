"""`daily_totals` (issue 16): per journal partition, UTC day, kind, payment method and
whether the rows are duplicates, the sums of the entries' bucket deltas and their count,
kept by the drain in the same transaction as the entries; the liability report adds
whole days from here and reads only a period's edge days from ledger_entries. Existing
entries are summed into it.

Revision ID: 0007
Revises: 0006 (it does not use 0006's tables; it follows it so the history has one head)
"""
from collections import defaultdict

from alembic import op
import sqlalchemy as sa

from reconcile_service import chain


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None

BIG = sa.BigInteger()


def upgrade() -> None:
    conn = op.get_bind()
    op.create_table('daily_totals',
        sa.Column('journal_partition', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('kind', sa.String(length=32), nullable=False),
        sa.Column('method', sa.String(length=16), nullable=False),
        sa.Column('duplicate', sa.Boolean(), nullable=False),
        sa.Column('principal_minor', BIG, nullable=False),
        sa.Column('bonus_minor', BIG, nullable=False),
        sa.Column('entries', BIG, nullable=False),
        sa.PrimaryKeyConstraint('journal_partition', 'day', 'kind', 'method', 'duplicate'))
    totals = defaultdict(lambda: [0, 0, 0])
    for dup, table in ((False, 'ledger_entries'), (True, 'duplicate_entries')):
        rows = conn.execute(sa.text(
            f"SELECT journal_partition, occurred_at, kind, method, principal_delta_minor, bonus_delta_minor "
            f"FROM {table}").execution_options(yield_per=10_000))
        for part, occurred, kind, method, pd, bd in rows:
            t = totals[(part, chain.utc_day(occurred), kind, method or '', dup)]
            t[0], t[1], t[2] = t[0] + pd, t[1] + bd, t[2] + 1
    if totals:
        conn.execute(sa.text("INSERT INTO daily_totals (journal_partition, day, kind, method, duplicate, "
                             "principal_minor, bonus_minor, entries) VALUES (:p, :d, :k, :m, :dup, :pm, :bm, :n)"),
                     [dict(p=k[0], d=k[1], k=k[2], m=k[3], dup=k[4], pm=v[0], bm=v[1], n=v[2])
                      for k, v in totals.items()])


def downgrade() -> None:
    op.drop_table('daily_totals')
