"""The record layout designed for issue 30 item 4 (docs/ledger.md, "Records of at most 160
bytes"), as its bench contender implements it: a record is found by its retry until the
retention has passed whatever the rotations in between, and gone after two rotations; a
retry with another request is a conflict. Run against the real Redis; the layout is not
the product's yet, so this holds the design's claims, not the ledger's."""
from __future__ import annotations

import time

import redis

from bench.record_layout import ACCOUNT, JOURNAL, LAYOUTS, PREFIX, keys_of

LAYOUT = "fields of rotated shard hashes (designed)"


def _call(client, sha, txn_id, amount=1, retention_s=100):
    keys = keys_of(LAYOUT, txn_id)
    return client.evalsha(sha, len(keys), *keys, txn_id, "A1", amount, retention_s)


def _age_current(client, shard, by_s):
    """The shard's current hash as if started `by_s` seconds earlier."""
    key = PREFIX + "tc:" + shard
    client.hset(key, "@born", int(client.hget(key, "@born")) - by_s)


def test_a_record_outlives_one_rotation_and_not_two(redis_url):
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.delete(ACCOUNT, JOURNAL, PREFIX + "tc:aa", PREFIX + "to:aa")
    client.hset(ACCOUNT, "bal", 1_000)
    sha = client.script_load(LAYOUTS[LAYOUT])
    first = _call(client, sha, "t-1aa")
    assert first[:3] == ["APPLIED", 999, 0]
    assert _call(client, sha, "t-1aa") == ["A", 999, 1, first[3]]                # replayed
    assert _call(client, sha, "t-1aa", amount=2)[0] == "TXN_CONFLICT"          # same id, another request

    _age_current(client, "aa", 100)                  # the current hash is a retention old
    assert _call(client, sha, "t-2aa")[:3] == ["APPLIED", 998, 0]     # rotates, then records t-2aa
    assert client.hexists(PREFIX + "to:aa", "t-1aa") and not client.hexists(PREFIX + "tc:aa", "t-1aa")
    assert 0 < client.ttl(PREFIX + "to:aa") <= 100
    assert _call(client, sha, "t-1aa") == ["A", 999, 1, first[3]]    # still found: younger than twice the retention

    _age_current(client, "aa", 100)
    assert _call(client, sha, "t-3aa")[:3] == ["APPLIED", 997, 0]     # the second rotation drops t-1aa
    assert not client.hexists(PREFIX + "to:aa", "t-1aa") and client.hexists(PREFIX + "to:aa", "t-2aa")
    assert _call(client, sha, "t-1aa")[:3] == ["APPLIED", 996, 0]    # a late retry is new again, as after a TTL
    assert client.hget(ACCOUNT, "bal") == "996"


def test_a_young_current_hash_is_not_rotated(redis_url):
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.delete(ACCOUNT, JOURNAL, PREFIX + "tc:bb", PREFIX + "to:bb")
    client.hset(ACCOUNT, "bal", 10)
    sha = client.script_load(LAYOUTS[LAYOUT])
    _call(client, sha, "u-1bb")
    _age_current(client, "bb", 99)                   # one second short of the retention
    _call(client, sha, "u-2bb")
    assert client.hlen(PREFIX + "tc:bb") == 3 and not client.exists(PREFIX + "to:bb")   # two records + @born
    assert int(time.time()) - int(client.hget(PREFIX + "tc:bb", "@born")) >= 99
