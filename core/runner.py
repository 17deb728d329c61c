"""How every ledger call reaches Redis: retries, deadlines, scripts, WAIT, pipelines, errors.

`LedgerRunner` is the one place that talks to Redis for the ledger: `Ledger`, the member
layer (`core.members`), `core.history`, `core.shifts` and `core.cashiers` are built on
its public methods. It runs the Lua functions of `core/lua/` through a
`core.scripts.ScriptRunner` (which loads the function library and calls FCALL) and adds
what a money call needs around it:

- retries with the *same* txn id under one deadline (`RetryPolicy`), following a
  Sentinel primary that moved; past the deadline `LedgerUnavailable`;
- the maxmemory-policy check before writes (an evicting Redis can delete balances);
- WAIT for replicas (`wait_replicas`) after every write;
- pipelines of many calls in one round trip;
- translation of every redis-py error and of the scripts' INVALID / TXN_CONFLICT /
  NOT_INITIALIZED replies into `core.errors`; every other reply becomes a `Result`.
"""
from __future__ import annotations

import dataclasses
import logging
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from redis.exceptions import (AskError, BusyLoadingError, ClusterDownError, ConnectionError,
                              MovedError, OutOfMemoryError, ReadOnlyError, RedisError,
                              ResponseError, TimeoutError, TryAgainError)

from .connection import check_eviction_policy, follow_primary, is_cluster
from .errors import (InvalidRequest, LedgerNotInitialized, LedgerUnavailable, NotReplicated,
                     TxnConflict)
from .keys import ack_key
from .read_cache import ReadCache
from .result import Result, Status
from .scripts import ScriptRunner, is_function_missing

# The retry warnings keep the logger name they always had: operators and
# reconcile_service/logs.py filter on "core.ledger".
log = logging.getLogger("core.ledger")

EVICTION_CHECK_INTERVAL_S = 300.0

STATUS_BY_NAME = {s.value: s for s in Status}
# the replies that are decisions (Result); INVALID, TXN_CONFLICT, NOT_INITIALIZED raise
DECIDED = {name: s for name, s in STATUS_BY_NAME.items() if name not in ("INVALID", "TXN_CONFLICT", "NOT_INITIALIZED")}

# Result(...) of every answer, at half the cost of the frozen dataclass's __init__ (which
# sets each field through object.__setattr__): the slots' own setters, in field order.
# deduct_many decodes 100 answers per batch; the fields are checked here at import.
_RESULT_SETTERS = tuple(getattr(Result, f.name).__set__ for f in dataclasses.fields(Result))
assert [f.name for f in dataclasses.fields(Result)] == ["status", "balance_minor", "replayed", "txn_id",
                                                        "account_id", "kind", "amount_minor", "journal_id",
                                                        "debt_minor"]
_SET_STATUS, _SET_BALANCE, _SET_REPLAYED, _SET_TXN, _SET_ACCOUNT, _SET_KIND, _SET_AMOUNT, _SET_JOURNAL, _SET_DEBT = \
    _RESULT_SETTERS


def new_result(status, balance_minor, replayed, txn_id, account_id, kind, amount_minor, journal_id,
               debt_minor: int = 0) -> Result:
    """Result(...) with its fields in order, built without the frozen dataclass's __init__."""
    result = object.__new__(Result)
    _SET_STATUS(result, status)
    _SET_BALANCE(result, balance_minor)
    _SET_REPLAYED(result, replayed)
    _SET_TXN(result, txn_id)
    _SET_ACCOUNT(result, account_id)
    _SET_KIND(result, kind)
    _SET_AMOUNT(result, amount_minor)
    _SET_JOURNAL(result, journal_id)
    _SET_DEBT(result, debt_minor)
    return result


# Errors after which the request may or may not have run: retrying with the same
# txn id is safe because the script is idempotent.
RETRYABLE = (ConnectionError, TimeoutError, BusyLoadingError, ClusterDownError,
             TryAgainError, ReadOnlyError, NotReplicated)


def is_retryable_response(exc: ResponseError) -> bool:
    text = str(exc)
    # NOREPLICAS: a primary with min-replicas-to-write that lost its replicas (cut off from
    # them, or just demoted by Sentinel) refuses a script at its first write, before
    # anything changed: retrying (after asking the sentinels again) is safe
    return text.startswith(("BUSY", "LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS"))


def as_ledger_error(exc: RedisError, txn_id: str | None, where: str) -> LedgerUnavailable:
    """What a caller gets for a Redis error that retrying does not cure: never the raw
    redis-py exception, always a `LedgerUnavailable` carrying the txn id.

    Out of memory (maxmemory reached under noeviction): Redis refuses a script at its
    first write, so nothing of it was written and nothing was decided; the same txn id
    applies once memory is freed. Any other error: the outcome is unknown."""
    if isinstance(exc, OutOfMemoryError):
        error = LedgerUnavailable(
            f"Redis at {where} is out of memory (maxmemory reached, policy noeviction) and refused "
            "the change: nothing was written. Free memory or raise maxmemory, then retry with the "
            "same txn id")
        error.txn_id = txn_id
        return error
    return LedgerUnavailable(f"Redis at {where} refused the call ({type(exc).__name__}: {exc})", txn_id)


def reply_status(reply) -> str:
    """The status of a script's reply in either shape (see `decode`)."""
    return reply.split("|", 1)[0] if type(reply) is str else reply[0]


def decode(reply, kind: str, account_id: str, amount_minor: int, txn_id: str) -> Result:
    """A script's reply as a `Result`, or the exception of a request that was not decided
    (INVALID, TXN_CONFLICT, NOT_INITIALIZED). The reply is one string
    'status|balance|replayed|detail' (decisions.lua, issue 30) or, from a script that
    builds its own, the array [status, balance, replayed, detail]: both are taken. A fifth
    element of an array (credit, offline_deduct) is the `debt_minor`."""
    debt = 0
    if type(reply) is str:
        status, balance, replayed, detail = reply.split("|", 3)
        replayed = 1 if replayed == "1" else 0
    elif len(reply) == 4:
        status, balance, replayed, detail = reply
    else:
        status, balance, replayed, detail, debt = reply[:5]
    if status == "INVALID":
        field, _, reason = detail.partition(": ")
        raise InvalidRequest(field, reason)
    if status == "TXN_CONFLICT":
        requested = f"{kind}|{account_id}|{amount_minor}"
        raise TxnConflict(txn_id, detail, requested)
    if status == "NOT_INITIALIZED":
        raise LedgerNotInitialized(f"the journal of account {account_id!r}'s partition is missing")
    return new_result(STATUS_BY_NAME[status], int(balance), replayed == 1, txn_id, account_id, kind,
                      amount_minor, detail, int(debt))


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter, bounded by `deadline_s` for the whole call."""
    deadline_s: float = 5.0
    first_delay_s: float = 0.02
    max_delay_s: float = 0.5

    def delay_s(self, attempt: int) -> float:
        return min(self.max_delay_s, self.first_delay_s * 2 ** attempt) * random.uniform(0.5, 1.0)


class LedgerRunner:
    """Runs the ledger's Redis calls on one client (standalone, Sentinel or Cluster).

    scripts: the function library (`core.scripts.ScriptRunner`; one is loaded if None).
    retry: the bound on retries of one call. wait_replicas / wait_timeout_ms: WAIT after
        every write (see `Ledger`). allow_evicting_policy: FOR TESTS ONLY.
    read_cache: the owner's display cache; every write through `call` drops its account.
    url_for_logs: where Redis is, as messages may show it (no password).
    """

    def __init__(self, client, *, scripts: ScriptRunner | None = None, retry: RetryPolicy | None = None,
                 wait_replicas: int = 0, wait_timeout_ms: int = 200, allow_evicting_policy: bool = False,
                 read_cache: ReadCache | None = None, url_for_logs: str = "redis"):
        if isinstance(wait_replicas, bool) or not isinstance(wait_replicas, int) or wait_replicas < 0:
            raise InvalidRequest("wait_replicas", "must be a whole number >= 0")
        if isinstance(wait_timeout_ms, bool) or not isinstance(wait_timeout_ms, int) or wait_timeout_ms < 1:
            raise InvalidRequest("wait_timeout_ms", "must be a whole number of milliseconds >= 1")
        self.client = client
        self.scripts = scripts or ScriptRunner()
        self.retry = retry or RetryPolicy()
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
        self.allow_evicting_policy = allow_evicting_policy
        self.read_cache = read_cache or ReadCache()
        self.url_for_logs = url_for_logs
        self._policy_checked_at = float("-inf")

    # ---------------------------------------------------------------- retries

    def with_retry(self, fn: Callable, *args, txn_id: str | None):
        """fn(*args), retried on errors after which retrying is safe, until the deadline.
        Raises LedgerUnavailable (never a redis-py exception) when it cannot answer."""
        deadline = time.monotonic() + self.retry.deadline_s
        attempt = 0
        while True:
            try:
                return fn(*args)
            except RETRYABLE as exc:
                # first: ClusterDownError, TryAgainError and ReadOnlyError are ResponseErrors
                # whose text redis-py has stripped of the CLUSTERDOWN/TRYAGAIN/READONLY code
                error: Exception = exc
            except ResponseError as exc:
                if not is_retryable_response(exc):
                    raise as_ledger_error(exc, txn_id, self.url_for_logs) from exc
                error = exc
            except RedisError as exc:      # anything else of redis-py's: never leaks to callers
                raise as_ledger_error(exc, txn_id, self.url_for_logs) from exc
            # on Sentinel: the primary may have moved; the next attempt asks the sentinels
            follow_primary(self.client)
            delay = self.retry.delay_s(attempt)
            attempt += 1
            if time.monotonic() + delay > deadline:
                raise LedgerUnavailable(
                    f"Redis at {self.url_for_logs} did not answer within {self.retry.deadline_s:g} s "
                    f"({type(error).__name__}: {error})", txn_id) from error
            log.warning("redis call failed (%s), retry %d in %.3f s, txn %s",
                        type(error).__name__, attempt, delay, txn_id)
            time.sleep(delay)

    def as_ledger_error(self, exc: RedisError, txn_id: str | None) -> LedgerUnavailable:
        """`as_ledger_error` naming this runner's Redis."""
        return as_ledger_error(exc, txn_id, self.url_for_logs)

    # ---------------------------------------------------------------- the eviction check

    def check_policy(self, *, txn_id: str | None = None) -> None:
        """Refuse (UnsafeRedisConfig) a Redis that may evict keys; asked at most every
        EVICTION_CHECK_INTERVAL_S, under the retry policy."""
        if time.monotonic() - self._policy_checked_at >= EVICTION_CHECK_INTERVAL_S:
            self.with_retry(self._check_policy_now, txn_id=txn_id)

    def _check_policy_now(self) -> None:
        now = time.monotonic()
        if self.allow_evicting_policy:
            self._policy_checked_at = now
            return
        if now - self._policy_checked_at >= EVICTION_CHECK_INTERVAL_S:
            check_eviction_policy(self.client)
            self._policy_checked_at = now

    # ---------------------------------------------------------------- scripts

    def script(self, name: str, keys: Sequence[str], args: Sequence[Any]):
        """Run a writing script once (no retry); with wait_replicas, answer only once
        replicas hold it."""
        if not self.wait_replicas:
            return self.scripts.call(self.client, name, keys, args)
        reply = self.pipeline(self.node_client(keys[0]), [(keys, args)], name)[0]
        if isinstance(reply, Exception):
            raise reply
        return reply

    def call_once(self, name: str, keys: Sequence[str], args: Sequence[Any]):
        """Run a script once, without retries, WAIT or the eviction check: the raw reply,
        and redis-py's own exceptions (for callers that handle those themselves)."""
        return self.scripts.call(self.client, name, keys, args)

    def call(self, name: str, keys: Sequence[str], args: Sequence[Any], *, txn_id: str | None,
             account_id: str = ""):
        """Run a writing script under the retry policy (after the eviction check) and answer
        its raw reply. `account_id`: the account it writes, dropped from the read cache."""
        if time.monotonic() - self._policy_checked_at >= EVICTION_CHECK_INTERVAL_S:
            self.with_retry(self._check_policy_now, txn_id=txn_id)
        try:
            return self.with_retry(self.script, name, keys, args, txn_id=txn_id)
        finally:
            if account_id and self.read_cache.enabled:     # off unless configured
                self.read_cache.invalidate(account_id)

    def run(self, name: str, kind: str, keys: Sequence[str], args: Sequence[Any],
            account_id: str, amount_minor: int, txn_id: str) -> Result:
        """`call`, its reply decoded as the `Result` of `kind` (see `decode`)."""
        return decode(self.call(name, keys, args, txn_id=txn_id, account_id=account_id),
                      kind, account_id, amount_minor, txn_id)

    def read_script(self, name: str, keys: Sequence[str], args: Sequence[Any]):
        """Run a read-only script under the retry policy."""
        return self.with_retry(self.scripts.call, self.client, name, keys, args, txn_id=None)

    def node_client(self, key: str):
        """The client of the node owning `key` (the client itself on a standalone Redis)."""
        return self.client.get_node_from_key(key).redis_connection if is_cluster(self.client) else self.client

    # ---------------------------------------------------------------- pipelines

    def pipeline(self, client, batch: Sequence[tuple[Sequence[str], Sequence[Any]]],
                 name: str = "deduct") -> list:
        """Run `name` for each (keys, args) of `batch` on one connection, in one round trip.

        Answers one reply per item; an item Redis refused on its own (out of memory, a
        script error) is answered by its exception instance. Errors that concern the
        whole connection or topology (connection lost, BUSY, LOADING, moved slots, ...)
        raise, and the caller retries the batch with the same txn ids.

        With wait_replicas the pipeline ends with INCR of a key in the first key's slot
        and WAIT: the INCR moves this connection's replication offset to "now", so WAIT
        also covers a replay whose original write came through another connection.
        """
        function = self.scripts.function(name)
        for _ in range(2):
            pipe = client.pipeline(transaction=False)
            for keys, args in batch:
                pipe.fcall(function, len(keys), *keys, *args)
            if self.wait_replicas:
                pipe.incr(ack_key(batch[0][0][0]))
                pipe.execute_command("WAIT", self.wait_replicas, self.wait_timeout_ms)
            replies = pipe.execute(raise_on_error=False)
            errors = [r for r in replies if isinstance(r, Exception)]    # usually none: one pass
            if not any(is_function_missing(r) for r in errors):
                break
            # then re-run: replays answer the ones that ran
            self.scripts.load(client, self.scripts[name])
        for reply in errors:
            if isinstance(reply, (MovedError, AskError)) and is_cluster(self.client):
                self.client.nodes_manager.initialize()   # slots moved: learn the layout, retry
                raise ClusterDownError(str(reply))
            if isinstance(reply, RETRYABLE) or (isinstance(reply, ResponseError) and is_retryable_response(reply)):
                raise reply
        if self.wait_replicas:
            confirmed = replies[-1]
            if any(isinstance(r, Exception) for r in replies[-2:]):
                # the INCR or the WAIT itself failed: nothing says the batch is replicated
                raise NotReplicated(f"INCR/WAIT failed: {next(r for r in replies[-2:] if isinstance(r, Exception))}")
            replies = replies[:-2]
            if confirmed < self.wait_replicas:
                raise NotReplicated(f"{confirmed} of {self.wait_replicas} replicas confirmed "
                                    f"within {self.wait_timeout_ms} ms")
        return replies

    def run_batched(self, name: str, batch: Sequence[tuple[Sequence[str], Sequence[Any]]],
                    items_per_call: int) -> list:
        """Replies of `name` for each (keys, args) of `batch`, in its order, through
        `<name>_batch` calls (the script's `--@batch`): per partition (one slot) one call of
        up to `items_per_call` items, all in one pipeline, or one pipeline per node on a
        Cluster (redis-py's ClusterPipeline refuses FCALL, so the runner groups by node).

        An item that failed on its own is answered by its error, as in a pipeline of
        single calls. A call that Redis refused as a whole before it started (out of
        memory) is run again item by item, so each item gets its own reply or error."""
        if not is_cluster(self.client):
            return self._run_batches_on(self.client, name, batch, items_per_call)
        by_node: dict[str, tuple[Any, list[int]]] = {}
        for pos, (keys, _) in enumerate(batch):
            node = self.client.get_node_from_key(keys[0])
            by_node.setdefault(node.name, (node, []))[1].append(pos)
        replies: list = [None] * len(batch)
        for node, positions in by_node.values():
            node_replies = self._run_batches_on(node.redis_connection, name, [batch[p] for p in positions],
                                                items_per_call)
            for p, reply in zip(positions, node_replies):
                replies[p] = reply
        return replies

    def _run_batches_on(self, client, name: str, batch, items_per_call: int) -> list:
        """`run_batched` on one connection."""
        groups: dict[str, list[int]] = {}
        for pos, (keys, _) in enumerate(batch):
            groups.setdefault(keys[0][:keys[0].index("}") + 1], []).append(pos)
        calls: list[tuple[list[int], list[str], list[Any]]] = []
        for positions in groups.values():
            for start in range(0, len(positions), items_per_call):
                chunk = positions[start:start + items_per_call]
                keys: list[str] = []
                args: list[Any] = []
                for p in chunk:
                    keys += batch[p][0]
                    args += batch[p][1]
                calls.append((chunk, keys, args))
        replies: list = [None] * len(batch)
        call_replies = self.pipeline(client, [(keys, args) for _, keys, args in calls], f"{name}_batch")
        for (chunk, _, _), reply in zip(calls, call_replies):
            if isinstance(reply, Exception):
                reply = self.pipeline(client, [batch[p] for p in chunk], name)
            for p, item in zip(chunk, reply):
                replies[p] = item
        return replies
