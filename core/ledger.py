"""The Ledger: the one way balances change.

Each method validates its input (raising `InvalidRequest` before anything is sent),
runs one Lua script that checks, changes, records the decision under the txn id and
journals the change atomically, and answers a `Result`. Connection failures are
retried with the *same* txn id under one deadline; when the deadline passes the
caller gets `LedgerUnavailable` and must retry later with the same txn id (the
terminal's outbox does exactly that).
"""
from __future__ import annotations

import logging
import random
import time
import zlib
from dataclasses import dataclass
from typing import Any, Sequence

from redis.exceptions import (AskError, BusyLoadingError, ClusterDownError, ConnectionError,
                              MovedError, NoScriptError, ReadOnlyError, ResponseError,
                              TimeoutError, TryAgainError)

from . import validation as v
from .connection import check_eviction_policy, connect, is_cluster, redacted
from .errors import (AccountNotFound, InvalidRequest, LedgerError, LedgerNotInitialized,
                     LedgerUnavailable, TxnConflict)
from .read_cache import ReadCache
from .keys import (CONSUMER_GROUP, MAX_SHARDS, META_KEY, KeySchema, Partition, internal_id,
                   parse_shard_id, shard_id)
from .result import Result, Status
from .scripts import ScriptRunner

log = logging.getLogger(__name__)

DEFAULT_RETENTION_S = 7 * 86400
DEFAULT_PARTITIONS_STANDALONE = 1
DEFAULT_PARTITIONS_CLUSTER = 16
EVICTION_CHECK_INTERVAL_S = 300.0
# A settled transfer's in-flight record is forgotten only once its receipt is this old,
# so that a balance() read running across the two halves never misses the money.
SETTLE_GRACE_MS = 5000
_ROUTE_STATUSES = ("SPLIT", "CHECK_SHARDS")


class _SplitRoute(Exception):
    """A root script answered SPLIT or CHECK_SHARDS: the operation goes to the shards."""

    def __init__(self, status: str, shards: int):
        self.status, self.shards = status, shards
        super().__init__(status)

_STATUS_BY_NAME = {s.value: s for s in Status}


def status_of(stored: str | None) -> str | None:
    """The status of an idempotency record's 's' field (APPLIED is stored as 'A')."""
    return "APPLIED" if stored == "A" else stored


class NotReplicated(Exception):
    """WAIT returned fewer replicas than required: the change is not yet safe."""


# Errors after which the request may or may not have run: retrying with the same
# txn id is safe because the script is idempotent.
_RETRYABLE = (ConnectionError, TimeoutError, BusyLoadingError, ClusterDownError,
              TryAgainError, ReadOnlyError, NotReplicated)


def _is_retryable_response(exc: ResponseError) -> bool:
    text = str(exc)
    return text.startswith(("BUSY", "LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN"))


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter, bounded by `deadline_s` for the whole call."""
    deadline_s: float = 5.0
    first_delay_s: float = 0.02
    max_delay_s: float = 0.5

    def delay_s(self, attempt: int) -> float:
        return min(self.max_delay_s, self.first_delay_s * 2 ** attempt) * random.uniform(0.5, 1.0)


@dataclass(frozen=True, slots=True)
class DeductRequest:
    """One deduction of a `Ledger.deduct_many` batch (same fields as `Ledger.deduct`)."""
    account_id: str
    amount_minor: int
    txn_id: str
    terminal_id: str | None = None
    cashier_id: str | None = None


@dataclass(frozen=True, slots=True)
class AccountInfo:
    account_id: str
    balance_minor: int
    status: str                 # 'active' or 'frozen'
    created_ms: int
    last_journal_id: str
    holder_name: str = ""       # as given at open_account ('' when none)


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One applied change, as the core scripts wrote it to the journal."""
    journal_id: str
    partition: int
    txn_id: str
    kind: str
    account_id: str
    amount_minor: int           # signed: negative for deductions
    balance_after_minor: int
    terminal_id: str
    cashier_id: str
    occurred_ms: int
    original_txn_id: str
    hold_minor: int = 0         # kind 'hold': the amount reserved
    expires_ms: int = 0         # kind 'hold': when the hold lapses (server ms)
    root_id: str = ""           # split accounts: the account a shard ('A#k') belongs to ('' otherwise)
    peer_id: str = ""           # xfer_out: the destination; xfer_in: the source
    transfer_id: str = ""       # xfer_out / xfer_in: the transfer both halves share
    shards: int = 0             # split / merge: the shard count
    holder_name: str = ""       # open / restore: the account holder's name, when given

    @classmethod
    def from_fields(cls, journal_id: str, partition: int, f: dict[str, str]) -> "JournalEntry":
        """Raises KeyError/ValueError on a malformed entry (the reconcile service quarantines those)."""
        return cls(journal_id, partition, f["txn"], f["kind"], f["acct"], int(f["amt"]),
                   int(f["bal"]), f.get("term", ""), f.get("cash", ""), int(f["ts"]),
                   f.get("orig", ""), int(f.get("held", 0)), int(f.get("exp", 0)),
                   f.get("root", ""), f.get("peer", ""), f.get("xfer", ""), int(f.get("shards", 0)),
                   f.get("name", ""))

    @property
    def account_root(self) -> str:
        """The account this entry counts towards: root_id for a shard's entry, else account_id."""
        return self.root_id or self.account_id


class Ledger:
    """Balance operations on one central Redis (standalone or Cluster).

    retention_s: how long the first decision of a txn id is kept (default 7 days).
        A retry after that is treated as a new request; if it applies again the
        reconcile service finds the duplicate txn id and reverses it. Refunds name
        their original within the same window.
    retry: the bound on retries of one call (see `RetryPolicy`).
    auto_init: create the ledger's streams on a Redis that has none. Terminals in
        production pass False so that a Redis that lost its data is never mistaken
        for a new one.
    allow_evicting_policy: FOR TESTS ONLY: skip the maxmemory-policy check.
    wait_replicas / wait_timeout_ms: acknowledge a change only once this many replicas
        hold it (WAIT after every write; default 0: off). Closes the window in which a
        primary that dies right after answering takes an acknowledged change with it
        (asynchronous replication, see docs/reliability.md). When the replicas do not
        confirm in time the call is retried with the same txn id and, past the
        deadline, raises LedgerUnavailable: the outcome is unknown, never "approved".
    read_cache_max_age_s: let balance()/available()/account() answer from a per-process
        cache up to this old (default 0: off). For display only; see `core.read_cache`.
    """

    def __init__(self, client, *, retention_s: int = DEFAULT_RETENTION_S,
                 retry: RetryPolicy | None = None, auto_init: bool = True,
                 partitions: int | None = None, allow_evicting_policy: bool = False,
                 scripts: ScriptRunner | None = None, read_cache_max_age_s: float = 0.0,
                 read_cache_max_entries: int = 10_000, wait_replicas: int = 0,
                 wait_timeout_ms: int = 200):
        self.client = client
        self.retention_s = v.check_retention(retention_s)
        self.retry = retry or RetryPolicy()
        self.auto_init = auto_init
        self._requested_partitions = partitions
        self.allow_evicting_policy = allow_evicting_policy
        self.scripts = scripts or ScriptRunner()
        self._schema: KeySchema | None = None
        self._policy_checked_at = float("-inf")
        self.read_cache = ReadCache(read_cache_max_age_s, read_cache_max_entries)
        if isinstance(wait_replicas, bool) or not isinstance(wait_replicas, int) or wait_replicas < 0:
            raise InvalidRequest("wait_replicas", "must be a whole number >= 0")
        if isinstance(wait_timeout_ms, bool) or not isinstance(wait_timeout_ms, int) or wait_timeout_ms < 1:
            raise InvalidRequest("wait_timeout_ms", "must be a whole number of milliseconds >= 1")
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
        # accounts this process knows to be split (shard count) or recently merged (0);
        # every other account is taken as plain until its root script says otherwise
        self._split_accounts: dict[str, int] = {}
        self.settle_grace_ms = SETTLE_GRACE_MS

    @classmethod
    def from_url(cls, url: str, *, socket_timeout_s: float = 2.0, **kwargs) -> "Ledger":
        """A ledger on the Redis at `url` (see `core.connection` for the URL forms)."""
        ledger = cls(connect(url, socket_timeout_s=socket_timeout_s), **kwargs)
        ledger.url_for_logs = redacted(url)
        return ledger

    url_for_logs = "redis"

    def close(self) -> None:
        self.client.close()

    # ---------------------------------------------------------------- setup

    @property
    def schema(self) -> KeySchema:
        if self._schema is None:
            self._schema = self._with_retry(self._load_schema, txn_id=None)
        return self._schema

    @property
    def partitions(self) -> tuple[Partition, ...]:
        return self.schema.all

    def _load_schema(self) -> KeySchema:
        stored = self.client.hget(META_KEY, "partitions")
        if stored is None:
            if not self.auto_init:
                raise LedgerNotInitialized("no cs:meta key")
            return self.init()
        return KeySchema(int(stored))

    def init(self, partitions: int | None = None) -> KeySchema:
        """Create the ledger on this Redis: settings, journal streams and consumer groups.

        Idempotent, and safe when several processes do it at once: the first
        partition count written wins and is never changed afterwards.
        """
        wanted = partitions or self._requested_partitions or (
            DEFAULT_PARTITIONS_CLUSTER if is_cluster(self.client) else DEFAULT_PARTITIONS_STANDALONE)
        self.client.hsetnx(META_KEY, "partitions", wanted)
        self.client.hsetnx(META_KEY, "created_ms", int(time.time() * 1000))
        return self.prepare_partitions(int(self.client.hget(META_KEY, "partitions")))

    def prepare_partitions(self, partitions: int) -> KeySchema:
        """Create the journal streams and consumer groups of `partitions` partitions and
        load the scripts, *without* writing cs:meta.

        A restore uses this: it rebuilds balances first and writes cs:meta last, so
        terminals (auto_init=False) keep seeing "not initialised" instead of declining
        sales on accounts that are not back yet.
        """
        schema = KeySchema(partitions)
        for part in schema.all:
            try:
                # Group at 0 so that the reconcile service sees every entry ever written.
                self.client.xgroup_create(part.journal, CONSUMER_GROUP, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        self.scripts.load_all(self.client)
        self._schema = schema
        return schema

    def _check_policy(self) -> None:
        now = time.monotonic()
        if self.allow_evicting_policy:
            self._policy_checked_at = now
            return
        if now - self._policy_checked_at >= EVICTION_CHECK_INTERVAL_S:
            check_eviction_policy(self.client)
            self._policy_checked_at = now

    # ---------------------------------------------------------------- running scripts

    def _with_retry(self, fn, *args, txn_id: str | None):
        deadline = time.monotonic() + self.retry.deadline_s
        attempt = 0
        while True:
            try:
                return fn(*args)
            except ResponseError as exc:
                if not _is_retryable_response(exc):
                    raise
                error: Exception = exc
            except _RETRYABLE as exc:
                error = exc
            delay = self.retry.delay_s(attempt)
            attempt += 1
            if time.monotonic() + delay > deadline:
                raise LedgerUnavailable(
                    f"Redis at {self.url_for_logs} did not answer within {self.retry.deadline_s:g} s "
                    f"({type(error).__name__}: {error})", txn_id) from error
            log.warning("redis call failed (%s), retry %d in %.3f s, txn %s",
                        type(error).__name__, attempt, delay, txn_id)
            time.sleep(delay)

    def _script(self, name: str, keys: Sequence[str], args: Sequence[Any]):
        """Run a writing script; with wait_replicas, answer only once replicas hold it."""
        if not self.wait_replicas:
            return self.scripts.call(self.client, name, keys, args)
        return self._run_pipeline(self._node_client(keys[0]), [(keys, args)], name)[0]

    def _node_client(self, key: str):
        """The client of the node owning `key` (the client itself on a standalone Redis)."""
        return self.client.get_node_from_key(key).redis_connection if is_cluster(self.client) else self.client

    def _run(self, script: str, kind: str, keys: Sequence[str], args: Sequence[Any],
             account_id: str, amount_minor: int, txn_id: str) -> Result:
        if time.monotonic() - self._policy_checked_at >= EVICTION_CHECK_INTERVAL_S:
            self._with_retry(self._check_policy, txn_id=txn_id)
        try:
            reply = self._with_retry(self._script, script, keys, args, txn_id=txn_id)
        finally:
            self.read_cache.invalidate(account_id)
        return self._decode(reply, kind, account_id, amount_minor, txn_id)

    @staticmethod
    def _decode(reply, kind: str, account_id: str, amount_minor: int, txn_id: str) -> Result:
        status, balance, replayed, detail = reply
        if status in _ROUTE_STATUSES:
            raise _SplitRoute(status, int(detail or 0))
        if status == "INVALID":
            field, _, reason = detail.partition(": ")
            raise InvalidRequest(field, reason)
        if status == "TXN_CONFLICT":
            requested = f"{kind}|{account_id}|{amount_minor}"
            raise TxnConflict(txn_id, detail, requested)
        if status == "NOT_INITIALIZED":
            raise LedgerNotInitialized(f"the journal of account {account_id!r}'s partition is missing")
        return Result(_STATUS_BY_NAME[status], int(balance), bool(replayed), txn_id, account_id, kind,
                      amount_minor, detail)

    def _common(self, account_id, txn_id, terminal_id, cashier_id) -> Partition:
        v.check_id(account_id, "account_id")
        v.check_id(txn_id, "txn_id")
        v.check_id(terminal_id, "terminal_id", optional=True)
        v.check_id(cashier_id, "cashier_id", optional=True)
        return self.schema.partition_of(account_id)

    def _balance_op(self, script: str, account_id: str, amount_minor: int, txn_id: str,
                    terminal_id: str | None, cashier_id: str | None, *, allow_zero: bool = False,
                    extra_keys: Sequence[str] = (), extra_args: Sequence[str] = (),
                    kind: str | None = None, max_minor: int = v.MAX_AMOUNT_MINOR) -> Result:
        field = {"open_account": "initial_minor", "restore_account": "balance_minor"}.get(script, "amount_minor")
        v.check_amount(amount_minor, field, allow_zero=allow_zero, max_minor=max_minor)
        part = self._common(account_id, txn_id, terminal_id, cashier_id)
        keys = [part.account(account_id), part.txn(txn_id), part.journal, *extra_keys]
        args = [txn_id, account_id, amount_minor, self.retention_s, terminal_id or "",
                cashier_id or "", *extra_args]
        return self._run(script, kind or script, keys, args, account_id, amount_minor, txn_id)

    # ---------------------------------------------------------------- operations

    def open_account(self, account_id: str, *, txn_id: str, initial_minor: int = 0,
                     terminal_id: str | None = None, cashier_id: str | None = None,
                     holder_name: str | None = None) -> Result:
        """Create an account. An existing id with a new txn id -> Status.ACCOUNT_EXISTS.

        `holder_name` (optional, up to 64 characters of any script) is what the till
        shows next to the balance; it is journaled with the opening entry.
        """
        holder = v.check_holder_name(holder_name)
        part = self.schema.partition_of(account_id) if isinstance(account_id, str) else None
        extra = [part.accounts] if part else []
        return self._balance_op("open_account", account_id, initial_minor, txn_id, terminal_id,
                                cashier_id, allow_zero=True, extra_keys=extra, kind="open",
                                extra_args=[holder])

    def deduct(self, account_id: str, amount_minor: int, *, txn_id: str,
               terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Take money when the available balance (balance - active holds) covers it,
        else Status.INSUFFICIENT_FUNDS. On a split account see `split_account`."""
        if account_id in self._split_accounts:
            return self._split_spend("deduct", account_id, amount_minor, txn_id, terminal_id, cashier_id)
        try:
            return self._balance_op("deduct", account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                    extra_keys=self._hold_keys(account_id))
        except _SplitRoute as route:
            self._split_accounts[account_id] = route.shards if route.status == "SPLIT" else 0
            return self._split_spend("deduct", account_id, amount_minor, txn_id, terminal_id, cashier_id)

    def _hold_keys(self, account_id) -> list[str]:
        if not isinstance(account_id, str):
            return []                      # validation will refuse it
        part = self.schema.partition_of(account_id)
        return [part.holds(account_id), part.hold_expiries(account_id)]

    # ---------------------------------------------------------------- holds

    def hold(self, account_id: str, amount_minor: int, *, txn_id: str, ttl_s: int,
             terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Reserve funds for up to `ttl_s` seconds (at most the retention).

        The balance stays; the available balance drops. `Result.balance_minor` is the
        available balance after the hold. Resolve it with `capture` or `void`; if
        neither comes it stops counting at its expiry by itself.
        """
        if isinstance(ttl_s, bool) or not isinstance(ttl_s, int) or not 1 <= ttl_s <= self.retention_s:
            raise InvalidRequest("ttl_s", f"must be whole seconds from 1 to the retention ({self.retention_s})")
        if account_id in self._split_accounts:
            return self._split_spend("hold", account_id, amount_minor, txn_id, terminal_id, cashier_id, ttl_s)
        try:
            return self._balance_op("hold", account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                    extra_keys=self._hold_keys(account_id), extra_args=[ttl_s])
        except _SplitRoute as route:
            self._split_accounts[account_id] = route.shards if route.status == "SPLIT" else 0
            return self._split_spend("hold", account_id, amount_minor, txn_id, terminal_id, cashier_id, ttl_s)

    def capture(self, hold_txn_id: str, amount_minor: int, *, txn_id: str,
                account_id: str | None = None, terminal_id: str | None = None,
                cashier_id: str | None = None) -> Result:
        """Take up to the held amount; the rest of the hold is released. A hold resolves once.

        `account_id` is optional: without it the hold is looked up (one extra read).
        """
        return self._resolve_hold("capture", hold_txn_id, amount_minor, txn_id, account_id,
                                  terminal_id, cashier_id)

    def void(self, hold_txn_id: str, *, txn_id: str, account_id: str | None = None,
             terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Release a hold without taking anything."""
        return self._resolve_hold("void", hold_txn_id, 0, txn_id, account_id, terminal_id, cashier_id)

    def _resolve_hold(self, script, hold_txn_id, amount_minor, txn_id, account_id, terminal_id,
                      cashier_id) -> Result:
        v.check_id(hold_txn_id, "hold_txn_id")
        v.check_id(txn_id, "txn_id")
        if account_id is None:
            account_id = self.hold_account(hold_txn_id)
            if account_id is None:
                return Result(Status.HOLD_NOT_FOUND, 0, False, txn_id, "", script, amount_minor)
            parsed = parse_shard_id(account_id)
            if parsed:                      # a hold on a shard: resolve it through the root id
                account_id = parsed[0]
        if account_id in self._split_accounts:
            return self._split_resolve_hold(script, hold_txn_id, amount_minor, txn_id, account_id,
                                            terminal_id, cashier_id)
        try:
            return self._resolve_hold_on(account_id, script, hold_txn_id, amount_minor, txn_id,
                                         terminal_id, cashier_id)
        except _SplitRoute as route:
            self._split_accounts[account_id] = route.shards if route.status == "SPLIT" else 0
            return self._split_resolve_hold(script, hold_txn_id, amount_minor, txn_id, account_id,
                                            terminal_id, cashier_id)

    def _resolve_hold_on(self, account_id, script, hold_txn_id, amount_minor, txn_id, terminal_id,
                         cashier_id, *, routed: str = "", sub_id: str | None = None) -> Result:
        """capture.lua / void.lua on the account itself, or on its sub-balance `sub_id`."""
        if sub_id is None:
            part = self.schema.partition_of(account_id) if isinstance(account_id, str) else None
            extra = [*self._hold_keys(account_id), part.txn(hold_txn_id)] if part else []
            return self._balance_op(script, account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                    allow_zero=script == "void", extra_keys=extra,
                                    extra_args=[hold_txn_id, routed])
        part = self.schema.partition_of(sub_id)
        keys = [part.account(sub_id), part.sub_txn(sub_id, txn_id), part.journal, part.holds(sub_id),
                part.hold_expiries(sub_id), part.sub_txn(sub_id, hold_txn_id)]
        args = [txn_id, sub_id, amount_minor, self.retention_s, terminal_id or "", cashier_id or "",
                hold_txn_id, routed]
        return self._run_sub(script, script, keys, args, account_id, amount_minor, txn_id)

    def hold_account(self, hold_txn_id: str) -> str | None:
        """The account a hold was placed on, or None. Reads the hold's record in every
        partition (one pipeline): a hold id maps to one account for good, so this read
        can be done before the capture without a race. For a hold on a split account
        the answer is the shard's id ('<account_id>#<k>')."""
        v.check_id(hold_txn_id, "hold_txn_id")

        def read():
            pipe = self.client.pipeline(transaction=False)
            for part in self.partitions:
                pipe.hget(part.txn(hold_txn_id), "f")
            return pipe.execute()
        for fingerprint in self._with_retry(read, txn_id=None):
            if fingerprint and fingerprint.startswith("hold|"):
                return fingerprint.split("|")[1]

        def read_shards():     # a hold on a split account's shard: 't:<hold>#k' (s = APPLIED there)
            pipe = self.client.pipeline(transaction=False)
            for part in self.partitions:
                for k in range(MAX_SHARDS):
                    pipe.hmget(f"{part.txn(hold_txn_id)}#{k}", "f", "s")
            return pipe.execute()
        for fingerprint, status in self._with_retry(read_shards, txn_id=None):
            if fingerprint and fingerprint.startswith("hold|") and status_of(status) == "APPLIED":
                return fingerprint.split("|")[1]
        return None

    def available(self, account_id: str) -> int:
        """Balance minus active holds, in minor units. Raises AccountNotFound."""
        return self.balances(account_id)[1]

    def balances(self, account_id: str) -> tuple[int, int]:
        """(balance, available) read at one instant."""
        v.check_id(account_id, "account_id")
        cached = self.read_cache.get("balances", account_id)
        if cached is not None:
            return cached
        part = self.schema.partition_of(account_id)
        keys = [part.account(account_id), part.holds(account_id), part.hold_expiries(account_id)]
        started = time.monotonic()
        reply = self._with_retry(self.scripts.call, self.client, "available", keys, [], txn_id=None)  # read-only
        if not reply:
            raise AccountNotFound(account_id)
        value = (int(reply[0]), int(reply[1]))
        if account_id in self._split_accounts or self._split_marks(reply[4:7]):
            view = self._split_view(account_id)
            value = (view.total_minor, view.available_minor)
        self.read_cache.put("balances", account_id, value, started)
        return value

    def expire_holds(self, account_id: str, *, limit: int = 100, terminal_id: str = "") -> int:
        """Journal the release of this account's expired holds; returns how many.

        Not needed for correctness (expired holds stop counting by themselves); the
        reconcile service calls it so the database learns of each release. Takes shard
        ids ('<account_id>#<k>') too: a split account's holds live on its shards.
        """
        if not (isinstance(account_id, str) and parse_shard_id(account_id)):
            v.check_id(account_id, "account_id")
        part = self.schema.partition_of(account_id)
        expired = self._with_retry(self.client.zrangebyscore, part.hold_expiries(account_id),
                                   "-inf", int(time.time() * 1000), 0, limit, txn_id=None)
        if not expired:
            return 0
        keys = [part.account(account_id), part.hold_expiries(account_id), part.journal,
                part.holds(account_id), part.hold_expiries(account_id),
                *(part.sub_txn(account_id, hold) for hold in expired)]
        args = ["-", account_id, "0", "", terminal_id, "", *expired]
        reply = self._with_retry(self._script, "expire_holds", keys, args, txn_id=None)
        if reply and reply[0] == "INVALID":
            raise InvalidRequest(*reply[3].split(": ", 1))
        return int(reply[0])

    def credit(self, account_id: str, amount_minor: int, *, txn_id: str,
               terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Top up an account. On a split account the credit lands on one shard, chosen
        by the txn id (so credits spread over the shards)."""
        return self._credit("credit", account_id, amount_minor, txn_id, "", terminal_id, cashier_id)

    def _credit(self, kind, account_id, amount_minor, txn_id, original, terminal_id, cashier_id) -> Result:
        if account_id in self._split_accounts:
            return self._split_credit(kind, account_id, amount_minor, txn_id, original, terminal_id,
                                      cashier_id)
        try:
            return self._balance_op("credit", account_id, amount_minor, txn_id, terminal_id,
                                    cashier_id, extra_args=[kind, original], kind=kind)
        except _SplitRoute as route:
            self._split_accounts[account_id] = route.shards if route.status == "SPLIT" else 0
            return self._split_credit(kind, account_id, amount_minor, txn_id, original, terminal_id,
                                      cashier_id)

    def compensate(self, account_id: str, amount_minor: int, *, txn_id: str,
                   original_txn_id: str, terminal_id: str | None = None,
                   cashier_id: str | None = None) -> Result:
        """A journaled correcting credit that reverses a duplicate application of
        `original_txn_id` (used by the reconcile service; allowed on frozen accounts)."""
        v.check_id(original_txn_id, "original_txn_id")
        return self._credit("compensate", account_id, amount_minor, txn_id, original_txn_id,
                            terminal_id, cashier_id)

    def refund(self, account_id: str, amount_minor: int, *, txn_id: str, original_txn_id: str,
               terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Give back (part of) an earlier deduction; partial refunds add up to at most the original."""
        v.check_id(original_txn_id, "original_txn_id")
        if original_txn_id == txn_id:
            raise InvalidRequest("original_txn_id", "must differ from txn_id")
        part = self.schema.partition_of(account_id) if isinstance(account_id, str) else None
        extra = [part.txn(original_txn_id)] if part else []
        try:
            return self._balance_op("refund", account_id, amount_minor, txn_id, terminal_id,
                                    cashier_id, extra_keys=extra, extra_args=[original_txn_id])
        except _SplitRoute as route:
            self._split_accounts[account_id] = route.shards if route.status == "SPLIT" else 0
            return self._split_refund(account_id, amount_minor, txn_id, original_txn_id, terminal_id,
                                      cashier_id)

    def freeze(self, account_id: str, *, txn_id: str, terminal_id: str | None = None,
               cashier_id: str | None = None) -> Result:
        """Stop deductions, holds and top-ups on the account (refunds and captures still go through)."""
        result = self._balance_op("freeze", account_id, 0, txn_id, terminal_id, cashier_id,
                                  allow_zero=True)
        self._propagate_status(account_id, "freeze", txn_id)
        return result

    def unfreeze(self, account_id: str, *, txn_id: str, terminal_id: str | None = None,
                 cashier_id: str | None = None) -> Result:
        result = self._balance_op("unfreeze", account_id, 0, txn_id, terminal_id, cashier_id,
                                  allow_zero=True)
        self._propagate_status(account_id, "unfreeze", txn_id)
        return result

    def restore_account(self, account_id: str, balance_minor: int, *, txn_id: str,
                        status: str = "active", holder_name: str | None = None) -> Result:
        """Recreate an account that Redis lost, from the database of record.

        Never overwrites: if the account exists in Redis the answer is ACCOUNT_EXISTS
        and nothing changes. Journaled as kind 'restore' with amount 0.
        """
        if status not in ("active", "frozen"):
            raise InvalidRequest("status", "must be active or frozen")
        holder = v.check_holder_name(holder_name)
        part = self.schema.partition_of(account_id) if isinstance(account_id, str) else None
        extra = [part.accounts] if part else []
        return self._balance_op("restore_account", account_id, balance_minor, txn_id, None, None,
                                allow_zero=True, extra_keys=extra, extra_args=[status, holder],
                                kind="restore", max_minor=v.MAX_BALANCE_MINOR)

    # ---------------------------------------------------------------- batches

    def deduct_many(self, requests: Sequence[DeductRequest]) -> list[Result | LedgerError]:
        """Run many deductions in as few round trips as the topology allows.

        Answers one item per request, in the same order. Each item is the `Result`
        the single `deduct` would give (same validation, idempotency and statuses),
        or, for a request that could not be decided, the *exception instance* that
        `deduct` would have raised (`InvalidRequest`, `TxnConflict`) placed at its
        position instead of being raised, so one bad request never drops the
        others. Check with ``isinstance(item, Result)``.

        All valid requests go out in one pipeline (on a Cluster, redis-py sends one
        pipeline per node). A connection failure retries the whole batch with the
        same txn ids, which is safe: every script is idempotent. If the deadline
        passes, `LedgerUnavailable` is raised for the batch: every outcome is unknown
        and the batch must be retried as it was.
        """
        out: list[Result | LedgerError | None] = [None] * len(requests)
        calls: list[tuple[int, list[str], list[Any], DeductRequest]] = []
        singles: list[int] = []          # requests on split accounts: decided one by one
        for i, req in enumerate(requests):
            try:
                v.check_amount(req.amount_minor, "amount_minor")
                part = self._common(req.account_id, req.txn_id, req.terminal_id, req.cashier_id)
            except InvalidRequest as exc:
                out[i] = exc
                continue
            if req.account_id in self._split_accounts:
                singles.append(i)
                continue
            keys = [part.account(req.account_id), part.txn(req.txn_id), part.journal,
                    part.holds(req.account_id), part.hold_expiries(req.account_id)]
            args = [req.txn_id, req.account_id, req.amount_minor, self.retention_s,
                    req.terminal_id or "", req.cashier_id or ""]
            calls.append((i, keys, args, req))
        if calls:
            self._with_retry(self._check_policy, txn_id=None)
            try:
                replies = self._with_retry(self._pipeline_deducts, calls, txn_id=None)
            finally:
                for _, _, _, req in calls:
                    self.read_cache.invalidate(req.account_id)
            for (i, _, _, req), reply in zip(calls, replies):
                try:
                    out[i] = self._decode(reply, "deduct", req.account_id, req.amount_minor, req.txn_id)
                except (InvalidRequest, TxnConflict) as exc:
                    out[i] = exc
                except _SplitRoute as route:
                    self._split_accounts[req.account_id] = route.shards if route.status == "SPLIT" else 0
                    singles.append(i)
        # Split accounts: each deduction visits shards in its own order (see split_account),
        # in request order, so the batch answers what the single calls would.
        for i in sorted(singles):
            req = requests[i]
            try:
                out[i] = self.deduct(req.account_id, req.amount_minor, txn_id=req.txn_id,
                                     terminal_id=req.terminal_id, cashier_id=req.cashier_id)
            except (InvalidRequest, TxnConflict) as exc:
                out[i] = exc
        return out  # type: ignore[return-value]

    def _pipeline_deducts(self, calls) -> list:
        """Replies in the order of `calls`: one pipeline, or one per node on a Cluster
        (redis-py's ClusterPipeline refuses EVALSHA, so the ledger groups by node)."""
        if not is_cluster(self.client):
            return self._run_pipeline(self.client, [(keys, args) for _, keys, args, _ in calls])
        by_node: dict[str, tuple[Any, list[int]]] = {}
        for pos, (_, keys, _, _) in enumerate(calls):
            node = self.client.get_node_from_key(keys[0])
            by_node.setdefault(node.name, (node, []))[1].append(pos)
        replies: list = [None] * len(calls)
        for node, positions in by_node.values():
            batch = [(calls[p][1], calls[p][2]) for p in positions]
            node_replies = self._run_pipeline(node.redis_connection, batch)
            for p, reply in zip(positions, node_replies):
                replies[p] = reply
        return replies

    def _run_pipeline(self, client, batch, name: str = "deduct") -> list:
        """Run `name` for each (keys, args) of `batch` on one connection, in one round trip.

        With wait_replicas the pipeline ends with INCR of a key in the first key's slot
        and WAIT: the INCR moves this connection's replication offset to "now", so WAIT
        also covers a replay whose original write came through another connection.
        """
        script = self.scripts[name]
        for _ in range(2):
            pipe = client.pipeline(transaction=False)
            for keys, args in batch:
                pipe.evalsha(script.sha, len(keys), *keys, *args)
            if self.wait_replicas:
                first_key = batch[0][0][0]
                pipe.incr(first_key[:first_key.index("}") + 1] + ":ack")
                pipe.execute_command("WAIT", self.wait_replicas, self.wait_timeout_ms)
            replies = pipe.execute(raise_on_error=False)
            if not any(isinstance(r, NoScriptError) for r in replies):
                break
            self.scripts.load(client, script)   # then re-run: replays answer the ones that ran
        for reply in replies:
            if isinstance(reply, (MovedError, AskError)) and is_cluster(self.client):
                self.client.nodes_manager.initialize()   # slots moved: learn the layout, retry
                raise ClusterDownError(str(reply))
            if isinstance(reply, Exception):
                raise reply
        if self.wait_replicas:
            confirmed = replies[-1]
            replies = replies[:-2]
            if confirmed < self.wait_replicas:
                raise NotReplicated(f"{confirmed} of {self.wait_replicas} replicas confirmed "
                                    f"within {self.wait_timeout_ms} ms")
        return replies

    # ---------------------------------------------------------------- reads

    def account(self, account_id: str) -> AccountInfo:
        """The account as Redis holds it now. Raises AccountNotFound."""
        v.check_id(account_id, "account_id")
        cached = self.read_cache.get("account", account_id)
        if cached is not None:
            return cached
        key = self.schema.partition_of(account_id).account(account_id)
        started = time.monotonic()
        bal, st, ct, lj, sh, msh, mx, nm = self._with_retry(
            self.client.hmget, key, "bal", "st", "ct", "lj", "sh", "msh", "mx", "nm", txn_id=None)
        if bal is None:
            raise AccountNotFound(account_id)
        if self._split_marks((sh, msh, mx)):
            bal = self._split_view(account_id).total_minor     # every sub-balance, and money in flight
        info = AccountInfo(account_id, int(bal), st or "active", int(ct or 0), lj or "", nm or "")
        self.read_cache.put("account", account_id, info, started)
        return info

    def accounts(self, account_ids: Sequence[str]) -> dict[str, AccountInfo | None]:
        """Many accounts in one pipeline (None for an id Redis does not hold).

        Each account's balance and last journal id are read together (one HMGET), so
        a reader can compare it with the database at that same journal position.
        These are the *raw* rows of each key, for reconciliation: shard ids
        ('<account_id>#<k>', found in the partitions' account sets) are accepted, and a
        split account's root row holds only what is left on the root (see
        `split_account`); `account()` / `balance()` give the total.
        """
        ids = [a if isinstance(a, str) and parse_shard_id(a) else v.check_id(a, "account_id")
               for a in account_ids]

        def read():
            pipe = self.client.pipeline(transaction=False)
            for a in ids:
                pipe.hmget(self.schema.partition_of(a).account(a), "bal", "st", "ct", "lj", "nm")
            return pipe.execute()
        rows = self._with_retry(read, txn_id=None) if ids else []
        return {a: (AccountInfo(a, int(bal), st or "active", int(ct or 0), lj or "", nm or "")
                    if bal is not None else None)
                for a, (bal, st, ct, lj, nm) in zip(ids, rows)}

    def account_ids(self, partition: Partition, *, page_size: int = 1000):
        """Every account id of one partition (SSCAN: no long blocking of Redis)."""
        yield from self.client.sscan_iter(partition.accounts, count=page_size)

    def balance(self, account_id: str) -> int:
        """The balance in minor units. Raises AccountNotFound for an unknown id."""
        return self.account(account_id).balance_minor

    def journal(self, account_id: str, *, count: int = 20, scan_limit: int = 10_000) -> list[JournalEntry]:
        """The most recent journal entries of one account still held in Redis, newest first.

        Entries already moved to the database and trimmed are not here: the database has them.
        Only the root's partition is scanned: a split account's shard entries live in their
        shards' partitions (`journal_entries` of those partitions, matched by `root_id`).
        """
        v.check_id(account_id, "account_id")
        part = self.schema.partition_of(account_id)
        found: list[JournalEntry] = []
        last = "+"
        scanned = 0
        while len(found) < count and scanned < scan_limit:
            page = self._with_retry(self.client.xrevrange, part.journal, last, "-", 500, txn_id=None)
            if not page:
                break
            for entry_id, fields in page:
                if fields.get("acct") == account_id:
                    found.append(JournalEntry.from_fields(entry_id, part.index, fields))
                    if len(found) == count:
                        break
            scanned += len(page)
            last = "(" + page[-1][0]
        return found

    # ---------------------------------------------------------------- split accounts

    def split_account(self, account_id: str, *, shards: int, txn_id: str,
                      terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Turn one hot account into `shards` sub-balances ('<account_id>#<k>') on other slots.

        Steps, each idempotent, so a retry with the same txn id completes whatever an
        earlier call left undone: open the shards (shard_admin.lua), mark the root split
        (split.lua, journaled 'split'), then move the root's available balance to the
        shards with transfers (journaled 'xfer_out' / 'xfer_in'). Afterwards
        deductions and holds visit the shards in an order fixed by their txn id
        (start = crc32(txn_id) % N, then the next ones), credits land on shard
        crc32(txn_id) % N; when no single shard covers an amount the total covers, the
        ledger settles transfers in flight, moves funds into the start shard and
        decides there. `balance()` / `available()` answer the total.

        Statuses: APPLIED (balance_minor = the total), ACCOUNT_NOT_FOUND, ALREADY_SPLIT,
        ACCOUNT_HAS_HOLDS (active holds on the account: resolve them first).
        """
        v.check_id(account_id, "account_id")
        v.check_id(txn_id, "txn_id")
        v.check_id(terminal_id, "terminal_id", optional=True)
        v.check_id(cashier_id, "cashier_id", optional=True)
        if len(account_id) > 61:
            raise InvalidRequest("account_id", "at most 61 characters for a split account "
                                 "(a shard id adds '#<k>' and must fit 64)")
        if isinstance(shards, bool) or not isinstance(shards, int) or not 2 <= shards <= MAX_SHARDS:
            raise InvalidRequest("shards", f"must be an int from 2 to {MAX_SHARDS}")
        self._with_retry(self._check_policy, txn_id=txn_id)
        try:
            view = self._split_view(account_id, [txn_id], count=shards)
            if view.root is not None and not view.record(account_id, txn_id) and not view.sh:
                ops = [self._shard_admin_op(account_id, k, "open", txn_id, str(shards), view.root.status)
                       for k in range(shards)]
                self._check_replies(self._pipeline(ops))
            part = self.schema.partition_of(account_id)
            keys = [part.account(account_id), part.txn(txn_id), part.journal,
                    part.holds(account_id), part.hold_expiries(account_id)]
            args = [txn_id, account_id, 0, self.retention_s, terminal_id or "", cashier_id or "", shards]
            result = self._run("split", "split", keys, args, account_id, 0, txn_id)
            if result.applied:
                view = self._split_view(account_id, count=shards)
                if view.sh:
                    self._split_accounts[account_id] = max(view.sh, view.msh)
                    self._spread_root(view, txn_id)
            return result
        finally:
            self.read_cache.invalidate(account_id)

    def merge_account(self, account_id: str, *, txn_id: str, terminal_id: str | None = None,
                      cashier_id: str | None = None) -> Result:
        """Fold a split account's sub-balances back into the root.

        Closes every shard (no new deductions, holds or credits land there), settles
        transfers in flight, moves each shard's money to the root, then marks the root
        plain again (merge.lua, journaled 'merge'). A retry with the same txn id finishes
        a merge a crash interrupted. For the retention afterwards, operations on the
        account first look for their txn id on the old shards (one extra round trip),
        so a retry of a txn decided on a shard replays.

        Statuses: APPLIED (balance_minor = the total, now all on the root),
        ACCOUNT_NOT_FOUND, NOT_SPLIT, ACCOUNT_HAS_HOLDS (active holds keep money on a
        shard; not stored: resolve them and run merge again; the shards stay closed).
        """
        v.check_id(account_id, "account_id")
        v.check_id(txn_id, "txn_id")
        v.check_id(terminal_id, "terminal_id", optional=True)
        v.check_id(cashier_id, "cashier_id", optional=True)
        self._with_retry(self._check_policy, txn_id=txn_id)
        part = self.schema.partition_of(account_id)
        keys = [part.account(account_id), part.txn(txn_id), part.journal]
        try:
            for _ in range(5):
                view = self._split_view(account_id, [txn_id])
                if view.root is None or view.record(account_id, txn_id) or not view.sh:
                    return self._run("merge", "merge", keys, [txn_id, account_id, 0, self.retention_s,
                                     terminal_id or "", cashier_id or "", 0], account_id, 0, txn_id)
                ops = [self._shard_admin_op(account_id, k, "close", txn_id)
                       for k in range(view.sh) if view.shard(k) is not None and not view.shard(k).closed]
                if ops:
                    self._check_replies(self._pipeline(ops))
                self.settle_transfers(account_id)
                view = self._split_view(account_id)
                if any(s.balance_minor > 0 for s in view.shard_subs()):
                    if any(s.balance_minor > s.available_minor for s in view.shard_subs()):
                        return Result(Status.ACCOUNT_HAS_HOLDS, view.total_minor, False, txn_id,
                                      account_id, "merge", 0)
                    continue
                reply = self._with_retry(self._script, "merge", keys,
                                         [txn_id, account_id, 0, self.retention_s, terminal_id or "",
                                          cashier_id or "", view.total_minor], txn_id=txn_id)
                if reply[0] == "MERGE_INCOMPLETE":
                    continue
                result = self._decode(reply, "merge", account_id, 0, txn_id)
                self._split_accounts[account_id] = max(view.sh, view.msh)
                return result
            raise LedgerUnavailable(f"account {account_id!r} kept changing during the merge", txn_id)
        finally:
            self.read_cache.invalidate(account_id)

    def settle_transfers(self, account_id: str) -> int:
        """Complete internal transfers of a split (or merged) account that a crash left
        half done, sweep money on closed shards to the root, and forget transfers
        received more than `settle_grace_ms` ago. Safe to run at any time, by anyone
        (the ledger runs it before every rebalancing and in merge; the reconcile service
        may run it on every split account). Returns how many second halves it applied."""
        v.check_id(account_id, "account_id")
        view = self._split_view(account_id)
        if view.root is None:
            raise AccountNotFound(account_id)
        subs = {s.id: s for s in view.subs()}
        pending = [(xid, src.id, dest, amount) for src in subs.values()
                   for xid, (amount, dest, _) in src.in_flight.items()
                   if dest not in subs or xid not in subs[dest].received]
        completed, done_unmarked = 0, []
        if pending:
            replies = self._pipeline([self._xfer_op("xfer_in", xid, src, dest, amount, account_id, "")
                                      for xid, src, dest, amount in pending])
            self._check_replies(replies)
            for (xid, src, dest, _), reply in zip(pending, replies):
                if reply[0] == "APPLIED":
                    if reply[2]:
                        done_unmarked.append((src, xid))     # received long ago, mark already gone
                    else:
                        completed += 1
        sweeps = [(internal_id("sweep", s.id, s.last_journal_id, s.available_minor), s.id, account_id,
                   s.available_minor) for s in view.shard_subs() if s.closed and s.available_minor > 0]
        if sweeps:
            self._transfer_many(account_id, sweeps, "")
        now_ms = int(time.time() * 1000)
        old = lambda ms: now_ms - ms >= self.settle_grace_ms
        clear_src: dict[str, list[str]] = {}
        clear_dest: dict[str, list[str]] = {}
        for src, xid in done_unmarked:
            clear_src.setdefault(src, []).append(xid)
        flying = set()
        for src in subs.values():
            for xid, (_, dest, _) in src.in_flight.items():
                flying.add(xid)
                ms = subs[dest].received.get(xid) if dest in subs else None
                if ms is not None and old(ms):
                    clear_src.setdefault(src.id, []).append(xid)
                    clear_dest.setdefault(dest, []).append(xid)
        for dest in subs.values():
            for xid, ms in dest.received.items():
                if xid not in flying and old(ms):
                    clear_dest.setdefault(dest.id, []).append(xid)
        for clears, key_of in ((clear_src, "in_flight"), (clear_dest, "received")):   # source first
            ops = [("script", "xfer_clear",
                    [getattr(self.schema.partition_of(sub), key_of)(sub)], sorted(set(xids)))
                   for sub, xids in clears.items()]
            if ops:
                self._check_replies(self._pipeline(ops))
        return completed

    def transfer_out_only(self, account_id: str, source_id: str, dest_id: str, amount_minor: int,
                          transfer_id: str) -> str:
        """FOR TESTS: run only the first half of a transfer (as if the process died
        before the second). Returns the xfer id; `settle_transfers` completes it."""
        xid = internal_id("test", transfer_id)
        reply = self._pipeline([self._xfer_op("xfer_out", xid, source_id, dest_id, amount_minor,
                                              account_id, "")])[0]
        self._check_replies([reply])
        if reply[0] != "APPLIED":
            raise InvalidRequest("amount_minor", f"transfer declined: {reply[0]}")
        return xid

    def split_state(self, account_id: str) -> "SplitView":
        """Every sub-balance of an account as Redis holds it now (for operators and tests)."""
        v.check_id(account_id, "account_id")
        view = self._split_view(account_id)
        if view.root is None:
            raise AccountNotFound(account_id)
        return view

    # -- internals of split accounts

    @staticmethod
    def _split_marks(marks) -> bool:
        sh, msh, mx = (m or "" for m in marks)
        return bool(sh) or (bool(msh) and int(mx or 0) > time.time() * 1000)

    def _sub_keys(self, sub_id: str) -> list[str]:
        part = self.schema.partition_of(sub_id)
        return [part.account(sub_id), part.holds(sub_id), part.hold_expiries(sub_id),
                part.in_flight(sub_id), part.received(sub_id)]

    def _split_view(self, account_id: str, txn_ids: Sequence[str] = (), *, count: int | None = None) -> "SplitView":
        """The root and shards 0..count-1 (sub_balance.lua each) and the records of
        `txn_ids` in each of their slots, in one pipeline (one per node on a Cluster).
        Reads again when the root says there are more shards than were read."""
        count = count if count is not None else self._split_accounts.get(account_id) or MAX_SHARDS
        fields = ("f", "s", "b", "j", "ph")
        while True:
            ids = [account_id] + [shard_id(account_id, k) for k in range(count)]
            ops: list[tuple] = []
            for sub in ids:
                ops.append(("script", "sub_balance", self._sub_keys(sub), []))
                part = self.schema.partition_of(sub)
                ops.extend(("hmget", part.sub_txn(sub, t), fields) for t in txn_ids)
            replies = self._pipeline(ops)
            self._check_replies(replies)
            view = SplitView(account_id)
            step = 1 + len(txn_ids)
            for i, sub in enumerate(ids):
                view.add(sub, replies[i * step], {t: dict(zip(fields, r))
                                                  for t, r in zip(txn_ids, replies[i * step + 1:(i + 1) * step])})
            wanted = max(view.sh, view.msh)
            if wanted <= count:
                return view
            count = wanted

    def _pipeline(self, ops: Sequence[tuple]) -> list:
        """Run ("script", name, keys, args) / ("hmget", key, fields) operations in one
        pipeline (one per node on a Cluster), with retries; replies in order. Every
        script is idempotent, so a retried or NOSCRIPT-repeated batch is safe."""
        def run():
            if not is_cluster(self.client):
                return self._run_ops(self.client, ops)
            by_node: dict[str, tuple[Any, list[int]]] = {}
            for pos, op in enumerate(ops):
                node = self.client.get_node_from_key(op[2][0] if op[0] == "script" else op[1])
                by_node.setdefault(node.name, (node, []))[1].append(pos)
            replies: list = [None] * len(ops)
            for node, positions in by_node.values():
                try:
                    node_replies = self._run_ops(node.redis_connection, [ops[p] for p in positions])
                except (MovedError, AskError) as exc:
                    self.client.nodes_manager.initialize()
                    raise ClusterDownError(str(exc)) from exc
                for p, reply in zip(positions, node_replies):
                    replies[p] = reply
            return replies
        return self._with_retry(run, txn_id=None) if ops else []

    def _run_ops(self, client, ops) -> list:
        for _ in range(2):
            pipe = client.pipeline(transaction=False)
            for op in ops:
                if op[0] == "script":
                    script = self.scripts[op[1]]
                    pipe.evalsha(script.sha, len(op[2]), *op[2], *op[3])
                else:
                    pipe.hmget(op[1], *op[2])
            replies = pipe.execute(raise_on_error=False)
            missing = {op[1] for op, r in zip(ops, replies) if isinstance(r, NoScriptError)}
            if not missing:
                break
            for name in missing:
                self.scripts.load(client, self.scripts[name])
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies

    @staticmethod
    def _check_replies(replies) -> None:
        for reply in replies:
            if isinstance(reply, list) and reply and reply[0] == "INVALID":
                field, _, reason = reply[3].partition(": ")
                raise InvalidRequest(field, reason)
            if isinstance(reply, list) and reply and reply[0] == "NOT_INITIALIZED":
                raise LedgerNotInitialized("a shard's journal partition is missing")

    def _shard_admin_op(self, account_id: str, k: int, op: str, origin: str, n: str = "",
                        status: str = "") -> tuple:
        sid = shard_id(account_id, k)
        part = self.schema.partition_of(sid)
        xid = internal_id(op, origin, sid)
        return ("script", "shard_admin", [part.account(sid), part.sub_txn(sid, xid), part.journal, part.accounts],
                [xid, sid, 0, self.retention_s, "", "", op, n, status, origin])

    def _xfer_op(self, script: str, xid: str, src: str, dest: str, amount_minor: int, root: str,
                 origin: str) -> tuple:
        if script == "xfer_out":
            part = self.schema.partition_of(src)
            return ("script", script, [part.account(src), part.sub_txn(src, xid), part.journal, part.holds(src),
                                       part.hold_expiries(src), part.in_flight(src)],
                    [xid, src, amount_minor, self.retention_s, "", "", dest, root, origin])
        part = self.schema.partition_of(dest)
        return ("script", script, [part.account(dest), part.sub_txn(dest, xid), part.journal, part.received(dest)],
                [xid, dest, amount_minor, self.retention_s, "", "", src, root, origin])

    def _transfer_many(self, account_id: str, moves, origin: str) -> int:
        """Both halves of each (xfer_id, source, dest, amount) move; returns the amount moved."""
        outs = self._pipeline([self._xfer_op("xfer_out", *m, account_id, origin) for m in moves])
        self._check_replies(outs)
        done = [m for m, r in zip(moves, outs) if r[0] == "APPLIED"]
        if done:
            self._check_replies(self._pipeline([self._xfer_op("xfer_in", *m, account_id, origin)
                                                for m in done]))
        return sum(m[3] for m in done)

    def _spread_root(self, view: "SplitView", origin: str) -> None:
        """Move the root's available balance to the shards in equal parts."""
        available = view.root.available_minor if view.root else 0
        if available <= 0 or not view.sh:
            return
        share, rest = divmod(available, view.sh)
        moves = []
        for k in range(view.sh):
            amount = share + (rest if k == 0 else 0)
            if amount > 0:
                sid = shard_id(view.account_id, k)
                moves.append((internal_id("split", origin, sid, amount), view.account_id, sid, amount))
        self._transfer_many(view.account_id, moves, origin)

    def _rebalance(self, view: "SplitView", target: int, amount_minor: int, origin: str) -> int:
        """Move funds from other sub-balances into shard `target` so it covers the amount,
        when the total available does. Transfer ids derive from the txn id, the source
        and the amount, so a retry that computes the same move replays it."""
        sid = shard_id(view.account_id, target)
        tgt = view.sub(sid)
        if tgt is None or tgt.closed:       # a merge is under way: the root decides, fed by the sweep
            return 0
        need = amount_minor - tgt.available_minor
        sources = sorted((s for s in view.subs() if s.id != sid and s.available_minor > 0),
                         key=lambda s: -s.available_minor)
        if need <= 0 or sum(s.available_minor for s in sources) < need:
            return 0
        moves = []
        for s in sources:
            take = min(s.available_minor, need)
            moves.append((internal_id("rebalance", origin, s.id, sid, take), s.id, sid, take))
            need -= take
            if need == 0:
                break
        return self._transfer_many(view.account_id, moves, origin)

    def _sync_status(self, view: "SplitView") -> None:
        """Copy the root's status to shards that differ (a freeze interrupted half way)."""
        op = "freeze" if view.root.status == "frozen" else "unfreeze"
        origin = internal_id("sync", view.root.last_journal_id)
        ops = [self._shard_admin_op(view.account_id, k, op, origin)
               for k in range(view.sh) if view.shard(k) and view.shard(k).status != view.root.status]
        if ops:
            self._check_replies(self._pipeline(ops))

    def _propagate_status(self, account_id: str, op: str, txn_id: str) -> None:
        if not isinstance(account_id, str):
            return
        part = self.schema.partition_of(account_id)
        sh = self._with_retry(self.client.hget, part.account(account_id), "sh", txn_id=txn_id)
        if sh:
            self._split_accounts[account_id] = max(int(sh), self._split_accounts.get(account_id, 0))
            self._check_replies(self._pipeline([self._shard_admin_op(account_id, k, op, txn_id)
                                                for k in range(int(sh))]))

    def _replay_from_shards(self, view: "SplitView", txn_id: str, kind: str, expected_tail: str,
                            amount_minor: int, *, passes: bool = True) -> Result | None:
        """The stored final decision of `txn_id` on one of the shards, if any (raises
        TxnConflict when a shard holds it for another request)."""
        for sub in view.shard_subs(include_missing=True):
            rec = view.records.get((sub, txn_id)) or {}
            if not rec.get("f"):
                continue
            expected = f"{kind}|{sub}|{expected_tail}"
            if rec["f"] != expected:
                raise TxnConflict(txn_id, rec["f"], expected)
            if rec["s"] != "PASS":
                return Result(Status(status_of(rec["s"])), int(rec["b"]), True, txn_id, view.account_id, kind,
                              amount_minor, rec.get("j") or "")
        return None

    def _split_spend(self, kind: str, account_id: str, amount_minor: int, txn_id: str,
                     terminal_id: str | None, cashier_id: str | None, hold_ttl_s: int = 0) -> Result:
        v.check_amount(amount_minor, "amount_minor")
        self._common(account_id, txn_id, terminal_id, cashier_id)
        self._with_retry(self._check_policy, txn_id=txn_id)
        tail = f"{amount_minor}" + (f"|{hold_ttl_s}" if kind == "hold" else "")
        extra = [hold_ttl_s] if kind == "hold" else []
        root_op = lambda: self._balance_op(kind, account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                           extra_keys=self._hold_keys(account_id),
                                           extra_args=[*extra, "1"])
        try:
            for _ in range(4):
                view = self._split_view(account_id, [txn_id])
                found = self._replay_from_shards(view, txn_id, kind, tail, amount_minor)
                if found:
                    return found
                if view.root is None or view.record(account_id, txn_id) or not view.sh:
                    if view.root is not None and not view.msh:
                        self._split_accounts.pop(account_id, None)    # plain again for good
                    return root_op()
                n = view.sh
                if any(s.status != view.root.status for s in view.shard_subs()):
                    self._sync_status(view)
                start = zlib.crc32(txn_id.encode()) % n
                order = [(start + i) % n for i in range(n)]
                stale = False
                for phase in (0, 1):
                    if phase == 1:
                        self.settle_transfers(account_id)
                        view = self._split_view(account_id)
                        if self._rebalance(view, start, amount_minor, txn_id):
                            view = self._split_view(account_id)
                    for k in (order if phase == 0 else order[:1]):
                        sid = shard_id(account_id, k)
                        rec = view.records.get((sid, txn_id)) or {}
                        if phase == 0 and rec.get("s") == "PASS":
                            continue
                        sub = view.sub(sid)
                        others = (view.available_minor - sub.available_minor if kind == "hold"
                                  else view.total_minor - sub.balance_minor) if sub else view.total_minor
                        part = self.schema.partition_of(sid)
                        keys = [part.account(sid), part.sub_txn(sid, txn_id), part.journal, part.holds(sid),
                                part.hold_expiries(sid)]
                        args = [txn_id, sid, amount_minor, self.retention_s, terminal_id or "",
                                cashier_id or "", kind, phase, n, others, hold_ttl_s]
                        reply = self._with_retry(self._script, "shard_spend", keys, args,
                                                 txn_id=txn_id)
                        if reply[0] == "STALE":
                            stale = True
                            break
                        if reply[0] != "PASS":
                            return self._decode(reply, kind, account_id, amount_minor, txn_id)
                    if stale:
                        break
                if stale:
                    self._split_accounts.pop(account_id, None)
                    continue
                return root_op()            # the start shard is closed: a merge is under way
            raise LedgerUnavailable(f"split account {account_id!r} kept changing", txn_id)
        finally:
            self.read_cache.invalidate(account_id)

    def _split_credit(self, kind, account_id, amount_minor, txn_id, original, terminal_id, cashier_id) -> Result:
        v.check_amount(amount_minor, "amount_minor")
        self._common(account_id, txn_id, terminal_id, cashier_id)
        self._with_retry(self._check_policy, txn_id=txn_id)
        root_op = lambda: self._balance_op("credit", account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                           extra_args=[kind, original, "1"], kind=kind)
        try:
            for _ in range(4):
                view = self._split_view(account_id, [txn_id])
                found = self._replay_from_shards(view, txn_id, kind, f"{amount_minor}|{original}", amount_minor)
                if found:
                    return found
                if view.root is None or view.record(account_id, txn_id) or not view.sh:
                    if view.root is not None and not view.msh:
                        self._split_accounts.pop(account_id, None)    # plain again for good
                    return root_op()
                sid = shard_id(account_id, zlib.crc32(txn_id.encode()) % view.sh)
                sub = view.sub(sid)
                if sub is None or sub.closed:
                    return root_op()
                part = self.schema.partition_of(sid)
                keys = [part.account(sid), part.sub_txn(sid, txn_id), part.journal]
                args = [txn_id, sid, amount_minor, self.retention_s, terminal_id or "", cashier_id or "",
                        kind, original, "1"]
                reply = self._with_retry(self._script, "credit", keys, args, txn_id=txn_id)
                if reply[0] == "SHARD_CLOSED":
                    continue
                result = self._decode(reply, kind, account_id, amount_minor, txn_id)
                others = view.total_minor - sub.balance_minor
                return Result(result.status, result.balance_minor + others, result.replayed, txn_id,
                              account_id, kind, amount_minor, result.journal_id)
            raise LedgerUnavailable(f"split account {account_id!r} kept changing", txn_id)
        finally:
            self.read_cache.invalidate(account_id)

    def _split_refund(self, account_id, amount_minor, txn_id, original, terminal_id, cashier_id) -> Result:
        try:
            view = self._split_view(account_id, [txn_id, original])
            found = self._replay_from_shards(view, txn_id, "refund", f"{amount_minor}|{original}", amount_minor)
            if found:
                return found
            holder = None
            for sub in view.shard_subs(include_missing=True):
                rec = view.records.get((sub, original)) or {}
                if status_of(rec.get("s")) == "APPLIED" and (rec.get("f") or "").startswith((f"deduct|{sub}|", f"capture|{sub}|")):
                    holder = sub
            part = self.schema.partition_of(holder or account_id)
            acct = holder or account_id
            keys = [part.account(acct), part.sub_txn(acct, txn_id), part.journal, part.sub_txn(acct, original)]
            args = [txn_id, acct, amount_minor, self.retention_s, terminal_id or "", cashier_id or "",
                    original, "1"]
            result = self._run("refund", "refund", keys, args, account_id, amount_minor, txn_id)
            sub = view.sub(holder) if holder else None
            if sub is not None and sub.closed and result.applied:
                self.settle_transfers(account_id)        # a merged account: the refund goes to the root
            if holder and sub is not None:
                return Result(result.status, result.balance_minor + view.total_minor - sub.balance_minor,
                              result.replayed, txn_id, account_id, "refund", amount_minor, result.journal_id)
            return result
        finally:
            self.read_cache.invalidate(account_id)

    def _split_resolve_hold(self, script, hold_txn_id, amount_minor, txn_id, account_id, terminal_id,
                            cashier_id) -> Result:
        view = self._split_view(account_id, [txn_id, hold_txn_id])
        found = self._replay_from_shards(view, txn_id, script, f"{amount_minor}|{hold_txn_id}", amount_minor)
        if found:
            return found
        holder = None
        for sub in view.shard_subs(include_missing=True):
            rec = view.records.get((sub, hold_txn_id)) or {}
            if status_of(rec.get("s")) == "APPLIED" and (rec.get("f") or "").startswith(f"hold|{sub}|"):
                holder = sub
        if holder is None:
            return self._resolve_hold_on(account_id, script, hold_txn_id, amount_minor, txn_id,
                                         terminal_id, cashier_id, routed="1")
        result = self._resolve_hold_on(account_id, script, hold_txn_id, amount_minor, txn_id,
                                       terminal_id, cashier_id, routed="1", sub_id=holder)
        sub = view.sub(holder)
        others = view.total_minor - sub.balance_minor if sub else 0
        return Result(result.status, result.balance_minor + others, result.replayed, txn_id, account_id,
                      script, amount_minor, result.journal_id)

    def _run_sub(self, script, kind, keys, args, account_id, amount_minor, txn_id) -> Result:
        return self._run(script, kind, keys, args, account_id, amount_minor, txn_id)


@dataclass(frozen=True, slots=True)
class SubBalance:
    """One sub-balance of a split account (the root or a shard) read at one instant."""
    id: str
    balance_minor: int
    available_minor: int
    status: str
    closed: bool
    last_journal_id: str
    in_flight: dict            # xfer id -> (amount_minor, dest id, sent ms)
    received: dict             # xfer id -> received ms


@dataclass
class SplitView:
    """An account's root and shards, and some txn records in their slots.

    On a Cluster the sub-balances are read on several nodes, not as one snapshot: a
    read running while a transfer completes may count it twice for that read, never
    zero times (the in-flight record stays until its receipt is `settle_grace_ms` old).
    """
    account_id: str
    root: SubBalance | None = None
    sh: int = 0
    msh: int = 0
    subs_by_id: dict = None
    records: dict = None

    def __post_init__(self):
        self.subs_by_id, self.records = {}, {}

    def add(self, sub_id: str, reply, records: dict) -> None:
        for t, rec in records.items():
            if rec.get("f"):
                self.records[(sub_id, t)] = rec
        if not reply:
            return
        pairs = lambda flat: dict(zip(flat[::2], flat[1::2]))
        in_flight = {x: (int(val.split("|")[0]), val.split("|")[1], int(val.split("|")[2]))
                     for x, val in pairs(reply[6]).items()}
        sub = SubBalance(sub_id, int(reply[0]), int(reply[1]), reply[2], bool(int(reply[3])), reply[5],
                         in_flight, {x: int(ms) for x, ms in pairs(reply[7]).items()})
        self.subs_by_id[sub_id] = sub
        if sub_id == self.account_id:
            self.root = sub
            self.sh = int(reply[8] or 0)
            self.msh = int(reply[9] or 0) if (reply[8] or int(reply[10] or 0) > time.time() * 1000) else 0

    def sub(self, sub_id: str) -> SubBalance | None:
        return self.subs_by_id.get(sub_id)

    def shard(self, k: int) -> SubBalance | None:
        return self.subs_by_id.get(shard_id(self.account_id, k))

    def subs(self) -> list[SubBalance]:
        return list(self.subs_by_id.values())

    def shard_subs(self, include_missing: bool = False):
        if include_missing:
            return [shard_id(self.account_id, k) for k in range(MAX_SHARDS)]
        return [s for s in self.subs_by_id.values() if s.id != self.account_id]

    def record(self, sub_id: str, txn_id: str) -> dict | None:
        return self.records.get((sub_id, txn_id))

    @property
    def in_flight_minor(self) -> int:
        """Money that left one sub-balance and has not (as read) reached the other."""
        return sum(amount for s in self.subs_by_id.values() for x, (amount, dest, _) in s.in_flight.items()
                   if x not in (self.subs_by_id[dest].received if dest in self.subs_by_id else {}))

    @property
    def total_minor(self) -> int:
        return sum(s.balance_minor for s in self.subs_by_id.values()) + self.in_flight_minor

    @property
    def available_minor(self) -> int:
        return sum(s.available_minor for s in self.subs_by_id.values()) + self.in_flight_minor
