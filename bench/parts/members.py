"""Issue 14, members: lookup and the cost of the buckets.

Lookup: `Ledger.find_members` over 100,000 members (2,000 in a smoke
run) with Chinese names and phones on the private standalone Redis, and the memory one
member costs. Members are opened through the product's open_account script (pipelined,
with the pinyin initials the ledger computes), so the index is the one the till reads.
Queries, in turn: an existing phone (exact), a surname plus one character (name
prefix), two pinyin initials, a bare surname (many matches: the result is bounded);
p50 / p99 of the whole call as the till sees it (client and server). Memory: INFO
used_memory delta over the opens once their idempotency records and journal entries are
gone (what stays per member: account hash with name and phone, account set, index), and
MEMORY USAGE of the index divided by the members.
Target: p99 ≤ 20 ms.

Buckets (`bucket_costs`): the server cost of a top-up with a bonus and of a deduction
that takes from both buckets (spend order proportional), beside the plain deduct in the
same run, in interleaved rounds: Redis CPU µs per call (INFO commandstats) and, with
valgrind, redis-server instructions per call (callgrind, as the issue 17 part).
Target: ≤ 1.15× the plain deduct.
"""
from __future__ import annotations

import random
import time

from core import Ledger
from core.ledger import DEFAULT_RETENTION_S
from core.members import member_index_key, name_key, pinyin_initials
from core.runner import reply_status

from .. import machine
from ..drivers import flush_redis
from ..stats import percentile_ns

TARGET_P99_MS = 20.0


def percentile(values_ms: list[float], q: float) -> float:
    return percentile_ns(sorted(values_ms), q)
CHUNK = 2000
SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍红鹏飞斌宇浩凯健俊帆帅旭宁欣怡佳琪梦雪婷晨阳"


def _names(n: int, rng: random.Random) -> list[str]:
    return [rng.choice(SURNAMES) + "".join(rng.choice(GIVEN) for _ in range(rng.choice((1, 2))))
            for _ in range(n)]


def lookup(ctx) -> None:
    server = ctx.redis
    url = server.url
    n = 2_000 if ctx.smoke else 100_000
    queries = 200 if ctx.smoke else 4_000
    rng = random.Random(14)
    flush_redis(url)
    ledger = Ledger.from_url(url)
    ledger.init()
    client = server.client()
    part = ledger.partitions[0]
    function = ledger.scripts.function("open_account")
    ret = str(DEFAULT_RETENTION_S)
    accounts = [f"M{i:07d}" for i in range(n)]
    names = _names(n, rng)
    phones = [f"1{rng.choice('3578')}{i:09d}" for i in range(n)]
    t0 = time.perf_counter()
    members = [(name_key(h), pinyin_initials(h)) for h in names]
    pinyin_s = time.perf_counter() - t0

    def used() -> int:
        return int(client.info("memory")["used_memory"])

    mem0 = used()
    for start in range(0, n, CHUNK):
        pipe = client.pipeline(transaction=False)
        for i in range(start, min(n, start + CHUNK)):
            a = accounts[i]
            keys = [part.account(a), part.txn(f"open-{a}"), part.journal, part.accounts, member_index_key(part),
                    part.card(a), part.phones, part.account(phones[i]), part.card(phones[i])]
            pipe.fcall(function, len(keys), *keys, f"open-{a}", a, "10000", ret, "T1", "c1", names[i], phones[i],
                         *members[i])
        for reply in pipe.execute():
            assert reply_status(reply) == "APPLIED", reply
    for start in range(0, n, CHUNK * 5):
        client.delete(*[part.txn(f"open-{a}") for a in accounts[start:start + CHUNK * 5]])
    client.xtrim(part.journal, maxlen=0, approximate=False)
    mem1 = used()
    index_bytes = client.memory_usage(member_index_key(part), samples=0)
    sample = client.memory_usage(part.account(accounts[n // 2]), samples=0)
    index_entries = client.zcard(member_index_key(part))

    client.config_resetstat()
    kinds = ("phone", "name prefix", "initials", "surname")
    timings: dict[str, list[float]] = {k: [] for k in kinds}
    found: dict[str, int] = {k: 0 for k in kinds}
    for q in range(queries):
        kind = kinds[q % len(kinds)]
        i = rng.randrange(n)
        text = {"phone": phones[i], "name prefix": names[i][:2], "initials": members[i][1].split()[0][:2],
                "surname": names[i][0]}[kind]
        t = time.perf_counter()
        result = ledger.find_members(text)
        timings[kind].append((time.perf_counter() - t) * 1000)
        found[kind] += len(result)
        if kind == "phone":
            assert any(m.account_id == accounts[i] for m in result), (text, result)
    stats = client.info("commandstats")
    server_us = sum(int(stats.get(f"cmdstat_{c}", {}).get("usec", 0)) for c in ("zrangebylex", "hmget")) / queries
    client.flushall(asynchronous=True)      # 100,000 members: a synchronous FLUSHALL outlasts the socket timeout
    client.close()
    ledger.close()

    every = [t for ts in timings.values() for t in ts]
    p50, p99 = percentile(every, 50), percentile(every, 99)
    per_member = (mem1 - mem0) / n
    ctx.data["members"] = dict(n=n, p50_ms=p50, p99_ms=p99, per_member=per_member,
                               index_per_member=index_bytes / n, index_entries=index_entries,
                               by_kind={k: (percentile(v, 50), percentile(v, 99)) for k, v in timings.items()})
    ctx.row("14 members", f"find_members p99 over {n:,} members ({queries:,} queries: phone, name prefix, "
            "initials, surname)", f"{p99:.2f} ms", ratio=f"p50 {p50:.2f} ms", target=f"≤ {TARGET_P99_MS:g} ms",
            met=p99 <= TARGET_P99_MS,
            note="; ".join(f"{k} p99 {percentile(v, 99):.2f} ms, {found[k] / len(v):.1f} matches"
                           for k, v in timings.items())
            + f"; Redis CPU {server_us:.0f} µs per call (ZRANGEBYLEX + HMGET, commandstats); load average "
            f"at the end {machine.load_average()}")
    ctx.row("14 members", f"memory per member (account hash with name + phone, account set, index), INFO "
            f"delta over {n:,}", f"{per_member:,.0f} bytes",
            note=f"index {index_bytes / n:,.0f} bytes/member ({index_entries / n:.2f} entries each); "
            f"MEMORY USAGE of one member's hash {sample} bytes")
    ctx.row("14 members", "pinyin initials computed by the ledger (pypinyin) per name", f"{pinyin_s / n * 1e6:,.0f} µs",
            note="once per open / restore, in the client")


# ---------------------------------------------------------------- bucket costs (same run as the plain deduct)

BUCKET_TARGET_RATIO = 1.15
BUCKET_ACCOUNTS = 100


def _bucket_operations(ledger: Ledger, n: int, nonce: str, accounts: int) -> list[tuple[str, object]]:
    """Each a callable sending exactly `n` script calls: the plain deduct (an account
    without bonus), a top-up with a bonus and a method, and deductions that take from both
    buckets in the costliest order (proportional) and in bonus_first."""
    plain = [f"P{i:03d}" for i in range(accounts)]
    bonus = [f"B{i:03d}" for i in range(accounts)]

    def each(accounts, kind):
        return [(accounts[i % len(accounts)], f"{nonce}-{kind}-{i}") for i in range(n)]

    def expect(r):
        if not r.applied:
            raise RuntimeError(f"benchmark call answered {r}")

    def run(pairs, call):
        def go():
            for a, t in pairs:
                expect(call(a, t))
        return go

    return [
        ("deduct (plain)", run(each(plain, "d"), lambda a, t: ledger.deduct(a, 1, txn_id=t, terminal_id="T1",
                                                                              cashier_id="c1"))),
        ("credit with bonus", run(each(bonus, "c"), lambda a, t: ledger.credit(
            a, 100, txn_id=t, method="wechat", bonus_minor=20, terminal_id="T1", cashier_id="c1"))),
        ("deduct (buckets, proportional)", run(each(bonus, "p"), lambda a, t: ledger.deduct(
            a, 3, txn_id=t, terminal_id="T1", cashier_id="c1"))),
        ("credit (plain)", run(each(plain, "k"), lambda a, t: ledger.credit(a, 1, txn_id=t, terminal_id="T1",
                                                                              cashier_id="c1"))),
    ]


def _bucket_reset(url: str, accounts: int) -> Ledger:
    flush_redis(url)
    ledger = Ledger.from_url(url)
    ledger.init()
    ledger.set_spend_order("proportional", txn_id="bench-order")
    for i in range(accounts):
        ledger.open_account(f"P{i:03d}", txn_id=f"open-P{i}", initial_minor=10 ** 11)
        ledger.open_account(f"B{i:03d}", txn_id=f"open-B{i}", initial_minor=10 ** 11)
        ledger.credit(f"B{i:03d}", 10 ** 9, txn_id=f"seed-B{i}", bonus_minor=3 * 10 ** 8)
    return ledger


def bucket_costs(ctx) -> None:
    """Server cost of a top-up with bonus and of a bucketed deduction beside the plain
    deduct, in one run (interleaved rounds): µs of Redis CPU (INFO commandstats) and, with
    valgrind, redis-server instructions per call (callgrind)."""
    import secrets
    import shutil
    import statistics

    import redis

    from .server_cost import _CallgrindRedis, _Meter
    from ..servers import free_port

    n = 200 if ctx.smoke else 2000
    accounts = 10 if ctx.smoke else BUCKET_ACCOUNTS
    usec: dict[str, list[float]] = {}
    instr: dict[str, list[float]] = {}
    raw = redis.Redis.from_url(ctx.redis.url, decode_responses=True)
    meter = _Meter(raw)
    for _ in range(1 if ctx.smoke else 3):
        ledger = _bucket_reset(ctx.redis.url, accounts)
        for name, fn in _bucket_operations(ledger, n, secrets.token_hex(3), accounts):
            per_call, calls = meter.measure(fn)
            if calls != n:
                raise RuntimeError(f"{name}: {calls} script calls for {n} operations")
            usec.setdefault(name, []).append(per_call)
        ledger.close()
    raw.close()
    # callgrind only in a full run: under valgrind redis-server is ~50x slower (smoke stays seconds)
    if not ctx.smoke and shutil.which("valgrind") and shutil.which("callgrind_control"):
        n_cg = 400
        server = _CallgrindRedis(port=free_port()).start()
        try:
            for _ in range(2):
                ledger = _bucket_reset(server.url, accounts)
                for name, fn in _bucket_operations(ledger, n_cg, secrets.token_hex(3), accounts):
                    instr.setdefault(name, []).append(server.measure(fn, n_cg))
                ledger.close()
        finally:
            server.stop()
    us = {k: statistics.median(v) for k, v in usec.items()}
    ins = {k: statistics.median(v) for k, v in instr.items()}
    base_us, base_ins = us["deduct (plain)"], ins.get("deduct (plain)")
    ctx.data["bucket_costs"] = dict(usec=us, instructions=ins)
    for name in ("credit with bonus", "deduct (buckets, proportional)", "credit (plain)", "deduct (plain)"):
        ratio_us = us[name] / base_us
        if base_ins:
            ratio, figure = ins[name] / base_ins, f"{ins[name]:,.0f} instructions/call"
            basis = "callgrind"
        else:
            ratio, figure, basis = ratio_us, f"{us[name]:.1f} µs/call", "commandstats"
        target = name in ("credit with bonus", "deduct (buckets, proportional)")
        ctx.row("14 members", f"server cost: {name} beside the plain deduct (same run)", figure,
                ratio=f"{ratio:.2f}× ({basis}); {ratio_us:.2f}× by µs ({us[name]:.1f} µs)",
                target=f"≤ {BUCKET_TARGET_RATIO}×" if target else "",
                met=(ratio <= BUCKET_TARGET_RATIO) if target else None,
                note="spend order proportional (exact integer split); accounts with both buckets"
                if "buckets" in name else "")


def run(ctx) -> None:
    lookup(ctx)
    bucket_costs(ctx)
