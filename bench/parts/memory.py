"""Part 7, memory: bytes of Redis memory per account and per idempotency record,
from INFO used_memory deltas over N records (100,000 in a full run) on the private
standalone Redis, cross-checked with MEMORY USAGE of sample keys. Steps: open N
accounts, deduct once from each (fresh 32-character hex txn ids, like uuid4), trim
the journal (its entries leave Redis once reconciled), then delete the deduct
records, then the open records: each delta divided by N is one figure. Also the
cost of 3 million transactions a day kept for the default 7-day retention.
Target: at most 200 bytes per idempotency record.
"""
from __future__ import annotations

import uuid

from core import Ledger
from core.ledger import DEFAULT_RETENTION_S
from core.runner import reply_status

from ..drivers import deduct_keys, flush_redis

TXNS_PER_DAY = 3_000_000
TARGET_BYTES_PER_RECORD = 200
CHUNK = 2000


def run(ctx) -> None:
    server = ctx.redis
    url = server.url
    n = 2_000 if ctx.smoke else 100_000
    flush_redis(url)
    ledger = Ledger.from_url(url)
    ledger.init()
    client = server.client()
    part = ledger.schema.partition_of("x")           # one partition on standalone
    open_fn, deduct_fn = ledger.scripts.function("open_account"), ledger.scripts.function("deduct")
    ret = str(DEFAULT_RETENTION_S)

    def used() -> int:
        return int(client.info("memory")["used_memory"])

    accounts = [f"M{i:07d}" for i in range(n)]
    open_txns = [f"open-{a}" for a in accounts]
    deduct_txns = [uuid.uuid4().hex for _ in accounts]

    def pipeline_calls(function, make):
        for start in range(0, n, CHUNK):
            pipe = client.pipeline(transaction=False)
            for i in range(start, min(n, start + CHUNK)):
                keys, args = make(i)
                pipe.fcall(function, len(keys), *keys, *args)
            for reply in pipe.execute():
                assert reply_status(reply) == "APPLIED", reply

    def delete(keys):
        for start in range(0, len(keys), CHUNK * 5):
            client.delete(*keys[start:start + CHUNK * 5])

    mem0 = used()
    pipeline_calls(open_fn, lambda i: ([part.account(accounts[i]), part.txn(open_txns[i]), part.journal,
                                         part.accounts, part.member_index, part.card(accounts[i]), part.phones],
                                        [open_txns[i], accounts[i], "10000", ret, "T1", "c1"]))
    mem1 = used()
    pipeline_calls(deduct_fn, lambda i: (deduct_keys(part, accounts[i], deduct_txns[i]),
                                          [deduct_txns[i], accounts[i], "1250", ret, "T1", "c1"]))
    mem2 = used()
    sample_account = client.memory_usage(part.account(accounts[n // 2]), samples=0)
    sample_record = client.memory_usage(part.txn(deduct_txns[n // 2]), samples=0)
    set_bytes = client.memory_usage(part.accounts, samples=0)
    journal_bytes = client.memory_usage(part.journal, samples=0)
    client.xtrim(part.journal, maxlen=0, approximate=False)
    mem3 = used()
    delete([part.txn(t) for t in deduct_txns])
    mem4 = used()
    delete([part.txn(t) for t in open_txns])
    mem5 = used()
    client.close()
    ledger.close()

    per_record = (mem3 - mem4) / n
    per_journal_entry = (mem2 - mem3) / (2 * n)
    per_account = (mem5 - mem0) / n
    records_kept = TXNS_PER_DAY * DEFAULT_RETENTION_S // 86400
    cost_gib = records_kept * per_record / 2 ** 30
    ctx.data["memory"] = dict(n=n, per_record=per_record, per_journal_entry=per_journal_entry,
                              per_account=per_account, sample_account=sample_account,
                              sample_record=sample_record, set_bytes=set_bytes, journal_bytes=journal_bytes,
                              records_kept=records_kept, cost_gib=cost_gib)
    ctx.row("7 memory", f"per account (hash + member of the account set), INFO delta over {n:,}",
            f"{per_account:,.0f} bytes", note=f"MEMORY USAGE of one account hash: {sample_account} bytes; "
            f"account set {set_bytes / n:,.1f} bytes/member")
    ctx.row("7 memory", f"per idempotency record (txn hash with TTL), INFO delta over {n:,}",
            f"{per_record:,.0f} bytes", target=f"≤ {TARGET_BYTES_PER_RECORD} bytes",
            met=per_record <= TARGET_BYTES_PER_RECORD, finding="memory_record",
            note=f"MEMORY USAGE of one record: {sample_record} bytes (key + hash, without the expires-dict entry)")
    ctx.row("7 memory", "per journal entry until the reconcile service trims it",
            f"{per_journal_entry:,.0f} bytes", note=f"MEMORY USAGE of the stream / entries: {journal_bytes / (2 * n):,.1f} bytes")
    ctx.row("7 memory", "3,000,000 txns/day kept for the 7-day default retention",
            f"{cost_gib:,.2f} GiB", ratio=f"{records_kept:,} records × {per_record:,.0f} bytes",
            note="idempotency records only; plus accounts, plus journal entries not yet reconciled")
