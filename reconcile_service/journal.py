"""Consuming the ledger's journal streams through the `reconcile` consumer group.

`Consumer.step(partition)` takes one batch of a partition (first entries this consumer
already holds, then entries left pending by a dead consumer via XAUTOCLAIM, then new
ones), applies it in one database transaction (`store.apply_batch`) and acknowledges
it with XACK only after the COMMIT, anchoring the partition's new chain head in Redis
in between (`anchors`). Every crash point is harmless: before the commit
nothing is written, between commit and ack the entries are delivered again and the
unique txn id / journal position make them change nothing.

When the ledger asks for replicas (`wait_replicas`, e.g. ``?wait_replicas=1`` in the
reconcile service's Redis URL), a batch is booked only once that many replicas hold it
(`Consumer.confirm_replicated`, before the database transaction): otherwise a batch read
from a primary that dies before replicating it would be in the book while the promoted
replica never had it, and the till's retry (same txn id) would apply it there again.
A batch the replicas do not confirm in time is not booked: it stays pending, is counted
(`reconcile_batches_unreplicated_total`) and read again by the next step.

`watermark()` says up to where a partition is durably applied (everything below the
oldest pending entry, or up to the last delivered one when nothing is pending); the
reconciler compares only below it and `trim()` never removes anything above it.

Test hook: `after_commit_hook`, when a test sets it (it is None in production), is
called right after the COMMIT of each batch and before that batch's XACK, with how many
batches the consumer has committed; tests/support/fault_daemon.py installs one that
ends the process there (like a power cut), so a test can prove that exactly this batch
is delivered again and changes nothing. Unset it costs one comparison per batch.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable

import redis
from redis.exceptions import AskError, MovedError, ResponseError

from core import Ledger
from core.connection import follow_primary, is_cluster
from core.errors import NotReplicated
from core.keys import CONSUMER_GROUP, Partition

from .anchors import anchor_batch
from .metrics import Metrics
from .models import journal_pos
from .store import BatchResult, apply_batch

log = logging.getLogger(__name__)

# Called after each batch's COMMIT, before its XACK, with the number of batches the
# consumer has committed; read when a consumer is created. Tests only (see above).
after_commit_hook: Callable[[int], None] | None = None


@dataclass(frozen=True)
class GroupState:
    partition: int
    length: int                 # entries in the stream now
    last_generated_id: str
    last_delivered_id: str
    pending: int
    min_pending_id: str | None
    lag: int                    # entries not yet delivered to the group

    @property
    def unapplied(self) -> int:
        return self.lag + self.pending

    def applied_through(self, journal_id: str) -> bool:
        """True when every entry of the partition up to `journal_id` is in the database."""
        pos = journal_pos(journal_id)
        if self.min_pending_id is not None and journal_pos(self.min_pending_id) <= pos:
            return False
        return pos <= journal_pos(self.last_delivered_id)

    @property
    def drained(self) -> bool:
        return self.pending == 0 and self.lag == 0


def _next_id(journal_id: str) -> str:
    ms, _, seq = journal_id.partition("-")
    return f"{ms}-{int(seq or 0) + 1}"


class Journal:
    """Stream commands for the consumer group, on the ledger's Redis client."""

    def __init__(self, ledger: Ledger):
        self.ledger = ledger
        self.client = ledger.client

    def state(self, part: Partition) -> GroupState:
        info = self.client.xinfo_stream(part.journal)
        group = next((g for g in self.client.xinfo_groups(part.journal) if g["name"] == CONSUMER_GROUP), None)
        if group is None:
            raise ResponseError(f"NOGROUP no consumer group {CONSUMER_GROUP!r} on {part.journal}")
        last_delivered = group["last-delivered-id"]
        min_pending = None
        if group["pending"]:
            summary = self.client.xpending(part.journal, CONSUMER_GROUP)
            min_pending = summary["min"]
        lag = group.get("lag")
        if lag is None:
            # Redis cannot always count it (e.g. after XDEL); count what is after the cursor.
            lag = len(self.client.xrange(part.journal, f"({last_delivered}", "+", count=100_000))
        return GroupState(part.index, int(info["length"]), info["last-generated-id"], last_delivered,
                          int(group["pending"]), min_pending, int(lag))

    def trim_bound(self, part: Partition) -> str | None:
        """The lowest id that must be kept: considers every group on the stream, so a
        second reader (another tool) keeps what it has not read either."""
        bound: str | None = None
        for group in self.client.xinfo_groups(part.journal):
            if group["pending"]:
                candidate = self.client.xpending(part.journal, group["name"])["min"]
            else:
                candidate = _next_id(group["last-delivered-id"])
            if bound is None or journal_pos(candidate) < journal_pos(bound):
                bound = candidate
        return bound

    def trim(self, part: Partition, keep_s: float) -> int:
        """XTRIM MINID below what every group has durably applied and older than keep_s."""
        bound = self.trim_bound(part)
        if bound is None:
            return 0
        cutoff = f"{max(0, int(time.time() * 1000 - keep_s * 1000))}-0"
        minid = min(bound, cutoff, key=journal_pos)
        return int(self.client.xtrim(part.journal, minid=minid, approximate=False))


def _identity(response, **_options):
    return response


def _raw_reader(client):
    """A client sharing `client`'s connections whose XREADGROUP answers what Redis sent
    (per entry [id, [name, value, ...]], under the stream's name in RESP3's map or RESP2's
    list) instead of redis-py's tuple and dict per entry
    (issue 30: with one journal field per entry, that dict was the reply's main cost).
    None on a Cluster client (its node routing is its own): the drain then reads as before."""
    if is_cluster(client) or not isinstance(client, redis.Redis):
        return None
    reader = redis.Redis(connection_pool=client.connection_pool)
    reader.set_response_callback("XREADGROUP", _identity)
    return reader


class Consumer:
    """One consumer of the group: applies batches of every partition to the database."""

    def __init__(self, ledger: Ledger, engine, name: str, *, batch_size: int,
                 claim_idle_ms: int, metrics: Metrics):
        self.ledger, self.engine, self.name = ledger, engine, name
        self.journal = Journal(ledger)
        self.client = ledger.client
        self.batch_size = batch_size
        self.claim_idle_ms = claim_idle_ms
        self.metrics = metrics
        # Entries this consumer may still hold (a previous life with the same name, or
        # a batch whose commit failed): read with XREADGROUP id 0 until none are left.
        self._own_pending: dict[int, bool] = {}
        self._claim_cursor: dict[int, str] = {}
        self._after_commit = after_commit_hook
        self._commits = 0
        self._reader = _raw_reader(self.client)

    def _xreadgroup(self, part: Partition, start: str, block_ms: int | None = None) -> list:
        """XREADGROUP of one partition's journal: [(entry id, fields)], where fields is
        redis-py's dict, or (the raw reader) the flat [name, value, ...] list Redis sent,
        or None for an entry deleted while pending. parse_entries takes every shape."""
        args = ["XREADGROUP", "GROUP", CONSUMER_GROUP, self.name, "COUNT", self.batch_size]
        if block_ms is not None:
            args += ["BLOCK", block_ms]
        if self._reader is None:
            reply = self.client.xreadgroup(CONSUMER_GROUP, self.name, {part.journal: start},
                                           count=self.batch_size, block=block_ms)
        else:
            reply = self._reader.execute_command(*args, "STREAMS", part.journal, start)
            if reply.__class__ is dict:         # RESP3 (redis-py's default where the server speaks it)
                return reply.get(part.journal) or []
        return reply[0][1] if reply else []

    def _read_own(self, part: Partition) -> list:
        return self._xreadgroup(part, "0")

    def _claim(self, part: Partition) -> tuple[list, list[str]]:
        start = self._claim_cursor.get(part.index, "0-0")
        reply = self.client.xautoclaim(part.journal, CONSUMER_GROUP, self.name, self.claim_idle_ms,
                                       start_id=start, count=self.batch_size)
        cursor, entries = reply[0], reply[1]
        deleted = list(reply[2]) if len(reply) > 2 else []
        self._claim_cursor[part.index] = cursor
        return entries, deleted

    def _read_new(self, part: Partition, block_ms: int | None) -> list:
        return self._xreadgroup(part, ">", block_ms)

    def confirm_replicated(self, part: Partition, entries: list) -> None:
        """With the ledger's `wait_replicas`, return only once that many replicas hold the
        entries just read from `part` (everything up to the batch's last entry); else raise
        NotReplicated and book nothing (the entries stay pending at this consumer).

        One round trip on one connection to the partition's node (on a Cluster, the node
        owning the stream): XCLAIM ... JUSTID of the batch's last entry to this consumer
        (it already holds it), then WAIT. The claim is a write Redis propagates and is
        allowed when Redis is full (INCR is not), so WAIT covers everything written before
        it, the entries included; and its answer proves the server WAIT asked is one that
        holds the entry: a connection that silently reconnected to a promoted replica that
        never received the batch answers no claim instead of confirming the wrong data."""
        wanted = self.ledger.wait_replicas
        present = [eid for eid, fields in entries if fields is not None]
        if not wanted or not present:
            return
        last = max(present, key=journal_pos)
        node = self.ledger.runner.node_client(part.journal)
        pipe = node.pipeline(transaction=False)
        pipe.xclaim(part.journal, CONSUMER_GROUP, self.name, 0, [last], justid=True)
        pipe.execute_command("WAIT", wanted, self.ledger.wait_timeout_ms)
        claimed, confirmed = pipe.execute(raise_on_error=False)
        problem = None
        if isinstance(claimed, Exception) or isinstance(confirmed, Exception):
            error = claimed if isinstance(claimed, Exception) else confirmed
            if isinstance(error, (MovedError, AskError)) and is_cluster(self.client):
                self.client.nodes_manager.initialize()      # the slot moved: learn the layout
            problem = f"XCLAIM/WAIT failed ({type(error).__name__}: {error})"
        elif last not in claimed:
            problem = f"the primary no longer holds entry {last} (it moved and the new one never had it)"
        elif confirmed < wanted:
            problem = f"{confirmed} of {wanted} replica(s) confirmed within {self.ledger.wait_timeout_ms} ms"
        if problem is None:
            return
        self._own_pending[part.index] = True      # read them again (or what the primary holds now)
        self._claim_cursor[part.index] = "0-0"
        follow_primary(self.client)               # Sentinel: ask again where the primary is
        self.metrics.unreplicated.labels(str(part.index)).inc()
        log.warning("journal entries not yet on a replica: batch not booked, read again later",
                    extra={"partition": part.index, "entries": len(entries), "last_journal_id": last,
                           "wait_replicas": wanted, "detail": problem})
        raise NotReplicated(f"partition {part.index}: batch up to {last} not booked: {problem}")

    def step(self, part: Partition, *, block_ms: int | None = None) -> int:
        """Apply at most one batch of `part`; answers how many stream entries it handled."""
        deleted: list[str] = []
        entries: list = []
        from_own = False
        if self._own_pending.get(part.index, True):
            entries = self._read_own(part)
            from_own = bool(entries)
            if not entries:
                self._own_pending[part.index] = False
        if not entries:
            entries, deleted = self._claim(part)
            if entries:
                log.info("claimed pending entries of a silent consumer",
                         extra={"partition": part.index, "entries": len(entries)})
        if not entries and not deleted:
            entries = self._read_new(part, block_ms)
        if not entries and not deleted:
            return 0
        # An entry whose fields are gone was deleted from the stream while pending:
        # it can never be applied, so it is quarantined (visible) rather than dropped.
        raw = [(eid, fields if fields is not None else {"__deleted__": "1"}) for eid, fields in entries]
        raw += [(eid, {"__deleted__": "1"}) for eid in deleted]
        started = time.perf_counter()
        self._own_pending[part.index] = True      # until the ack below has happened
        self.confirm_replicated(part, entries)    # with wait_replicas: only what a replica holds
        result: BatchResult = apply_batch(self.engine, part.index, raw)
        self.metrics.database_up.set(1)
        if self._after_commit is not None:
            self._commits += 1
            self._after_commit(self._commits)     # a test's fault point: committed, not acknowledged
        anchor_batch(self.ledger, part, result.chain_head)     # the new head, outside the database
        ids = [eid for eid, _ in entries]
        if ids:
            self.client.xack(part.journal, CONSUMER_GROUP, *ids)
        # A full batch of our own pending entries may have more behind it.
        self._own_pending[part.index] = from_own and len(entries) >= self.batch_size
        self.metrics.batch_seconds.observe(time.perf_counter() - started)
        label = str(part.index)
        self.metrics.entries_applied.labels(label).inc(result.applied + len(result.duplicates))
        self.metrics.entries_redelivered.labels(label).inc(result.redelivered)
        if result.quarantined:
            self.metrics.quarantined.labels(label).inc(result.quarantined)
            log.error("malformed journal entries quarantined",
                      extra={"partition": part.index, "entries": result.quarantined})
        if result.duplicates:
            self.metrics.duplicates.inc(len(result.duplicates))
            for dup in result.duplicates:
                log.warning("txn applied twice in Redis: duplicate recorded",
                            extra={"txn_id": dup["txn_id"], "account_id": dup["account_id"],
                                   "amount_minor": dup["amount_minor"], "journal_id": dup["journal_id"],
                                   "first_journal_id": dup["first_journal_id"]})
        log.debug("batch applied", extra={"partition": part.index, "entries": len(raw),
                                          "applied": result.applied, "redelivered": result.redelivered})
        return len(raw)

    def drain(self, *, stop=lambda: False, wait_for_pending: bool = True, progress=None) -> int:
        """Apply everything journaled up to now, in every partition; with `wait_for_pending`,
        also wait until entries pending elsewhere are acknowledged or claimable.

        The target is each stream's last id when the drain starts, so under a steady
        stream of new sales the drain still ends."""
        total = 0
        targets = {p.index: self.journal.state(p).last_generated_id for p in self.ledger.partitions}
        while not stop():
            handled = sum(self.step(part) for part in self.ledger.partitions)
            total += handled
            if progress and handled:
                progress(total)
            states = [self.journal.state(p) for p in self.ledger.partitions]
            if all(s.lag == 0 for s in states) and (not wait_for_pending or all(s.pending == 0 for s in states)):
                break
            if all(s.applied_through(targets[s.partition]) for s in states):
                break
            if handled:
                continue
            # Held by another consumer: it acks soon, or it is dead and becomes claimable.
            for p in self.ledger.partitions:
                self._claim_cursor[p.index] = "0-0"
            time.sleep(min(0.2, max(0.01, self.claim_idle_ms / 1000 / 4)))
        return total

    def update_lag_metrics(self) -> list[GroupState]:
        states = [self.journal.state(p) for p in self.ledger.partitions]
        for s in states:
            self.metrics.lag.labels(str(s.partition)).set(s.unapplied)
            self.metrics.pending.labels(str(s.partition)).set(s.pending)
        return states

    def forget_idle_consumers(self, idle_ms: int = 3_600_000) -> None:
        """Drop consumers with nothing pending that have been silent an hour: each
        restart makes a new name, and the list would only grow."""
        for part in self.ledger.partitions:
            for c in self.client.xinfo_consumers(part.journal, CONSUMER_GROUP):
                if c["name"] != self.name and c["pending"] == 0 and c["idle"] > idle_ms:
                    self.client.xgroup_delconsumer(part.journal, CONSUMER_GROUP, c["name"])
