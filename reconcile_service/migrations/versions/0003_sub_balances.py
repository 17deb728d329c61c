"""Split accounts: `sub_balances` (one row per Redis account hash: a plain account, a
split account's root, or its shard 'A#k'), and the root account of every entry.

`accounts` becomes one row per account as customers see it: a split account's row has
the total over its shards and money in flight; `sub_balances` is what each Redis hash
holds, compared like with like by the reconcile pass. Existing rows are carried over:
every `accounts` row becomes a sub-balance, shard rows leave `accounts`, and each root's
total is summed again from its entries.

Revision ID: 0003
Revises: 0002
"""
from alembic import op
import sqlalchemy as sa


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

TRANSFER_KINDS = ("xfer_out", "xfer_in")


def upgrade() -> None:
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
    sa.PrimaryKeyConstraint('account_id')
    )
    with op.batch_alter_table('sub_balances', schema=None) as batch_op:
        batch_op.create_index('ix_sub_balances_root', ['root_account_id'], unique=False)
    for table in ('ledger_entries', 'duplicate_entries'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column('root_account_id', sa.String(length=64), nullable=True))
            batch_op.add_column(sa.Column('transfer_id', sa.String(length=32), nullable=True))
            batch_op.add_column(sa.Column('peer_account_id', sa.String(length=64), nullable=True))
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.create_index(f'ix_{table}_root', ['root_account_id'], unique=False)
    with op.batch_alter_table('ledger_entries', schema=None) as batch_op:
        batch_op.create_index('ix_ledger_entries_transfer', ['transfer_id'], unique=False)

    conn = op.get_bind()
    for table in ('ledger_entries', 'duplicate_entries'):
        conn.execute(sa.text(f"UPDATE {table} SET root_account_id = account_id WHERE account_id NOT LIKE '%#%'"))
        shards = [r[0] for r in conn.execute(sa.text(
            f"SELECT DISTINCT account_id FROM {table} WHERE account_id LIKE '%#%'"))]
        for shard in shards:
            conn.execute(sa.text(f"UPDATE {table} SET root_account_id = :root WHERE account_id = :a"),
                         {"root": shard.split("#")[0], "a": shard})
    conn.execute(sa.text("""
        INSERT INTO sub_balances (account_id, root_account_id, balance_minor, status, created_at, updated_at,
            journal_partition, last_journal_id, last_journal_pos, status_journal_pos, closed,
            closed_journal_pos, shards, split_journal_pos)
        SELECT account_id, account_id, balance_minor, status, created_at, updated_at, journal_partition,
            last_journal_id, last_journal_pos, status_journal_pos, false, '', 0, ''
        FROM accounts"""))
    roots = {r[0].split("#")[0] for r in conn.execute(sa.text(
        "SELECT account_id FROM accounts WHERE account_id LIKE '%#%'"))}
    for shard in [r[0] for r in conn.execute(sa.text(
            "SELECT account_id FROM sub_balances WHERE account_id LIKE '%#%'"))]:
        conn.execute(sa.text("UPDATE sub_balances SET root_account_id = :root WHERE account_id = :a"),
                     {"root": shard.split("#")[0], "a": shard})
    conn.execute(sa.text("DELETE FROM accounts WHERE account_id LIKE '%#%'"))
    for root in roots:
        total = 0
        for table in ('ledger_entries', 'duplicate_entries'):
            total += conn.execute(sa.text(
                f"SELECT COALESCE(SUM(amount_minor), 0) FROM {table} WHERE root_account_id = :root "
                "AND kind NOT IN ('xfer_out', 'xfer_in')"), {"root": root}).scalar_one()
        conn.execute(sa.text("UPDATE accounts SET balance_minor = :t WHERE account_id = :root"),
                     {"t": int(total), "root": root})


def downgrade() -> None:
    for table in ('ledger_entries', 'duplicate_entries'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_index(f'ix_{table}_root')
            if table == 'ledger_entries':
                batch_op.drop_index('ix_ledger_entries_transfer')
            batch_op.drop_column('peer_account_id')
            batch_op.drop_column('transfer_id')
            batch_op.drop_column('root_account_id')
    with op.batch_alter_table('sub_balances', schema=None) as batch_op:
        batch_op.drop_index('ix_sub_balances_root')
    op.drop_table('sub_balances')
