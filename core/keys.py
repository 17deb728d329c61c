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
                                            for a refunded sale r:<refund txn id> (that
                                            refund's amount; r = their sum, refund.lua),
                                            for holds hs (active|captured|voided|expired), ha, hx, hc;
                                            TTL = retention
    cs:{<tag>}:h:<account_id>        hash   active holds: hold txn id -> amount (minor)
    cs:{<tag>}:hx:<account_id>       zset   active holds by expiry (ms)
    cs:{<tag>}:cfg                   hash   shop settings: spend_order, balance_cap, promo:<id>
    cs:{<tag>}:c:<card_no>           hash   a card: a (account id), st (active|blocked), br (block reason)
    cs:{<tag>}:cards                 hash   card number -> account id, of the cards in the partition
    cs:{<tag>}:ac:<account_id>       hash   the account's cards: card number -> active|blocked, in the
                                            *account's* slot, so a charge presented by card checks
                                            the card in the same script as the balance (issue 25)
    cs:{<tag>}:ph                    hash   phone -> account id, of the phones that hash to the
                                            partition (`partition_of(phone)`): with c:<card_no> and
                                            a:<account_id> of the same slot, every identity string
                                            (card number, account id, phone) is claimed in the
                                            slot of the string itself, so one script refuses a
                                            string that is already another member's identity
    cs:{<tag>}:anchor                hash   the book's chain head as last anchored by the
                                            reconcile service: seq, hash, ms (reconcile_service/anchors.py)
    cs:{<tag>}:mx                    zset   member index: 'p:<phone>', 'n:<name>', 'i:<initials>'
                                            + NUL + account id, by lex (core/members.py)

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

import zlib
from dataclasses import dataclass, field
from functools import lru_cache


PREFIX = "cs"
META_KEY = f"{PREFIX}:meta"
SLOTS = 16384
MAX_PARTITIONS = 1024
CONSUMER_GROUP = "reconcile"


@lru_cache(maxsize=None)
def partition_tag(index: int, partitions: int) -> str:
    """The hash tag of partition `index` of `partitions`: lands in its share of the slots."""
    if not 0 <= index < partitions <= MAX_PARTITIONS:
        raise ValueError(f"partition {index} of {partitions}")
    low, high = index * SLOTS // partitions, (index + 1) * SLOTS // partitions
    suffix = 0
    while True:
        tag = f"p{index}.{suffix}"
        if low <= _key_slot(tag.encode()) < high:
            return tag
        suffix += 1


@dataclass(frozen=True, slots=True)
class Partition:
    index: int
    tag: str
    # made once: every key of every call starts with it
    prefix: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "prefix", f"{PREFIX}:{{{self.tag}}}:")

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

    def holds(self, account_id: str) -> str:
        return f"{self.prefix}h:{account_id}"

    def hold_expiries(self, account_id: str) -> str:
        return f"{self.prefix}hx:{account_id}"

    @property
    def settings(self) -> str:
        """The shop settings of the partition (spending order, balance cap: core/members.py)."""
        return self.prefix + "cfg"

    def card(self, card_no: str) -> str:
        return f"{self.prefix}c:{card_no}"

    @property
    def cards(self) -> str:
        """Card number -> account id of every card in the partition."""
        return self.prefix + "cards"

    def account_cards(self, account_id: str) -> str:
        """The cards of one account (card number -> active|blocked), in the account's slot."""
        return f"{self.prefix}ac:{account_id}"

    def offline_windows(self, account_id: str) -> str:
        """The account's offline windows (terminal -> '<start ms> <sum>': offline_deduct.lua),
        in the account's slot."""
        return f"{self.prefix}ol:{account_id}"

    @property
    def phones(self) -> str:
        """Phone -> account id of the phones whose partition (partition_of(phone)) this is."""
        return self.prefix + "ph"

    @property
    def member_index(self) -> str:
        """The member index (phone, name, initials -> account id), kept by the scripts."""
        return self.prefix + "mx"

    @property
    def chain_anchor(self) -> str:
        """The book's chain head of the partition, anchored outside the database."""
        return self.prefix + "anchor"

    def deduct_keys(self, account_id: str, txn_id: str) -> list[str]:
        """KEYS of deduct.lua: account, txn record, journal, holds, hold expiries, the
        partition's settings, the account's cards; built with one prefix (the hot path of
        deduct_many)."""
        p = self.prefix
        return [f"{p}a:{account_id}", f"{p}t:{txn_id}", f"{p}j", f"{p}h:{account_id}", f"{p}hx:{account_id}",
                f"{p}cfg", f"{p}ac:{account_id}"]


def ack_key(key: str) -> str:
    """The counter bumped before WAIT, in the slot of `key` (any key of a partition)."""
    return key[:key.index("}") + 1] + ":ack"


# the member layer's names for the keys above (core/members.py re-exports them)
def card_key(part: Partition, card_no: str) -> str:
    return part.card(card_no)


def card_map_key(part: Partition) -> str:
    return part.cards


def member_index_key(part: Partition) -> str:
    return part.member_index


def settings_key(part: Partition) -> str:
    return part.settings


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
        return self.all[zlib.crc32(account_id.encode()) % self.partitions]


def _key_slot(key: bytes) -> int:
    # redis-py's CRC16 slot, imported on first use: this module's key names are read on
    # tills (via core.history and core.members), which hold no Redis client
    from redis.crc import key_slot
    return key_slot(key)
