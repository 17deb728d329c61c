"""The book of record (issue 16): bucket and payment-method columns, the hash chain, shift
closes, back-office users, discrepancy resolution notes, and ledger_entries made
append-only on PostgreSQL.

- `ledger_entries` / `duplicate_entries`: `principal_delta_minor`, `bonus_delta_minor`
  (signed change of each bucket, their sum is `amount_minor`) and `method` (payment
  method of a top-up). Old rows: principal_delta = amount, bonus_delta = 0, method NULL.
- `accounts`: `principal_minor`, `bonus_minor` (balance_minor = their sum); old rows:
  principal = balance, bonus = 0.
- `ledger_entries`: `chain_seq`, `row_hash` (see reconcile_service.chain), unique per
  partition; existing rows are chained in id order (their insertion order) before the
  trigger exists. `chain_heads`: each partition's last link, the row the writers lock.
- `shift_closes`: a terminal's Z record per closed shift (journal kind `shift_close`).
- `backoffice_users`: logins of the back-office page (argon2 hashes).
- `discrepancies`: `resolution_note`, `resolved_by` (`reconcile-service resolve`).
- PostgreSQL: a trigger refuses UPDATE, DELETE and TRUNCATE of ledger_entries;
  corrections are new entries. (A later migration that must rewrite rows disables it
  inside its own transaction.)

Revision ID: 0005
Revises: 0004
"""
from alembic import op
import sqlalchemy as sa

from reconcile_service import chain


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None

BIG = sa.BigInteger()
PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
TS = sa.DateTime(timezone=True)

IMMUTABLE_FUNCTION = """
CREATE OR REPLACE FUNCTION ledger_entries_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'ledger_entries is append-only: % refused (a correction is a new entry)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$ LANGUAGE plpgsql
"""


def upgrade() -> None:
    conn = op.get_bind()
    for table in ('ledger_entries', 'duplicate_entries'):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column('principal_delta_minor', BIG, nullable=True))
            batch.add_column(sa.Column('bonus_delta_minor', BIG, nullable=False, server_default='0'))
            batch.add_column(sa.Column('method', sa.String(length=16), nullable=True))
        conn.execute(sa.text(f"UPDATE {table} SET principal_delta_minor = amount_minor"))
    with op.batch_alter_table('accounts') as batch:
        batch.add_column(sa.Column('principal_minor', BIG, nullable=True))
        batch.add_column(sa.Column('bonus_minor', BIG, nullable=False, server_default='0'))
    conn.execute(sa.text("UPDATE accounts SET principal_minor = balance_minor"))
    with op.batch_alter_table('accounts') as batch:
        batch.alter_column('principal_minor', existing_type=BIG, nullable=False)
        batch.alter_column('bonus_minor', existing_type=BIG, server_default=None)
    with op.batch_alter_table('duplicate_entries') as batch:
        batch.alter_column('principal_delta_minor', existing_type=BIG, nullable=False)
        batch.alter_column('bonus_delta_minor', existing_type=BIG, server_default=None)

    # the chain over the rows already there, in the order they were inserted
    with op.batch_alter_table('ledger_entries') as batch:
        batch.add_column(sa.Column('chain_seq', BIG, nullable=True))
        batch.add_column(sa.Column('row_hash', sa.String(length=chain.HASH_LEN), nullable=True))
    op.create_table('chain_heads',
        sa.Column('journal_partition', sa.Integer(), autoincrement=False, nullable=False),
        sa.Column('last_seq', BIG, nullable=False),
        sa.Column('last_hash', sa.String(length=chain.HASH_LEN), nullable=False),
        sa.Column('updated_at', TS, nullable=False),
        sa.PrimaryKeyConstraint('journal_partition'))
    cols = ", ".join(c for c in chain.CANONICAL_COLUMNS if c != 'chain_seq')
    parts = [r[0] for r in conn.execute(sa.text("SELECT DISTINCT journal_partition FROM ledger_entries"))]
    for part in parts:
        seq, prev = 0, chain.GENESIS_HASH
        rows = [dict(r._mapping) for r in conn.execute(sa.text(
            f"SELECT id, {cols} FROM ledger_entries WHERE journal_partition = :p ORDER BY id"), {"p": part})]
        seq, prev = chain.link(rows, seq, prev)
        for start in range(0, len(rows), 5000):
            conn.execute(sa.text("UPDATE ledger_entries SET chain_seq = :chain_seq, row_hash = :row_hash "
                                 "WHERE id = :id"),
                         [{"id": r["id"], "chain_seq": r["chain_seq"], "row_hash": r["row_hash"]}
                          for r in rows[start:start + 5000]])
        conn.execute(sa.text("INSERT INTO chain_heads (journal_partition, last_seq, last_hash, updated_at) "
                             "VALUES (:p, :s, :h, CURRENT_TIMESTAMP)"), {"p": part, "s": seq, "h": prev})
    with op.batch_alter_table('ledger_entries') as batch:
        batch.alter_column('principal_delta_minor', existing_type=BIG, nullable=False)
        batch.alter_column('bonus_delta_minor', existing_type=BIG, server_default=None)
        batch.alter_column('chain_seq', existing_type=BIG, nullable=False)
        batch.alter_column('row_hash', existing_type=sa.String(length=chain.HASH_LEN), nullable=False)
        batch.create_unique_constraint('uq_ledger_entries_chain', ['journal_partition', 'chain_seq'])
        # reports select by time (a day, a month) and per account by time
        batch.create_index('ix_ledger_entries_occurred_at', ['occurred_at'], unique=False)

    op.create_table('shift_closes',
        sa.Column('id', PK, autoincrement=True, nullable=False),
        sa.Column('txn_id', sa.String(length=64), nullable=False),
        sa.Column('terminal_id', sa.String(length=64), nullable=False),
        sa.Column('shift_no', BIG, nullable=False),
        sa.Column('cashier_id', sa.String(length=64), nullable=True),
        sa.Column('closed_by', sa.String(length=64), nullable=False),
        sa.Column('opened_at', TS, nullable=True),
        sa.Column('closed_at', TS, nullable=False),
        sa.Column('sales_count', BIG, nullable=False),
        sa.Column('sales_minor', BIG, nullable=False),
        sa.Column('refunds_count', BIG, nullable=False),
        sa.Column('refunds_minor', BIG, nullable=False),
        sa.Column('topups_count', BIG, nullable=False),
        sa.Column('topups_minor', BIG, nullable=False),
        sa.Column('record_json', sa.Text(), nullable=False),
        sa.Column('journal_partition', sa.Integer(), nullable=False),
        sa.Column('journal_id', sa.String(length=41), nullable=False),
        sa.Column('journal_pos', sa.String(length=34), nullable=False),
        sa.Column('applied_at', TS, nullable=False),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('txn_id', name='uq_shift_closes_txn'))
    with op.batch_alter_table('shift_closes') as batch:
        batch.create_index('ix_shift_closes_terminal', ['terminal_id', 'shift_no'], unique=False)
        batch.create_index('ix_shift_closes_closed_at', ['closed_at'], unique=False)

    op.create_table('backoffice_users',
        sa.Column('username', sa.String(length=64), nullable=False),
        sa.Column('password_hash', sa.Text(), nullable=False),
        sa.Column('created_at', TS, nullable=False),
        sa.Column('updated_at', TS, nullable=False),
        sa.PrimaryKeyConstraint('username'))
    with op.batch_alter_table('discrepancies') as batch:
        batch.add_column(sa.Column('resolution_note', sa.Text(), nullable=True))
        batch.add_column(sa.Column('resolved_by', sa.String(length=64), nullable=True))

    if conn.dialect.name == 'postgresql':
        conn.execute(sa.text(IMMUTABLE_FUNCTION))
        conn.execute(sa.text("CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON "
                             "ledger_entries FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only()"))
        conn.execute(sa.text("CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON "
                             "ledger_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_append_only()"))


def downgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == 'postgresql':
        conn.execute(sa.text("DROP TRIGGER IF EXISTS ledger_entries_no_truncate ON ledger_entries"))
        conn.execute(sa.text("DROP TRIGGER IF EXISTS ledger_entries_append_only ON ledger_entries"))
        conn.execute(sa.text("DROP FUNCTION IF EXISTS ledger_entries_append_only()"))
    with op.batch_alter_table('discrepancies') as batch:
        batch.drop_column('resolved_by')
        batch.drop_column('resolution_note')
    op.drop_table('backoffice_users')
    with op.batch_alter_table('shift_closes') as batch:
        batch.drop_index('ix_shift_closes_closed_at')
        batch.drop_index('ix_shift_closes_terminal')
    op.drop_table('shift_closes')
    with op.batch_alter_table('ledger_entries') as batch:
        batch.drop_index('ix_ledger_entries_occurred_at')
        batch.drop_constraint('uq_ledger_entries_chain', type_='unique')
        batch.drop_column('row_hash')
        batch.drop_column('chain_seq')
    op.drop_table('chain_heads')
    with op.batch_alter_table('accounts') as batch:
        batch.drop_column('bonus_minor')
        batch.drop_column('principal_minor')
    for table in ('ledger_entries', 'duplicate_entries'):
        with op.batch_alter_table(table) as batch:
            batch.drop_column('method')
            batch.drop_column('bonus_delta_minor')
            batch.drop_column('principal_delta_minor')
