"""Issue 30 item 4, measured before it is built: the idempotency record as one key per txn
(today, `bench/contenders/minimal_deduct.lua`) against fields of static shard hashes
rotated by age (`minimal_deduct_sharded_records.lua`, the layout docs/ledger.md designs),
both in the minimal full-contract deduct so that only the record differs:
`python -m bench.record_layout [--records N]`.

Prints, per layout: redis-server instructions per fresh call and per replay (callgrind,
400 calls each, as part 17's server cost), and bytes per record (INFO used_memory over N
fresh calls, the journal stream deleted before the reading so that only records count).
"""
from __future__ import annotations

import argparse
import secrets
import shutil
import sys
from pathlib import Path

import redis

from .parts.server_cost import _CallgrindRedis
from .servers import PrivateRedis, free_port

CONTENDERS = Path(__file__).resolve().parent / "contenders"
LAYOUTS = {
    "one key per txn (today)": (CONTENDERS / "minimal_deduct.lua").read_text(),
    "fields of rotated shard hashes (designed)": (CONTENDERS / "minimal_deduct_sharded_records.lua").read_text(),
}
PREFIX = "cs:{b}:"
ACCOUNT = PREFIX + "a:A1"
JOURNAL = PREFIX + "j"
RETENTION_S = "604800"
CALLGRIND_CALLS = 400


def keys_of(layout: str, txn_id: str) -> list[str]:
    if layout.startswith("one key"):
        return [ACCOUNT, PREFIX + "t:" + txn_id, JOURNAL]
    shard = txn_id[-2:]
    return [ACCOUNT, PREFIX + "tc:" + shard, JOURNAL, PREFIX + "to:" + shard]


def txn_ids(n: int) -> list[str]:
    """32 hex characters, as a till's uuid4().hex: 256 shards by the last two."""
    return [secrets.token_hex(16) for _ in range(n)]


def run_calls(client: redis.Redis, layout: str, sha: str, ids: list[str], replayed: bool) -> None:
    pipe = client.pipeline(transaction=False)
    for i, t in enumerate(ids):
        keys = keys_of(layout, t)
        pipe.evalsha(sha, len(keys), *keys, t, "A1", 1, RETENTION_S)
        if i % 1000 == 999 or i == len(ids) - 1:
            for reply in pipe.execute():
                if reply[0] not in ("APPLIED", "A") or bool(reply[2]) != replayed:
                    raise RuntimeError(f"{layout}: answered {reply}")
            pipe = client.pipeline(transaction=False)


def reset(client: redis.Redis) -> None:
    client.flushall()
    client.hset(ACCOUNT, "bal", 10 ** 15)


def instructions(layout: str) -> tuple[float, float]:
    server = _CallgrindRedis(port=free_port()).start()
    client = redis.Redis(port=server.port, decode_responses=True)
    try:
        reset(client)
        sha = client.script_load(LAYOUTS[layout])
        run_calls(client, layout, sha, txn_ids(200), False)        # warm: shard hashes exist, as in a day's traffic
        ids = txn_ids(CALLGRIND_CALLS)
        fresh = server.measure(lambda: run_calls(client, layout, sha, ids, False), CALLGRIND_CALLS)
        replay = server.measure(lambda: run_calls(client, layout, sha, ids, True), CALLGRIND_CALLS)
        return fresh, replay
    finally:
        client.close()
        server.stop()


def bytes_per_record(layout: str, n: int) -> float:
    server = PrivateRedis().start()
    client = redis.Redis(port=server.port, decode_responses=True)
    try:
        reset(client)
        sha = client.script_load(LAYOUTS[layout])
        before = client.info("memory")["used_memory"]
        run_calls(client, layout, sha, txn_ids(n), False)
        client.delete(JOURNAL)
        return (client.info("memory")["used_memory"] - before) / n
    finally:
        client.close()
        server.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.record_layout", description=__doc__)
    p.add_argument("--records", type=int, default=200_000, help="fresh calls for the bytes per record")
    args = p.parse_args(argv)
    have_callgrind = bool(shutil.which("valgrind") and shutil.which("callgrind_control"))
    print("| Record layout | Instructions, fresh deduct | Instructions, replay | Bytes per record |")
    print("|---|---|---|---|")
    for layout in LAYOUTS:
        fresh, replay = instructions(layout) if have_callgrind else (float("nan"), float("nan"))
        print(f"| {layout} | {fresh:,.0f} | {replay:,.0f} | {bytes_per_record(layout, args.records):,.0f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
