"""Redis contenders that are *not* the product, on the bench's private Redis:
optimistic locking (WATCH balance; GET; MULTI; SET balance, SET txn record with the
retention TTL, XADD journal; EXEC, retried on a WatchError up to `MAX_ATTEMPTS`) and a
lock (SET lock NX PX with a random token; GET; SET/SET/XADD in one pipeline; release
with a compare-and-delete script), which retries acquisition after a short random
sleep and gives up after `LOCK_GIVE_UP_S`. Balances are integer strings of minor
units; `verify` compares them with the opening balances minus what was applied.
"""
from __future__ import annotations

import random
import secrets
import time

import redis
from redis.exceptions import WatchError

from core.ledger import DEFAULT_RETENTION_S

from ..drivers import AMOUNT_MINOR, INITIAL_BALANCE_MINOR

MAX_ATTEMPTS = 1000
LOCK_TTL_MS = 2000
LOCK_GIVE_UP_S = 5.0
LOCK_RETRY_SLEEP_S = 0.001
RELEASE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class _RedisBase:
    name = "redis"

    def __init__(self, url: str, accounts: tuple[str, ...]):
        self.url, self.accounts = url, accounts
        self.nonce = ""

    def _client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, decode_responses=True)

    def prepare(self, procs: int) -> None:
        c = self._client()
        c.flushall()
        pipe = c.pipeline(transaction=False)
        for a in self.accounts:
            pipe.set(f"m:b:{a}", INITIAL_BALANCE_MINOR)
        pipe.execute()
        c.close()
        self.nonce = secrets.token_hex(3)

    def verify(self, m) -> dict:
        c = self._client()
        balances = [int(b) for b in c.mget([f"m:b:{a}" for a in self.accounts])]
        journal = c.xlen("m:j")
        c.close()
        final_total = sum(balances)
        expected_total = INITIAL_BALANCE_MINOR * len(self.accounts) - journal * AMOUNT_MINOR
        negative = sum(-b for b in balances if b < 0)
        return {"money_created_minor": final_total - expected_total, "oversold_minor": negative,
                "exact": final_total == expected_total and negative == 0}

    def _requests(self, index: int):
        accounts, n = self.accounts, len(self.accounts)
        prefix, offset, i = f"{self.nonce}-{index}-", index * 7919, 0
        while True:
            yield accounts[(offset + i) % n], prefix + str(i)
            i += 1


class RedisWatch(_RedisBase):
    name = "Redis WATCH/MULTI/EXEC"

    def worker(self, index: int, procs: int):
        c = self._client()
        reqs = self._requests(index)
        ttl = DEFAULT_RETENTION_S

        def step():
            account_id, txn_id = next(reqs)
            bkey = f"m:b:{account_id}"
            for attempt in range(MAX_ATTEMPTS):
                with c.pipeline(transaction=True) as pipe:
                    try:
                        pipe.watch(bkey)
                        balance = int(pipe.get(bkey))
                        if balance < AMOUNT_MINOR:
                            pipe.unwatch()
                            return 1, attempt, 0, 0
                        after = balance - AMOUNT_MINOR
                        pipe.multi()
                        pipe.set(bkey, after)
                        pipe.set(f"m:t:{txn_id}", f"deduct|{account_id}|{AMOUNT_MINOR}|{after}", ex=ttl)
                        pipe.xadd("m:j", {"txn": txn_id, "acct": account_id, "amt": -AMOUNT_MINOR, "bal": after})
                        pipe.execute()
                        return 1, attempt, 0, AMOUNT_MINOR
                    except WatchError:
                        continue
            return 0, MAX_ATTEMPTS - 1, 1, 0
        return step


class RedisLock(_RedisBase):
    name = "Redis lock SET NX PX"

    def worker(self, index: int, procs: int):
        c = self._client()
        release = c.register_script(RELEASE_LUA)
        reqs = self._requests(index)
        ttl = DEFAULT_RETENTION_S

        def step():
            account_id, txn_id = next(reqs)
            bkey, lkey = f"m:b:{account_id}", f"m:l:{account_id}"
            token = secrets.token_hex(8)
            retries = 0
            give_up = time.monotonic() + LOCK_GIVE_UP_S
            while not c.set(lkey, token, nx=True, px=LOCK_TTL_MS):
                retries += 1
                if time.monotonic() > give_up:
                    return 0, retries - 1, 1, 0
                time.sleep(random.uniform(0, LOCK_RETRY_SLEEP_S))
            try:
                balance = int(c.get(bkey))
                if balance < AMOUNT_MINOR:
                    return 1, retries, 0, 0
                after = balance - AMOUNT_MINOR
                pipe = c.pipeline(transaction=False)
                pipe.set(bkey, after)
                pipe.set(f"m:t:{txn_id}", f"deduct|{account_id}|{AMOUNT_MINOR}|{after}", ex=ttl)
                pipe.xadd("m:j", {"txn": txn_id, "acct": account_id, "amt": -AMOUNT_MINOR, "bal": after})
                pipe.execute()
                return 1, retries, 0, AMOUNT_MINOR
            finally:
                release(keys=[lkey], args=[token])
        return step
