"""PostgreSQL contenders on the bench's own database: a locking transaction
(SELECT ... FOR UPDATE, then UPDATE, then INSERT of the txn row, COMMIT; deadlocks,
serialization and lock-timeout errors are retried and counted) and the same without
the lock, which reads the balance, computes the new one in the client and writes it
back, so concurrent writers overwrite each other (lost updates). `verify` compares
the final balances with the opening balances minus the txn rows (bigint minor units
throughout) and reports the money created by lost updates. Default server settings
(synchronous_commit on, READ COMMITTED) are left as the machine has them.
"""
from __future__ import annotations

import secrets

import psycopg
from psycopg import errors as pg_errors

from ..drivers import AMOUNT_MINOR, INITIAL_BALANCE_MINOR

MAX_ATTEMPTS = 10
_RETRYABLE = (pg_errors.DeadlockDetected, pg_errors.SerializationFailure, pg_errors.LockNotAvailable,
              pg_errors.QueryCanceled)

SCHEMA_SQL = """
create table if not exists bench_accounts (id text primary key, balance_minor bigint not null);
create table if not exists bench_txn (txn_id text primary key, account_id text not null,
    amount_minor bigint not null, balance_after_minor bigint not null,
    created_at timestamptz not null default now());
"""


class _PgBase:
    locking = True
    name = "pg"

    def __init__(self, dsn: str, accounts: tuple[str, ...]):
        self.dsn, self.accounts = dsn, accounts
        self.nonce = ""

    def prepare(self, procs: int) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(SCHEMA_SQL)
            conn.execute("truncate bench_accounts, bench_txn")
            with conn.cursor() as cur:
                cur.executemany("insert into bench_accounts values (%s, %s)",
                                [(a, INITIAL_BALANCE_MINOR) for a in self.accounts])
            conn.execute("vacuum analyze bench_accounts")
        self.nonce = secrets.token_hex(3)

    def worker(self, index: int, procs: int):
        conn = psycopg.connect(self.dsn)
        accounts, n = self.accounts, len(self.accounts)
        counter = iter(range(10 ** 12))
        prefix = f"{self.nonce}-{index}-"
        offset = index * 7919
        select = ("select balance_minor from bench_accounts where id = %s for update" if self.locking
                  else "select balance_minor from bench_accounts where id = %s")
        update = ("update bench_accounts set balance_minor = balance_minor - %s where id = %s" if self.locking
                  else "update bench_accounts set balance_minor = %s where id = %s")
        insert = "insert into bench_txn (txn_id, account_id, amount_minor, balance_after_minor) values (%s, %s, %s, %s)"
        locking = self.locking

        def step():
            i = next(counter)
            account_id, txn_id = accounts[(offset + i) % n], prefix + str(i)
            retries = 0
            while True:
                try:
                    with conn.cursor() as cur:
                        balance = cur.execute(select, (account_id,)).fetchone()[0]
                        if balance < AMOUNT_MINOR:
                            conn.commit()
                            return 1, retries, 0, 0
                        after = balance - AMOUNT_MINOR
                        cur.execute(update, (AMOUNT_MINOR, account_id) if locking else (after, account_id))
                        cur.execute(insert, (txn_id, account_id, AMOUNT_MINOR, after))
                    conn.commit()
                    return 1, retries, 0, AMOUNT_MINOR
                except _RETRYABLE:
                    conn.rollback()
                    retries += 1
                    if retries >= MAX_ATTEMPTS:
                        return 0, retries - 1, 1, 0
        return step

    def verify(self, m) -> dict:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            final_total = conn.execute("select coalesce(sum(balance_minor), 0) from bench_accounts").fetchone()[0]
            recorded = conn.execute("select coalesce(sum(amount_minor), 0), count(*) from bench_txn").fetchone()
            negative = conn.execute("select coalesce(sum(-balance_minor), 0) from bench_accounts "
                                    "where balance_minor < 0").fetchone()[0]
        expected_total = INITIAL_BALANCE_MINOR * len(self.accounts) - int(recorded[0])
        return {"money_created_minor": int(final_total) - expected_total, "oversold_minor": int(negative),
                "exact": int(final_total) == expected_total and negative == 0,
                "recorded_minor": int(recorded[0]), "client_applied_minor": m.applied_minor}


class PgForUpdate(_PgBase):
    locking = True
    name = "PostgreSQL SELECT FOR UPDATE"


class PgNoLock(_PgBase):
    locking = False
    name = "PostgreSQL read-then-write, no lock"
