"""Issue 33, capacity: the Redis memory one operation and one account cost, by part,
measured with the product's own scripts on the private standalone Redis, and checked
against the constants `core.capacity` plans with (`cashierctl capacity`, docs/operations.md).

Steps on an empty Redis (`measure`): open N members (holder name and phone, so the member
index is filled as at a shop), drop their opening records and journal entries: the INFO
used_memory delta over N is what an account keeps for good (account hash, account set,
member index). Then one deduction per account through `Ledger.deduct_many` (txn ids as the
till makes them, `T-01-d-<uuid4 hex>`, with a terminal and a cashier id), trim the journal
(its entries leave Redis once booked and older than the keep), then delete the deduction
records: each delta over N is one part (journal entry until trimmed; idempotency record
with its TTL). Deleting measures what a key holds (value, key, dict entry, expiry entry)
without the steps of the keyspace's bucket arrays, which `core.capacity` adds as a
modelled share. Cross-checked with MEMORY USAGE of sample keys.
Target: the constants of `core.capacity` within 10 % of this measurement.
"""
from __future__ import annotations

import random
import uuid

from core import DeductRequest, Ledger
from core import capacity
from core.ledger import DEFAULT_RETENTION_S
from core.members import member_index_key, name_key, pinyin_initials
from core.runner import reply_status

from ..drivers import flush_redis

CHUNK = 2000
TOLERANCE = 0.10
SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏"
GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍红鹏飞斌宇浩凯健俊帆帅旭宁欣怡佳琪梦雪婷晨阳"


def till_txn_id(terminal_id: str = "T-01") -> str:
    """A txn id as the till makes it (desktop.engine: terminal, kind letter, uuid4 hex)."""
    return f"{terminal_id}-d-{uuid.uuid4().hex}"


def measure(url: str, n: int, *, seed: int = 33) -> dict:
    """Bytes per part over `n` accounts and `n` deductions on the (flushed) Redis at `url`."""
    rng = random.Random(seed)
    flush_redis(url)
    ledger = Ledger.from_url(url)
    ledger.init()
    client = ledger.client
    part = ledger.partitions[0]                      # one partition on standalone
    open_fn = ledger.scripts.function("open_account")
    ret = str(DEFAULT_RETENTION_S)
    accounts = [f"M-{i:06d}" for i in range(n)]
    names = [rng.choice(SURNAMES) + "".join(rng.choice(GIVEN) for _ in range(rng.choice((1, 2))))
             for _ in range(n)]
    phones = [f"1{rng.choice('3578')}{i:09d}" for i in range(n)]

    def used() -> int:
        return int(client.info("memory")["used_memory"])

    def delete(keys: list[str]) -> None:
        for start in range(0, len(keys), CHUNK * 5):
            client.delete(*keys[start:start + CHUNK * 5])

    mem0 = used()
    for start in range(0, n, CHUNK):
        pipe = client.pipeline(transaction=False)
        for i in range(start, min(n, start + CHUNK)):
            a = accounts[i]
            keys = [part.account(a), part.txn(f"open-{a}"), part.journal, part.accounts, member_index_key(part),
                    part.card(a), part.phones, part.account(phones[i]), part.card(phones[i])]
            pipe.fcall(open_fn, len(keys), *keys, f"open-{a}", a, "100000", ret, "T-01", "c-01", names[i],
                       phones[i], name_key(names[i]), pinyin_initials(names[i]))
        for reply in pipe.execute():
            assert reply_status(reply) == "APPLIED", reply
    delete([part.txn(f"open-{a}") for a in accounts])
    client.xtrim(part.journal, maxlen=0, approximate=False)
    mem1 = used()
    sample_account = client.memory_usage(part.account(accounts[n // 2]), samples=0)

    txns = [till_txn_id() for _ in accounts]
    for start in range(0, n, CHUNK):
        reqs = [DeductRequest(accounts[i], 1250, txns[i], terminal_id="T-01", cashier_id="c-01")
                for i in range(start, min(n, start + CHUNK))]
        for res in ledger.deduct_many(reqs):
            assert getattr(res, "applied", False), res
    mem2 = used()
    sample_record = client.memory_usage(part.txn(txns[n // 2]), samples=0)
    stream_bytes = client.memory_usage(part.journal, samples=0)
    client.xtrim(part.journal, maxlen=0, approximate=False)
    mem3 = used()
    delete([part.txn(t) for t in txns])
    mem4 = used()
    flush_redis(url)
    ledger.close()
    return dict(n=n, account_bytes=(mem1 - mem0) / n, journal_entry_bytes=(mem2 - mem3) / n,
                record_bytes=(mem3 - mem4) / n, sample_account=sample_account, sample_record=sample_record,
                stream_bytes_per_entry=stream_bytes / n)


def compare(measured: dict) -> dict[str, tuple[float, int, bool]]:
    """part -> (measured, constant, within the tolerance)."""
    pairs = {"idempotency record": (measured["record_bytes"], capacity.RECORD_BYTES),
             "journal entry": (measured["journal_entry_bytes"], capacity.JOURNAL_ENTRY_BYTES),
             "account (member)": (measured["account_bytes"], capacity.ACCOUNT_BYTES)}
    return {k: (m, c, abs(c - m) <= TOLERANCE * m) for k, (m, c) in pairs.items()}


def run(ctx) -> None:
    n = 5_000 if ctx.smoke else 100_000
    m = measure(ctx.redis.url, n)
    ctx.data["capacity"] = m
    for name, (got, constant, ok) in compare(m).items():
        ctx.row("33 capacity", f"{name}: bytes, INFO used_memory delta over {n:,}", f"{got:,.0f} bytes",
                ratio=f"core.capacity {constant} bytes ({constant / got:.2f}×)",
                target=f"constant within {TOLERANCE:.0%}", met=None if ctx.smoke else ok, issue=33,
                note={"idempotency record": f"MEMORY USAGE of one record {m['sample_record']} bytes "
                                            "(without its expiry entry)",
                      "journal entry": f"MEMORY USAGE of the stream {m['stream_bytes_per_entry']:,.0f} "
                                       "bytes/entry",
                      "account (member)": f"account hash, account set, member index; MEMORY USAGE of one "
                                          f"account hash {m['sample_account']} bytes"}[name])
    per_op = capacity.RECORD_BYTES + capacity.JOURNAL_ENTRY_BYTES + capacity.KEYSPACE_BYTES_PER_KEY
    ctx.row("33 capacity", "one operation held in Redis (record + journal entry + keyspace share)",
            f"{per_op:,} bytes", issue=33,
            note="until the journal is trimmed; after that the record alone, for the retention")
