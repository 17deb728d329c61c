"""The Redis key schema, in one place.

Every key belongs to one journal *partition*, and every key of a partition carries
the partition's hash tag, so one script only ever touches one Redis Cluster slot::

    cs:meta                          hash   ledger settings: partitions, created_ms
    cs:{<tag>}:j                     stream journal of the partition (consumer group "reconcile")
    cs:{<tag>}:accts                 set    account ids of the partition
    cs:{<tag>}:ack                   string counter bumped before WAIT (Ledger(wait_replicas=...))
    cs:{<tag>}:a:<account_id>        hash   bal (minor units), st (active|frozen), ct (ms), lj (last journal id)
    cs:{<tag>}:t:<txn_id>            hash   idempotency record: f (request fingerprint), s (status),
                                            b (balance), j (journal id), r (refunded so far),
                                            for holds hs (active|captured|voided|expired), ha, hx, hc;
                                            TTL = retention
    cs:{<tag>}:h:<account_id>        hash   active holds: hold txn id -> amount (minor)
    cs:{<tag>}:hx:<account_id>       zset   active holds by expiry (ms)

Split accounts (`Ledger.split_account`): the root hash ``a:<account_id>`` gets sh (shard
count; msh = most shards ever, mx = ms until which old shard records may exist after a
merge). Shard k is an account of its own with id ``<account_id>#<k>`` (a '#' no user id
can contain), in partition ``(p + 1 + bitrev4(k) * partitions // 16) % partitions`` where p is the
root's partition, so the shards spread over the slot ring (and the Cluster's primaries).
A shard hash has bal, st, ct, lj, n (its split's shard count) and cl (closed by a merge).
Transfers between sub-balances add, per sub-balance id::

    cs:{<tag>}:x:<id>                hash   transfers out still in flight: xfer id -> 'amount|dest|ms'
    cs:{<tag>}:xr:<id>               hash   transfers received, not yet settled: xfer id -> ms
    cs:{<tag>}:t:<txn_id>#<k>        hash   the record of a txn on shard k (its own decision)

An account lives in partition ``crc32(account_id) % partitions``. A txn's record lives
in its account's partition, so a txn id reused for another account *of another
partition* is not seen by the script; the database's unique txn id catches it at
reconciliation, which reverses the second application. With one partition (the
default on a standalone Redis) every reuse is caught at once.

Partition tags are chosen so that partition i hashes into the i-th equal share of
the 16384 slots: on a Cluster with contiguous slot ranges the partitions spread
evenly over the primaries. Balance keys never carry a TTL.
"""
from __future__ import annotations

import hashlib
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache

from redis.crc import key_slot

PREFIX = "cs"
META_KEY = f"{PREFIX}:meta"
SLOTS = 16384
MAX_PARTITIONS = 1024
CONSUMER_GROUP = "reconcile"
MAX_SHARDS = 16
SHARD_SEPARATOR = "#"
_SHARD_RE = re.compile(r"([A-Za-z0-9._:-]{1,61})#([0-9]{1,2})")


def shard_id(account_id: str, index: int) -> str:
    """The id of sub-balance `index` of a split account: '<account_id>#<index>'."""
    return f"{account_id}{SHARD_SEPARATOR}{index}"


def parse_shard_id(value: str) -> tuple[str, int] | None:
    """(root account id, shard index) for a shard id, None for any other id."""
    m = _SHARD_RE.fullmatch(value)
    return (m.group(1), int(m.group(2))) if m else None


def internal_id(*parts: object) -> str:
    """A txn id for the ledger's own operations (transfers, shard administration):
    '#' + 24 hex digits of SHA-1 over the parts. Deterministic, so a retry derives the
    same id; no user txn id can have this form."""
    return "#" + hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest()[:24]


@lru_cache(maxsize=None)
def partition_tag(index: int, partitions: int) -> str:
    """The hash tag of partition `index` of `partitions`: lands in its share of the slots."""
    if not 0 <= index < partitions <= MAX_PARTITIONS:
        raise ValueError(f"partition {index} of {partitions}")
    low, high = index * SLOTS // partitions, (index + 1) * SLOTS // partitions
    suffix = 0
    while True:
        tag = f"p{index}.{suffix}"
        if low <= key_slot(tag.encode()) < high:
            return tag
        suffix += 1


@dataclass(frozen=True, slots=True)
class Partition:
    index: int
    tag: str

    @property
    def prefix(self) -> str:
        return f"{PREFIX}:{{{self.tag}}}:"

    @property
    def journal(self) -> str:
        return self.prefix + "j"

    @property
    def accounts(self) -> str:
        return self.prefix + "accts"

    def account(self, account_id: str) -> str:
        return f"{self.prefix}a:{account_id}"

    def txn(self, txn_id: str) -> str:
        return f"{self.prefix}t:{txn_id}"

    def sub_txn(self, account_id: str, txn_id: str) -> str:
        """The record of `txn_id` for an account, or for a shard 'A#k': 't:<txn_id>#k'
        (a shard may share its slot with the root and other shards)."""
        _, sep, k = account_id.rpartition("#")
        return f"{self.prefix}t:{txn_id}#{k}" if sep else self.txn(txn_id)

    def holds(self, account_id: str) -> str:
        return f"{self.prefix}h:{account_id}"

    def hold_expiries(self, account_id: str) -> str:
        return f"{self.prefix}hx:{account_id}"

    def in_flight(self, account_id: str) -> str:
        return f"{self.prefix}x:{account_id}"

    def received(self, account_id: str) -> str:
        return f"{self.prefix}xr:{account_id}"


class KeySchema:
    """Maps accounts and txns to keys for a ledger with a fixed number of partitions."""

    def __init__(self, partitions: int):
        if not 1 <= partitions <= MAX_PARTITIONS:
            raise ValueError(f"partitions must be 1..{MAX_PARTITIONS}")
        self.partitions = partitions
        self.all = tuple(Partition(i, partition_tag(i, partitions)) for i in range(partitions))
        # the hot path of every call: remember recent ids' partitions
        self.partition_of = lru_cache(maxsize=65536)(self._partition_of)

    def _partition_of(self, account_id: str) -> Partition:
        """The partition of an account id, or of a shard id '<account_id>#<k>'."""
        if SHARD_SEPARATOR in account_id:
            parsed = parse_shard_id(account_id)
            if parsed is None:
                raise ValueError(f"not an account or shard id: {account_id!r}")
            root, index = parsed
            return self.shard_partition(root, index, MAX_SHARDS)
        return self.all[zlib.crc32(account_id.encode()) % self.partitions]

    def shard_partition(self, account_id: str, index: int, shards: int = MAX_SHARDS) -> Partition:
        """Shard `index` lives ``1 + bitrev4(index) * partitions // 16`` partitions after the root's.

        Bit reversal (0, 8, 4, 12, 2, ...) puts the first N shards as far apart on the
        ring as it can for every N, and a shard's partition never depends on how many
        shards its split had (a retry after a merge and a new split finds its record).
        """
        if not 0 <= index < MAX_SHARDS:
            raise ValueError(f"shard {index} out of 0..{MAX_SHARDS - 1}")
        root = zlib.crc32(account_id.encode()) % self.partitions
        spread = int(f"{index:04b}"[::-1], 2)
        return self.all[(root + 1 + spread * self.partitions // MAX_SHARDS) % self.partitions]
