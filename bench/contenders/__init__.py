"""The deduction methods of issue 9's comparison, each a small honest load driver
(see `bench.load` for the driver protocol). Only the Lua path is the product; the
others exist here to be measured against it, never to be used:

  pg_for_update   PostgreSQL: BEGIN; SELECT ... FOR UPDATE; UPDATE; INSERT txn; COMMIT
  pg_no_lock      PostgreSQL: the same without the lock (read, compute, write back):
                  lost updates create money, which `verify` counts
  redis_watch     Redis optimistic locking: WATCH balance; GET; MULTI; SET; record; EXEC,
                  retried on conflict
  redis_lock      Redis lock: SET NX PX + token, read-then-write, compare-and-delete release
  ledger_deduct / ledger_deduct_many   the product (`bench.drivers.LedgerDriver`)

Every method does the same work per deduction as the product: it checks and changes
the balance, writes a per-txn record and a journal entry, all for 1 minor unit.
"""
