"""The Ledger: the one way balances change.

Each method validates its input (raising `InvalidRequest` before anything is sent),
runs one Lua script that checks, changes, records the decision under the txn id and
journals the change atomically, and answers a `Result`. Connection failures are
retried with the *same* txn id under one deadline; when the deadline passes the
caller gets `LedgerUnavailable` and must retry later with the same txn id (the
terminal's outbox does exactly that).
"""
from __future__ import annotations

import dataclasses
import logging
import re
import random
import time
from dataclasses import dataclass
from typing import Any, NamedTuple, Sequence

from redis.exceptions import (AskError, BusyLoadingError, ClusterDownError, ConnectionError,
                              MovedError, OutOfMemoryError, ReadOnlyError, RedisError,
                              ResponseError, TimeoutError, TryAgainError)

from . import validation as v
from .connection import (check_eviction_policy, connect, follow_primary, is_cluster,
                         parse_redis_url, redacted)
from .errors import (AccountNotFound, InvalidRequest, LedgerError, LedgerNotInitialized,
                     LedgerUnavailable, TxnConflict)
from .read_cache import ReadCache
from .keys import CONSUMER_GROUP, META_KEY, KeySchema, Partition
from .members import Members
from .result import Result, Status
from .scripts import ScriptRunner, is_function_missing

log = logging.getLogger(__name__)

DEFAULT_RETENTION_S = 7 * 86400
DEFAULT_PARTITIONS_STANDALONE = 1
DEFAULT_PARTITIONS_CLUSTER = 16
# deduct_many: items per deduct_batch call. One call saves each item a command's parsing,
# reply and client packing; the cap keeps one call short (Redis runs nothing else meanwhile).
BATCH_ITEMS_PER_CALL = 50
EVICTION_CHECK_INTERVAL_S = 300.0

_STATUS_BY_NAME = {s.value: s for s in Status}
# the replies that are decisions (Result); INVALID, TXN_CONFLICT, NOT_INITIALIZED raise
_DECIDED = {name: s for name, s in _STATUS_BY_NAME.items() if name not in ("INVALID", "TXN_CONFLICT", "NOT_INITIALIZED")}
# account, txn, terminal, cashier ids of a request in one match: "<acct> <txn> <term> <cash>"
# (no id may hold a space, so each part is exactly one id; terminal and cashier optional)
_plain_ids = re.compile(" ".join([f"{v.ID_CLASS}{{1,{v.MAX_ID_LEN}}}"] * 2
                                 + [f"{v.ID_CLASS}{{0,{v.MAX_ID_LEN}}}"] * 2)).fullmatch

# Result(...) of every answer, at half the cost of the frozen dataclass's __init__ (which
# sets each field through object.__setattr__): the slots' own setters, in field order.
# deduct_many decodes 100 answers per batch; the fields are checked here at import.
_RESULT_SETTERS = tuple(getattr(Result, f.name).__set__ for f in dataclasses.fields(Result))
assert [f.name for f in dataclasses.fields(Result)] == ["status", "balance_minor", "replayed", "txn_id",
                                                        "account_id", "kind", "amount_minor", "journal_id"]


_SET_STATUS, _SET_BALANCE, _SET_REPLAYED, _SET_TXN, _SET_ACCOUNT, _SET_KIND, _SET_AMOUNT, _SET_JOURNAL = \
    _RESULT_SETTERS


def _new_result(status, balance_minor, replayed, txn_id, account_id, kind, amount_minor, journal_id) -> Result:
    result = object.__new__(Result)
    _SET_STATUS(result, status)
    _SET_BALANCE(result, balance_minor)
    _SET_REPLAYED(result, replayed)
    _SET_TXN(result, txn_id)
    _SET_ACCOUNT(result, account_id)
    _SET_KIND(result, kind)
    _SET_AMOUNT(result, amount_minor)
    _SET_JOURNAL(result, journal_id)
    return result


class NotReplicated(Exception):
    """WAIT returned fewer replicas than required: the change is not yet safe."""


# Errors after which the request may or may not have run: retrying with the same
# txn id is safe because the script is idempotent.
_RETRYABLE = (ConnectionError, TimeoutError, BusyLoadingError, ClusterDownError,
              TryAgainError, ReadOnlyError, NotReplicated)


def _is_retryable_response(exc: ResponseError) -> bool:
    text = str(exc)
    # NOREPLICAS: a primary with min-replicas-to-write that lost its replicas (cut off from
    # them, or just demoted by Sentinel) refuses a script at its first write, before
    # anything changed: retrying (after asking the sentinels again) is safe
    return text.startswith(("BUSY", "LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS"))


def _as_ledger_error(exc: RedisError, txn_id: str | None, where: str) -> LedgerUnavailable:
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


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter, bounded by `deadline_s` for the whole call."""
    deadline_s: float = 5.0
    first_delay_s: float = 0.02
    max_delay_s: float = 0.5

    def delay_s(self, attempt: int) -> float:
        return min(self.max_delay_s, self.first_delay_s * 2 ** attempt) * random.uniform(0.5, 1.0)


class DeductRequest(NamedTuple):
    """One deduction of a `Ledger.deduct_many` batch (same fields as `Ledger.deduct`).
    Immutable; a NamedTuple rather than a frozen dataclass: a batch of 100 is built per
    call, and a tuple is made in a third of the time."""
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
    bonus_minor: int = 0        # the bonus bucket (part of balance_minor; never paid out)

    @property
    def principal_minor(self) -> int:
        """The principal bucket: what the member paid in and is owed back on close."""
        return self.balance_minor - self.bonus_minor


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
    # Legacy: fields of entries journaled by split accounts before they were removed
    # (docs/ledger.md). No script writes them any more; old streams may still hold them.
    root_id: str = ""
    peer_id: str = ""
    transfer_id: str = ""
    shards: int = 0
    holder_name: str = ""       # open / restore: the account holder's name, when given
    phone: str = ""             # open / restore: the member's phone, when given
    card_no: str = ""           # card_issue / card_block: the card
    card_reason: str = ""       # card_block: lost | damaged | stolen | other
    setting: str = ""           # setting: spend_order | balance_cap | promo:<id>
    setting_value: str = ""     # setting: the new value ('' = removed)

    @classmethod
    def from_fields(cls, journal_id: str, partition: int, f: dict[str, str]) -> "JournalEntry":
        """Raises KeyError/ValueError on a malformed entry (the reconcile service quarantines those).
        The entry's time is its `ts` field where an older script wrote one, else the
        milliseconds of its stream id (what the scripts write now)."""
        ts = int(f["ts"]) if "ts" in f else int(journal_id[:journal_id.index("-")])
        return cls(journal_id, partition, f["txn"], f["kind"], f["acct"], int(f["amt"]),
                   int(f["bal"]), f.get("term", ""), f.get("cash", ""), ts,
                   f.get("orig", ""), int(f.get("held", 0)), int(f.get("exp", 0)),
                   f.get("root", ""), f.get("peer", ""), f.get("xfer", ""), int(f.get("shards", 0)),
                   f.get("name", ""), f.get("ph", ""), f.get("card", ""), f.get("rsn", ""),
                   f.get("set", ""), f.get("val", ""))

    @property
    def account_root(self) -> str:
        """The account this entry counts towards: account_id (root_id only on legacy split entries)."""
        return self.root_id or self.account_id


class Ledger(Members):
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

    @classmethod
    def from_url(cls, url: str, *, socket_timeout_s: float = 2.0, **kwargs) -> "Ledger":
        """A ledger on the Redis at `url` (see `core.connection` for the URL forms). The
        URL's ?wait_replicas= / ?wait_timeout_ms= apply unless given here."""
        ledger = cls(connect(url, socket_timeout_s=socket_timeout_s),
                     **{**parse_redis_url(url).ledger_options, **kwargs})
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
        return self._with_retry(self._init, partitions, txn_id=None)

    def _init(self, partitions: int | None) -> KeySchema:
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
        return self._with_retry(self._prepare_partitions, partitions, txn_id=None)

    def _prepare_partitions(self, partitions: int) -> KeySchema:
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
            except _RETRYABLE as exc:
                # first: ClusterDownError, TryAgainError and ReadOnlyError are ResponseErrors
                # whose text redis-py has stripped of the CLUSTERDOWN/TRYAGAIN/READONLY code
                error: Exception = exc
            except ResponseError as exc:
                if not _is_retryable_response(exc):
                    raise _as_ledger_error(exc, txn_id, self.url_for_logs) from exc
                error = exc
            except RedisError as exc:      # anything else of redis-py's: never leaks to callers
                raise _as_ledger_error(exc, txn_id, self.url_for_logs) from exc
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

    def _script(self, name: str, keys: Sequence[str], args: Sequence[Any]):
        """Run a writing script; with wait_replicas, answer only once replicas hold it."""
        if not self.wait_replicas:
            return self.scripts.call(self.client, name, keys, args)
        reply = self._run_pipeline(self._node_client(keys[0]), [(keys, args)], name)[0]
        if isinstance(reply, Exception):
            raise reply
        return reply

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
            if self.read_cache.enabled:     # off unless configured
                self.read_cache.invalidate(account_id)
        return self._decode(reply, kind, account_id, amount_minor, txn_id)

    @staticmethod
    def _decode(reply, kind: str, account_id: str, amount_minor: int, txn_id: str) -> Result:
        status, balance, replayed, detail = reply
        if status == "INVALID":
            field, _, reason = detail.partition(": ")
            raise InvalidRequest(field, reason)
        if status == "TXN_CONFLICT":
            requested = f"{kind}|{account_id}|{amount_minor}"
            raise TxnConflict(txn_id, detail, requested)
        if status == "NOT_INITIALIZED":
            raise LedgerNotInitialized(f"the journal of account {account_id!r}'s partition is missing")
        return _new_result(_STATUS_BY_NAME[status], int(balance), replayed == 1, txn_id, account_id, kind,
                           amount_minor, detail)

    def _common(self, account_id, txn_id, terminal_id, cashier_id, *, internal_txn: bool = False) -> Partition:
        # the common case in one expression (the same rules as v.check_id); anything else
        # goes through the checks one by one, which name the field
        if not internal_txn:
            term = "" if terminal_id is None else terminal_id
            cash = "" if cashier_id is None else cashier_id
            if (type(account_id) is str and type(txn_id) is str and type(term) is str and type(cash) is str
                    and _plain_ids(f"{account_id} {txn_id} {term} {cash}")):
                return self.schema.partition_of(account_id)
        v.check_id(account_id, "account_id")
        if internal_txn:
            v.check_internal_txn_id(txn_id)
        else:
            v.check_id(txn_id, "txn_id")    # refuses '@': client ids never enter the reserved namespace
        v.check_id(terminal_id, "terminal_id", optional=True)
        v.check_id(cashier_id, "cashier_id", optional=True)
        return self.schema.partition_of(account_id)

    def _balance_op(self, script: str, account_id: str, amount_minor: int, txn_id: str,
                    terminal_id: str | None, cashier_id: str | None, *, allow_zero: bool = False,
                    extra_keys: Sequence[str] = (), extra_args: Sequence[str] = (),
                    kind: str | None = None, max_minor: int = v.MAX_AMOUNT_MINOR,
                    internal_txn: bool = False) -> Result:
        field = {"open_account": "initial_minor", "restore_account": "balance_minor"}.get(script, "amount_minor")
        v.check_amount(amount_minor, field, allow_zero=allow_zero, max_minor=max_minor)
        part = self._common(account_id, txn_id, terminal_id, cashier_id, internal_txn=internal_txn)
        keys = [part.account(account_id), part.txn(txn_id), part.journal, *extra_keys]
        args = [txn_id, account_id, amount_minor, self.retention_s, terminal_id or "",
                cashier_id or "", *extra_args]
        return self._run(script, kind or script, keys, args, account_id, amount_minor, txn_id)

    # ---------------------------------------------------------------- operations

    def open_account(self, account_id: str, *, txn_id: str, initial_minor: int = 0,
                     terminal_id: str | None = None, cashier_id: str | None = None,
                     holder_name: str | None = None, phone: str | None = None) -> Result:
        """Create an account. An existing id with a new txn id -> Status.ACCOUNT_EXISTS.

        `holder_name` (optional, up to 64 characters of any script) is what the till
        shows next to the balance; `phone` (optional) finds the member (`find_members`).
        Both are journaled with the opening entry and indexed in the same script.
        """
        holder = v.check_holder_name(holder_name)
        part = self.schema.partition_of(account_id) if isinstance(account_id, str) else None
        index_keys, member_args = self._member_index_args(part, holder, phone)
        extra = [part.accounts, *index_keys] if part else []
        return self._balance_op("open_account", account_id, initial_minor, txn_id, terminal_id,
                                cashier_id, allow_zero=True, extra_keys=extra, kind="open",
                                extra_args=[holder, *member_args])

    def deduct(self, account_id: str, amount_minor: int, *, txn_id: str,
               terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Take money when the available balance (balance - active holds) covers it,
        else Status.INSUFFICIENT_FUNDS."""
        if type(amount_minor) is int and 0 < amount_minor <= v.MAX_AMOUNT_MINOR:    # the common case
            part = self._common(account_id, txn_id, terminal_id, cashier_id)
            return self._run("deduct", "deduct", part.deduct_keys(account_id, txn_id),
                             [txn_id, account_id, amount_minor, self.retention_s, terminal_id or "", cashier_id or ""],
                             account_id, amount_minor, txn_id)
        return self._balance_op("deduct", account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                extra_keys=[*self._hold_keys(account_id), *self._settings_keys(account_id)])

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
        return self._balance_op("hold", account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                extra_keys=self._hold_keys(account_id), extra_args=[ttl_s])

    def capture(self, hold_txn_id: str, amount_minor: int, *, txn_id: str,
                account_id: str | None = None, terminal_id: str | None = None,
                cashier_id: str | None = None) -> Result:
        """Take up to the held amount; the rest of the hold is released. A hold resolves once.

        `account_id` is optional: without it the account is looked up (one extra read)
        from this txn's own record or else the hold's. When neither exists the call
        raises InvalidRequest('hold_txn_id', ...) and decides nothing: a decline is only
        ever answered when it is stored in the account's partition, so one txn id never
        gets two decisions (a HOLD_NOT_FOUND now and an APPLIED once the hold appears).
        """
        return self._resolve_hold("capture", hold_txn_id, amount_minor, txn_id, account_id,
                                  terminal_id, cashier_id)

    def void(self, hold_txn_id: str, *, txn_id: str, account_id: str | None = None,
             terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Release a hold without taking anything (`account_id` as for `capture`)."""
        return self._resolve_hold("void", hold_txn_id, 0, txn_id, account_id, terminal_id, cashier_id)

    def _resolve_hold(self, script, hold_txn_id, amount_minor, txn_id, account_id, terminal_id,
                      cashier_id) -> Result:
        v.check_id(hold_txn_id, "hold_txn_id")
        v.check_id(txn_id, "txn_id")
        if account_id is None:
            account_id = self._resolving_account(script, hold_txn_id, txn_id)
            if account_id is None:
                raise InvalidRequest("hold_txn_id", f"no hold {hold_txn_id!r} was found (never placed, or "
                                     "older than the retention); nothing was decided. Give account_id to "
                                     "have the decline recorded")
        part = self.schema.partition_of(account_id) if isinstance(account_id, str) else None
        extra = [*self._hold_keys(account_id), part.txn(hold_txn_id), *self._settings_keys(account_id)] \
            if part else []
        return self._balance_op(script, account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                allow_zero=script == "void", extra_keys=extra, extra_args=[hold_txn_id])

    def _resolving_account(self, script: str, hold_txn_id: str, txn_id: str) -> str | None:
        """The account of a capture/void called without one: from this txn's own record
        when it was decided before (a retry answers what the first call answered, even
        after the hold's record expired), else from the hold's record; None if neither."""
        def read():
            pipe = self.client.pipeline(transaction=False)
            for part in self.partitions:
                pipe.hget(part.txn(txn_id), "f")
                pipe.hget(part.txn(hold_txn_id), "f")
            return pipe.execute()
        fingerprints = self._with_retry(read, txn_id=txn_id)
        own, held = fingerprints[0::2], fingerprints[1::2]
        for fingerprint in own:
            if fingerprint and fingerprint.startswith(script + "|"):
                return fingerprint.split("|")[1]
        for fingerprint in held:
            if fingerprint and fingerprint.startswith("hold|"):
                return fingerprint.split("|")[1]
        return None

    def hold_account(self, hold_txn_id: str) -> str | None:
        """The account a hold was placed on, or None. Reads the hold's record in every
        partition (one pipeline): a hold id maps to one account for good, so this read
        can be done before the capture without a race."""
        v.check_id(hold_txn_id, "hold_txn_id")

        def read():
            pipe = self.client.pipeline(transaction=False)
            for part in self.partitions:
                pipe.hget(part.txn(hold_txn_id), "f")
            return pipe.execute()
        for fingerprint in self._with_retry(read, txn_id=None):
            if fingerprint and fingerprint.startswith("hold|"):
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
        self.read_cache.put("balances", account_id, value, started)
        return value

    def expire_holds(self, account_id: str, *, limit: int = 100, terminal_id: str = "") -> int:
        """Journal the release of this account's expired holds; returns how many.

        Not needed for correctness (expired holds stop counting by themselves); the
        reconcile service calls it so the database learns of each release.
        """
        v.check_id(account_id, "account_id")
        part = self.schema.partition_of(account_id)
        expired = self._with_retry(self.client.zrangebyscore, part.hold_expiries(account_id),
                                   "-inf", int(time.time() * 1000), 0, limit, txn_id=None)
        if not expired:
            return 0
        keys = [part.account(account_id), part.hold_expiries(account_id), part.journal,
                part.holds(account_id), part.hold_expiries(account_id),
                *(part.txn(hold) for hold in expired)]
        args = ["-", account_id, "0", "", terminal_id, "", *expired]
        reply = self._with_retry(self._script, "expire_holds", keys, args, txn_id=None)
        if reply and reply[0] == "INVALID":
            raise InvalidRequest(*reply[3].split(": ", 1))
        return int(reply[0])

    def credit(self, account_id: str, amount_minor: int, *, txn_id: str, method: str = "cash",
               bonus_minor: int = 0, terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Top up an account: `amount_minor` into the principal and `bonus_minor` (a
        promotion's, see `bonus_for`) into the bonus, in one entry that keeps the payment
        `method` (cash, wechat, alipay, bank_card, other). BALANCE_CAP_EXCEEDED past the
        shop's cap."""
        topup = self._topup_args(method, bonus_minor)
        return self._credit("credit", account_id, amount_minor, txn_id, "", terminal_id, cashier_id, topup)

    def _credit(self, kind, account_id, amount_minor, txn_id, original, terminal_id, cashier_id,
                topup: Sequence[str] = ()) -> Result:
        return self._balance_op("credit", account_id, amount_minor, txn_id, terminal_id,
                                cashier_id, extra_args=[kind, original, *topup], kind=kind,
                                extra_keys=self._settings_keys(account_id), internal_txn=kind == "compensate")

    def compensate(self, account_id: str, amount_minor: int, *, txn_id: str,
                   original_txn_id: str, terminal_id: str | None = None,
                   cashier_id: str | None = None) -> Result:
        """A journaled correcting credit that reverses a duplicate application of
        `original_txn_id` (used by the reconcile service; allowed on frozen accounts).
        `txn_id` must be an internal id (`core.validation.internal_txn_id`)."""
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
        return self._balance_op("refund", account_id, amount_minor, txn_id, terminal_id,
                                cashier_id, extra_keys=extra, extra_args=[original_txn_id])

    def freeze(self, account_id: str, *, txn_id: str, terminal_id: str | None = None,
               cashier_id: str | None = None) -> Result:
        """Stop deductions, holds and top-ups on the account (refunds and captures still go through)."""
        return self._balance_op("freeze", account_id, 0, txn_id, terminal_id, cashier_id,
                                allow_zero=True)

    def unfreeze(self, account_id: str, *, txn_id: str, terminal_id: str | None = None,
                 cashier_id: str | None = None) -> Result:
        return self._balance_op("unfreeze", account_id, 0, txn_id, terminal_id, cashier_id,
                                allow_zero=True)

    def restore_account(self, account_id: str, balance_minor: int, *, txn_id: str,
                        status: str = "active", holder_name: str | None = None,
                        phone: str | None = None, bonus_minor: int = 0) -> Result:
        """Recreate an account that Redis lost, from the database of record.

        Never overwrites: if the account exists in Redis the answer is ACCOUNT_EXISTS
        and nothing changes. Journaled as kind 'restore' with amount 0. `txn_id` must be
        an internal id (`core.validation.internal_txn_id`).
        """
        if status not in ("active", "frozen", "closed"):
            raise InvalidRequest("status", "must be active, frozen or closed")
        holder = v.check_holder_name(holder_name)
        part = self.schema.partition_of(account_id) if isinstance(account_id, str) else None
        index_keys, member_args = self._member_index_args(part, holder, phone)
        extra = [part.accounts, *index_keys] if part else []
        return self._balance_op("restore_account", account_id, balance_minor, txn_id, None, None,
                                allow_zero=True, extra_keys=extra,
                                extra_args=[status, holder, *member_args,
                                            str(v.check_amount(bonus_minor, "bonus_minor", allow_zero=True,
                                                               max_minor=v.MAX_BALANCE_MINOR))],
                                kind="restore", max_minor=v.MAX_BALANCE_MINOR, internal_txn=True)

    # ---------------------------------------------------------------- batches

    def deduct_many(self, requests: Sequence[DeductRequest]) -> list[Result | LedgerError]:
        """Run many deductions in as few round trips as the topology allows.

        Answers one item per request, in the same order. Each item is the `Result`
        the single `deduct` would give (same validation, idempotency and statuses),
        or, for a request that could not be decided, the *exception instance* that
        `deduct` would have raised (`InvalidRequest`, `TxnConflict`, `LedgerUnavailable`
        for an item Redis refused, e.g. out of memory) placed at its position instead of
        being raised, so one bad request never drops the others: every item is a
        `Result` or a `LedgerError`, never a raw redis-py exception. Check with
        ``isinstance(item, Result)``.

        All valid requests go out in one pipeline (on a Cluster, one per node) of
        `deduct_batch` calls: one call per partition and up to BATCH_ITEMS_PER_CALL
        items, each item decided by deduct.lua's own code. A connection failure
        retries the whole batch with the same txn ids, which is safe: every script is
        idempotent. If the deadline
        passes, `LedgerUnavailable` is raised for the batch: every outcome is unknown
        and the batch must be retried as it was.
        """
        out: list[Result | LedgerError | None] = [None] * len(requests)
        calls: list[tuple[int, list[str], list[Any], DeductRequest]] = []
        retention_s = self.retention_s
        for i, req in enumerate(requests):
            account_id, txn_id, amount = req.account_id, req.txn_id, req.amount_minor
            try:
                if type(amount) is not int or not 0 < amount <= v.MAX_AMOUNT_MINOR:   # the common case, fast
                    v.check_amount(amount, "amount_minor")
                part = self._common(account_id, txn_id, req.terminal_id, req.cashier_id)
            except InvalidRequest as exc:
                out[i] = exc
                continue
            calls.append((i, part.deduct_keys(account_id, txn_id),
                          [txn_id, account_id, amount, retention_s, req.terminal_id or "", req.cashier_id or ""],
                          req))
        if calls:
            self._with_retry(self._check_policy, txn_id=None)
            try:
                replies = self._with_retry(self._pipeline_deducts, calls, txn_id=None)
            finally:
                if self.read_cache.enabled:
                    for _, _, _, req in calls:
                        self.read_cache.invalidate(req.account_id)
            for (i, _, _, req), reply in zip(calls, replies):
                status = _DECIDED.get(reply[0]) if type(reply) is list else None
                if status is not None:                # a decision: the common case, decoded here
                    out[i] = _new_result(status, int(reply[1]), reply[2] == 1, req.txn_id, req.account_id,
                                         "deduct", req.amount_minor, reply[3])
                    continue
                if isinstance(reply, RedisError):     # this item only (others were decided)
                    out[i] = _as_ledger_error(reply, req.txn_id, self.url_for_logs)
                    continue
                try:
                    out[i] = self._decode(reply, "deduct", req.account_id, req.amount_minor, req.txn_id)
                except (InvalidRequest, TxnConflict) as exc:
                    out[i] = exc
        return out  # type: ignore[return-value]

    def _pipeline_deducts(self, calls) -> list:
        """Replies in the order of `calls`: one pipeline, or one per node on a Cluster
        (redis-py's ClusterPipeline refuses FCALL, so the ledger groups by node)."""
        if not is_cluster(self.client):
            return self._run_deduct_batches(self.client, [(keys, args) for _, keys, args, _ in calls])
        by_node: dict[str, tuple[Any, list[int]]] = {}
        for pos, (_, keys, _, _) in enumerate(calls):
            node = self.client.get_node_from_key(keys[0])
            by_node.setdefault(node.name, (node, []))[1].append(pos)
        replies: list = [None] * len(calls)
        for node, positions in by_node.values():
            batch = [(calls[p][1], calls[p][2]) for p in positions]
            node_replies = self._run_deduct_batches(node.redis_connection, batch)
            for p, reply in zip(positions, node_replies):
                replies[p] = reply
        return replies

    def _run_deduct_batches(self, client, batch) -> list:
        """Run the deductions of `batch` on one connection: per partition (one slot) one
        `deduct_batch` call of up to BATCH_ITEMS_PER_CALL items, all in one pipeline.

        An item that failed on its own is answered by its error, as in a pipeline of
        single calls. A call that Redis refused as a whole before it started (out of
        memory) is run again item by item, so each item gets its own reply or error."""
        groups: dict[str, list[int]] = {}
        for pos, (keys, _) in enumerate(batch):
            groups.setdefault(keys[0][:keys[0].index("}") + 1], []).append(pos)
        calls: list[tuple[list[int], list[str], list[Any]]] = []
        for positions in groups.values():
            for start in range(0, len(positions), BATCH_ITEMS_PER_CALL):
                chunk = positions[start:start + BATCH_ITEMS_PER_CALL]
                keys: list[str] = []
                args: list[Any] = []
                for p in chunk:
                    keys += batch[p][0]
                    args += batch[p][1]
                calls.append((chunk, keys, args))
        replies: list = [None] * len(batch)
        call_replies = self._run_pipeline(client, [(keys, args) for _, keys, args in calls], "deduct_batch")
        for (chunk, _, _), reply in zip(calls, call_replies):
            if isinstance(reply, Exception):
                reply = self._run_pipeline(client, [batch[p] for p in chunk])
            for p, item in zip(chunk, reply):
                replies[p] = item
        return replies

    def _run_pipeline(self, client, batch, name: str = "deduct") -> list:
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
                first_key = batch[0][0][0]
                pipe.incr(first_key[:first_key.index("}") + 1] + ":ack")
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
            if isinstance(reply, _RETRYABLE) or (isinstance(reply, ResponseError) and _is_retryable_response(reply)):
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

    # ---------------------------------------------------------------- reads

    def account(self, account_id: str) -> AccountInfo:
        """The account as Redis holds it now. Raises AccountNotFound."""
        v.check_id(account_id, "account_id")
        cached = self.read_cache.get("account", account_id)
        if cached is not None:
            return cached
        key = self.schema.partition_of(account_id).account(account_id)
        started = time.monotonic()
        bal, st, ct, lj, nm, bo = self._with_retry(
            self.client.hmget, key, "bal", "st", "ct", "lj", "nm", "bo", txn_id=None)
        if bal is None:
            raise AccountNotFound(account_id)
        info = AccountInfo(account_id, int(bal), st or "active", int(ct or 0), lj or "", nm or "", int(bo or 0))
        self.read_cache.put("account", account_id, info, started)
        return info

    def accounts(self, account_ids: Sequence[str]) -> dict[str, AccountInfo | None]:
        """Many accounts in one pipeline (None for an id Redis does not hold).

        Each account's balance and last journal id are read together (one HMGET), so
        a reader can compare it with the database at that same journal position.
        """
        ids = [v.check_id(a, "account_id") for a in account_ids]

        def read():
            pipe = self.client.pipeline(transaction=False)
            for a in ids:
                pipe.hmget(self.schema.partition_of(a).account(a), "bal", "st", "ct", "lj", "nm", "bo")
            return pipe.execute()
        rows = self._with_retry(read, txn_id=None) if ids else []
        return {a: (AccountInfo(a, int(bal), st or "active", int(ct or 0), lj or "", nm or "", int(bo or 0))
                    if bal is not None else None)
                for a, (bal, st, ct, lj, nm, bo) in zip(ids, rows)}

    def account_ids(self, partition: Partition, *, page_size: int = 1000):
        """Every account id of one partition (SSCAN: no long blocking of Redis). Each page
        is read under the retry policy, so a failure raises LedgerUnavailable."""
        cursor = 0
        while True:
            cursor, ids = self._with_retry(self.client.sscan, partition.accounts, cursor, None, page_size,
                                           txn_id=None)
            yield from ids
            if cursor == 0:
                return

    def balance(self, account_id: str) -> int:
        """The balance in minor units. Raises AccountNotFound for an unknown id."""
        return self.account(account_id).balance_minor

    def journal(self, account_id: str, *, count: int = 20, scan_limit: int = 10_000) -> list[JournalEntry]:
        """The most recent journal entries of one account still held in Redis, newest first.

        Entries already moved to the database and trimmed are not here: the database has them.
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
