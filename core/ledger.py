"""The Ledger: the one way balances change.

Each method validates its input (raising `InvalidRequest` before anything is sent),
runs one Lua script that checks, changes, records the decision under the txn id and
journals the change atomically, and answers a `Result`. Connection failures are
retried with the *same* txn id under one deadline; when the deadline passes the
caller gets `LedgerUnavailable` and must retry later with the same txn id (the
terminal's outbox does exactly that).

`Ledger` is built of parts, each on the ledger's `LedgerRunner` (`core.runner`: retries,
deadlines, script calls, WAIT, pipelines, error translation): the setup and the balance
operations here, holds (`core.holds`), batches (`core.batches`), the reads (`core.reads`),
split-tender sales (`core.sales`), the member layer (`core.members`: cards, lookup, settings, promotions, closing) and its
indexes (`core.member_index`), offline sales (`core.offline`), whose methods are the Ledger's own.
"""
from __future__ import annotations

import functools
import time
from typing import Any, Sequence

from redis.exceptions import ResponseError

from . import validation as v
from .connection import connect, is_cluster, parse_redis_url, redacted
from .errors import InvalidRequest, LedgerNotInitialized, NotReplicated, TxnConflict
from .batches import BATCH_ITEMS_PER_CALL, Batches
from .holds import Holds
from .keys import CONSUMER_GROUP, META_KEY, KeySchema, Partition
from .member_index import MemberIndex
from .offline import Offline
from .members import Members, member_index_args, open_import_args, topup_args
from .read_cache import ReadCache
from .reads import AccountReads
from .records import AccountInfo, DeductRequest, JournalEntry
from .result import Result, Status
from .sales import Sales
from .runner import EVICTION_CHECK_INTERVAL_S, LedgerRunner, RetryPolicy
from .scripts import ScriptRunner

# moved to core.records, core.runner and core.errors; importable from here as before
__all__ = ["Ledger", "AccountInfo", "DeductRequest", "JournalEntry", "RetryPolicy", "NotReplicated",
           "EVICTION_CHECK_INTERVAL_S", "DEFAULT_RETENTION_S", "DEFAULT_PARTITIONS_STANDALONE",
           "DEFAULT_PARTITIONS_CLUSTER", "BATCH_ITEMS_PER_CALL"]

DEFAULT_RETENTION_S = v.DEFAULT_RETENTION_S
DEFAULT_PARTITIONS_STANDALONE = 1
DEFAULT_PARTITIONS_CLUSTER = 16


def _stored_retention(stored) -> int:
    """cs:meta's retention_s as the scripts get it: DEFAULT_RETENTION_S when absent; a value
    that is not one the setting allows (edited by hand) is refused, naming the field."""
    if stored is None:
        return DEFAULT_RETENTION_S
    text = stored.decode() if isinstance(stored, bytes) else str(stored)
    try:
        value = int(text)
    except ValueError:
        raise InvalidRequest("retention_s", f"cs:meta holds {text!r}, not whole seconds: "
                             "set it with cashierctl init --retention-s N") from None
    return v.check_shop_retention(value)


def _part_method(part: str, method):
    """A Ledger method that is `method` of the ledger's part `part` (same name, signature
    and docstring): the parts' methods stay the Ledger's own API."""
    @functools.wraps(method)
    def delegate(self, *args, **kwargs):
        return method(getattr(self, part), *args, **kwargs)
    return delegate


class _RunnerAttribute:
    """A Ledger attribute that its runner keeps (read and set through the ledger as before)."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, ledger, owner=None):
        return self if ledger is None else getattr(ledger.runner, self.name)

    def __set__(self, ledger, value) -> None:
        setattr(ledger.runner, self.name, value)


class Ledger:
    """Balance operations on one central Redis (standalone or Cluster).

    retention_s: how long the first decision of a txn id is kept. Default None: the
        shop's setting, `retention_s` in cs:meta (`cashierctl init --retention-s N`, at
        least 1 day; `DEFAULT_RETENTION_S`, 7 days, when the ledger has none), read with
        the key schema and again by `load_retention()`; every script that writes a txn
        record gets it in ARGV (cs:meta has no hash tag, so it is never in a script's
        KEYS). A number here overrides the setting for this process (tests, tools).
        A retry after the retention is treated as a new request; if it applies again the
        reconcile service finds the duplicate txn id and reverses it (a till never re-sends
        an operation that old on its own: docs/terminal.md). Refunds name their original
        within the same window.
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

    def __init__(self, client, *, retention_s: int | None = None,
                 retry: RetryPolicy | None = None, auto_init: bool = True,
                 partitions: int | None = None, allow_evicting_policy: bool = False,
                 scripts: ScriptRunner | None = None, read_cache_max_age_s: float = 0.0,
                 read_cache_max_entries: int = 10_000, wait_replicas: int = 0,
                 wait_timeout_ms: int = 200):
        # None: the shop's setting (cs:meta retention_s), read with the schema
        self._retention_override = None if retention_s is None else v.check_retention(retention_s)
        self._shop_retention_s: int | None = None
        self.auto_init = auto_init
        self._requested_partitions = partitions
        self._schema: KeySchema | None = None
        read_cache = ReadCache(read_cache_max_age_s, read_cache_max_entries)
        self.runner = LedgerRunner(client, scripts=scripts, retry=retry, wait_replicas=wait_replicas,
                                   wait_timeout_ms=wait_timeout_ms, allow_evicting_policy=allow_evicting_policy,
                                   read_cache=read_cache)
        self.reads = AccountReads(self)
        self.members = Members(self)
        self.member_index = MemberIndex(self)
        self.holds = Holds(self)
        self.batches = Batches(self)
        self.sales = Sales(self)
        self.offline = Offline(self)

    # kept by the runner, read and set here as before
    client = _RunnerAttribute()
    scripts = _RunnerAttribute()
    retry = _RunnerAttribute()
    wait_replicas = _RunnerAttribute()
    wait_timeout_ms = _RunnerAttribute()
    allow_evicting_policy = _RunnerAttribute()
    read_cache = _RunnerAttribute()
    url_for_logs = _RunnerAttribute()

    @classmethod
    def from_url(cls, url: str, *, socket_timeout_s: float = 2.0, **kwargs) -> "Ledger":
        """A ledger on the Redis at `url` (see `core.connection` for the URL forms). The
        URL's ?wait_replicas= / ?wait_timeout_ms= apply unless given here."""
        ledger = cls(connect(url, socket_timeout_s=socket_timeout_s),
                     **{**parse_redis_url(url).ledger_options, **kwargs})
        ledger.url_for_logs = redacted(url)
        return ledger

    def close(self) -> None:
        self.runner.client.close()

    # ---------------------------------------------------------------- setup

    @property
    def retention_s(self) -> int:
        """How long a txn record lives (s): the override given to the constructor, else the
        shop's setting as last read (read now, with the schema, if it never was)."""
        if self._retention_override is not None:
            return self._retention_override
        if self._shop_retention_s is None:
            self.schema                                   # noqa: B018 (reads cs:meta)
            if self._shop_retention_s is None:            # the schema was loaded before by init()
                self.load_retention()
        return self._shop_retention_s

    def known_retention_s(self) -> int | None:
        """The retention without asking Redis: the override, else the shop's setting as last
        read, else None (never read yet)."""
        return self._retention_override if self._retention_override is not None else self._shop_retention_s

    @property
    def retention_overridden(self) -> bool:
        """True when this process runs with a retention of its own (constructor)."""
        return self._retention_override is not None

    def load_retention(self) -> int:
        """Read the shop's retention from cs:meta now (the till does on every ping, so a
        change reaches it without a restart) and answer the one this ledger uses."""
        stored = self.runner.with_retry(self.runner.client.hget, META_KEY, "retention_s", txn_id=None)
        self._shop_retention_s = _stored_retention(stored)
        return self.retention_s

    def stored_retention_s(self) -> int | None:
        """The retention stored in cs:meta, or None when the ledger has none (a ledger made
        before the setting: its scripts use DEFAULT_RETENTION_S)."""
        stored = self.runner.with_retry(self.runner.client.hget, META_KEY, "retention_s", txn_id=None)
        return None if stored is None else _stored_retention(stored)

    @property
    def schema(self) -> KeySchema:
        if self._schema is None:
            self._schema = self.runner.with_retry(self._load_schema, txn_id=None)
        return self._schema

    @property
    def partitions(self) -> tuple[Partition, ...]:
        return self.schema.all

    def _load_schema(self) -> KeySchema:
        stored, retention = self.runner.client.hmget(META_KEY, "partitions", "retention_s")
        if stored is None:
            if not self.auto_init:
                raise LedgerNotInitialized("no cs:meta key")
            return self.init()
        self._shop_retention_s = _stored_retention(retention)
        return KeySchema(int(stored))

    def init(self, partitions: int | None = None, *, retention_s: int | None = None) -> KeySchema:
        """Create the ledger on this Redis: settings, journal streams and consumer groups.

        Idempotent, and safe when several processes do it at once: the first
        partition count written wins and is never changed afterwards.
        `retention_s`: the shop's idempotency retention (whole seconds, 1 day to 400
        days; checked before anything is written): stored in cs:meta, replacing the one
        there (records written before keep their TTL). None keeps the stored one, or
        stores `DEFAULT_RETENTION_S` on a ledger that has none.
        """
        if retention_s is not None:
            v.check_shop_retention(retention_s)
        return self.runner.with_retry(self._init, partitions, retention_s, txn_id=None)

    def _init(self, partitions: int | None, retention_s: int | None = None) -> KeySchema:
        wanted = partitions or self._requested_partitions or (
            DEFAULT_PARTITIONS_CLUSTER if is_cluster(self.runner.client) else DEFAULT_PARTITIONS_STANDALONE)
        client = self.runner.client
        client.hsetnx(META_KEY, "partitions", wanted)
        client.hsetnx(META_KEY, "created_ms", int(time.time() * 1000))
        if retention_s is not None:
            client.hset(META_KEY, "retention_s", retention_s)
        else:
            client.hsetnx(META_KEY, "retention_s", DEFAULT_RETENTION_S)
        stored, retention = client.hmget(META_KEY, "partitions", "retention_s")
        self._shop_retention_s = _stored_retention(retention)
        return self.prepare_partitions(int(stored))

    def prepare_partitions(self, partitions: int) -> KeySchema:
        """Create the journal streams and consumer groups of `partitions` partitions and
        load the scripts, *without* writing cs:meta.

        A restore uses this: it rebuilds balances first and writes cs:meta last, so
        terminals (auto_init=False) keep seeing "not initialised" instead of declining
        sales on accounts that are not back yet.
        """
        return self.runner.with_retry(self._prepare_partitions, partitions, txn_id=None)

    def _prepare_partitions(self, partitions: int) -> KeySchema:
        schema = KeySchema(partitions)
        for part in schema.all:
            try:
                # Group at 0 so that the reconcile service sees every entry ever written.
                self.runner.client.xgroup_create(part.journal, CONSUMER_GROUP, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
        self.runner.scripts.load_all(self.runner.client)
        self._schema = schema
        return schema

    # ---------------------------------------------------------------- the runner, by its old names

    def _with_retry(self, fn, *args, txn_id: str | None):
        """`LedgerRunner.with_retry` (kept for callers of the old private name:
        reconcile_service/members.py)."""
        return self.runner.with_retry(fn, *args, txn_id=txn_id)

    def _script(self, name: str, keys: Sequence[str], args: Sequence[Any]):
        """`LedgerRunner.script` (kept for reconcile_service/members.py)."""
        return self.runner.script(name, keys, args)

    def _run(self, script: str, kind: str, keys: Sequence[str], args: Sequence[Any],
             account_id: str, amount_minor: int, txn_id: str) -> Result:
        """`LedgerRunner.run` (kept for callers of the old private name)."""
        return self.runner.run(script, kind, keys, args, account_id, amount_minor, txn_id)

    # ---------------------------------------------------------------- requests

    def _common(self, account_id, txn_id, terminal_id, cashier_id, *, internal_txn: bool = False) -> Partition:
        """The partition of a request whose ids are valid (else InvalidRequest)."""
        v.check_request_ids(account_id, txn_id, terminal_id, cashier_id, internal_txn=internal_txn)
        return self.schema.partition_of(account_id)

    def _settings_keys(self, account_id) -> list[str]:
        """KEYS tail of the scripts that read the shop settings (spending order, cap)."""
        if not isinstance(account_id, str):
            return []                      # validation will refuse it
        return [self.schema.partition_of(account_id).settings]

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
        return self.runner.run(script, kind or script, keys, args, account_id, amount_minor, txn_id)

    # ---------------------------------------------------------------- operations

    def open_account(self, account_id: str, *, txn_id: str, initial_minor: int = 0,
                     terminal_id: str | None = None, cashier_id: str | None = None,
                     holder_name: str | None = None, phone: str | None = None,
                     bonus_minor: int = 0, import_ref: str | None = None) -> Result:
        """Create an account. An existing id with a new txn id -> Status.ACCOUNT_EXISTS.

        `initial_minor` is the opening principal; `bonus_minor` (a member moved in from
        another system, issue 29) an opening bonus bucket: the balance is both, and the
        opening entry carries `pd` / `bd` like a top-up with a bonus. `import_ref` (1-64
        characters, no control characters) is the member's reference in the system it was
        moved in from, journaled as the opening entry's field `imp`
        (`core.member_import` opens every member it imports with it).

        `holder_name` (optional, up to 64 characters of any script) is what the till
        shows next to the balance; `phone` (optional) finds the member (`find_members`).
        Both are journaled with the opening entry and indexed in the same script.

        Card numbers, account ids and phones share the till's one look-up: an id that is a
        card number or a member's phone answers ACCOUNT_ID_TAKEN, a phone that is another
        member's phone, a card number or another account's id PHONE_TAKEN, decided in the
        script (a phone of another partition, on a Cluster, is claimed in its own slot
        first, and the claim is dropped again if the account is not opened with it).
        """
        holder = v.check_holder_name(holder_name)
        v.check_amount(initial_minor, "initial_minor", allow_zero=True)
        tail = open_import_args(bonus_minor, import_ref)
        part = self._common(account_id, txn_id, terminal_id, cashier_id)
        index_keys, member_args = member_index_args(part, holder, phone)
        phone = member_args[0]
        extra = [part.accounts, *index_keys, part.card(account_id), part.phones]
        phone_part = self.schema.partition_of(phone) if phone else None
        found = ""
        if phone_part is part:
            extra += [part.account(phone), part.card(phone)]
        elif phone_part is not None:
            found = "CLAIMED" if self.member_index.phone_identity("claim", phone, account_id) == "APPLIED" \
                else Status.PHONE_TAKEN.value
        try:
            result = self._balance_op("open_account", account_id, initial_minor, txn_id, terminal_id,
                                      cashier_id, allow_zero=True, extra_keys=extra, kind="open",
                                      extra_args=[holder, *member_args, found, *tail])
        except (InvalidRequest, TxnConflict):
            if found == "CLAIMED":         # nothing was opened by this request
                self._drop_phone_claim(account_id, phone)
            raise
        if found == "CLAIMED" and not result.applied:
            self._drop_phone_claim(account_id, phone)
        return result

    def _drop_phone_claim(self, account_id: str, phone: str) -> None:
        """Drop a phone claimed for an open that did not open the account with it, unless
        the account holds that phone (opened with it before: ACCOUNT_EXISTS of the same
        member). An account's phone changes only when it is opened or restored."""
        held = self.runner.with_retry(self.runner.client.hget, self.schema.partition_of(account_id).account(account_id),
                                      "ph", txn_id=None)
        if held != phone:
            self.member_index.phone_identity("release", phone, account_id)

    def deduct(self, account_id: str, amount_minor: int, *, txn_id: str,
               terminal_id: str | None = None, cashier_id: str | None = None,
               card_no: str | None = None) -> Result:
        """Take money when the available balance (balance - active holds) covers it,
        else Status.INSUFFICIENT_FUNDS.

        `card_no`: the card the charge was presented with (the till found the member by
        it). The script checks it with the balance: CARD_BLOCKED when it was blocked, also
        after the look-up; CARD_NOT_THIS_ACCOUNT when it is not one of the account's cards."""
        v.check_id(card_no, "card_no", optional=True)
        if type(amount_minor) is int and 0 < amount_minor <= v.MAX_AMOUNT_MINOR:    # the common case
            part = self._common(account_id, txn_id, terminal_id, cashier_id)
            return self.runner.run("deduct", "deduct", part.deduct_keys(account_id, txn_id),
                                   [txn_id, account_id, amount_minor, self.retention_s, terminal_id or "",
                                    cashier_id or "", card_no or ""],
                                   account_id, amount_minor, txn_id)
        return self._balance_op("deduct", account_id, amount_minor, txn_id, terminal_id, cashier_id,
                                extra_keys=[*self._hold_keys(account_id), *self._settings_keys(account_id),
                                            *self._card_list_keys(account_id)],
                                extra_args=[card_no or ""])

    def _card_list_keys(self, account_id) -> list[str]:
        if not isinstance(account_id, str):
            return []                      # validation will refuse it
        return [self.schema.partition_of(account_id).account_cards(account_id)]

    def _hold_keys(self, account_id) -> list[str]:
        if not isinstance(account_id, str):
            return []                      # validation will refuse it
        part = self.schema.partition_of(account_id)
        return [part.holds(account_id), part.hold_expiries(account_id)]

    def credit(self, account_id: str, amount_minor: int, *, txn_id: str, method: str = "cash",
               bonus_minor: int = 0, terminal_id: str | None = None, cashier_id: str | None = None) -> Result:
        """Top up an account: `amount_minor` into the principal and `bonus_minor` (a
        promotion's, see `bonus_for`) into the bonus, in one entry that keeps the payment
        `method` (cash, wechat, alipay, bank_card, other). BALANCE_CAP_EXCEEDED past the
        shop's cap. An open offline debt is paid first from `amount_minor`
        (`Result.debt_minor`: how much; the balance gets the rest and the bonus)."""
        topup = topup_args(method, bonus_minor)
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
                        phone: str | None = None, bonus_minor: int = 0, debt_minor: int = 0) -> Result:
        """Recreate an account that Redis lost, from the database of record (`debt_minor`:
        its open offline debt, the book's sum of offline_debts).

        Never overwrites: if the account exists in Redis the answer is ACCOUNT_EXISTS
        and nothing changes. Journaled as kind 'restore' with amount 0. `txn_id` must be
        an internal id (`core.validation.internal_txn_id`).
        """
        if status not in ("active", "frozen", "closed"):
            raise InvalidRequest("status", "must be active, frozen or closed")
        holder = v.check_holder_name(holder_name)
        part = self.schema.partition_of(account_id) if isinstance(account_id, str) else None
        index_keys, member_args = member_index_args(part, holder, phone)
        extra = [part.accounts, *index_keys] if part else []
        result = self._balance_op("restore_account", account_id, balance_minor, txn_id, None, None,
                                  allow_zero=True, extra_keys=extra,
                                  extra_args=[status, holder, *member_args,
                                              str(v.check_amount(bonus_minor, "bonus_minor", allow_zero=True,
                                                                 max_minor=v.MAX_BALANCE_MINOR)),
                                              str(v.check_amount(debt_minor, "debt_minor", allow_zero=True,
                                                                 max_minor=v.MAX_BALANCE_MINOR))],
                                  kind="restore", max_minor=v.MAX_BALANCE_MINOR, internal_txn=True)
        if result.applied and member_args and member_args[0]:
            # the phone's identity, unless another member holds it (then the look-up of
            # that string answers LOOKUP_AMBIGUOUS: never resolved to one of them)
            self.member_index.phone_identity("index", member_args[0], account_id)
        return result

    # ---------------------------------------------------------------- holds (core.holds), batches (core.batches)

    hold = _part_method("holds", Holds.hold)
    capture = _part_method("holds", Holds.capture)
    void = _part_method("holds", Holds.void)
    expire_holds = _part_method("holds", Holds.expire_holds)
    deduct_many = _part_method("batches", Batches.deduct_many)

    # ---------------------------------------------------------------- split-tender sales (core.sales)

    sale = _part_method("sales", Sales.sale)
    tender_refund = _part_method("sales", Sales.tender_refund)
    sale_tenders = _part_method("sales", Sales.sale_tenders)

    # ---------------------------------------------------------------- offline sales (core.offline)

    offline_deduct = _part_method("offline", Offline.offline_deduct)
    offline_debt = _part_method("offline", Offline.debt)
    offline_limits = _part_method("offline", Offline.offline_limits)
    set_offline_limits = _part_method("offline", Offline.set_offline_limits)

    # ---------------------------------------------------------------- reads (core.reads)

    account = _part_method("reads", AccountReads.account)
    accounts = _part_method("reads", AccountReads.accounts)
    account_ids = _part_method("reads", AccountReads.account_ids)
    balance = _part_method("reads", AccountReads.balance)
    balances = _part_method("reads", AccountReads.balances)
    available = _part_method("reads", AccountReads.available)
    journal = _part_method("reads", AccountReads.journal)
    hold_account = _part_method("reads", AccountReads.hold_account)

    # ---------------------------------------------------------------- members (core.members)

    issue_card = _part_method("members", Members.issue_card)
    block_card = _part_method("members", Members.block_card)
    resolve_card = _part_method("members", Members.resolve_card)
    cards = _part_method("members", Members.cards)
    account_cards = _part_method("members", Members.account_cards)
    find_members = _part_method("members", Members.find_members)
    member_phone = _part_method("members", Members.member_phone)
    rebuild_member_index = _part_method("member_index", MemberIndex.rebuild_member_index)
    close_account = _part_method("members", Members.close_account)
    update_member = _part_method("members", Members.update_member)
    set_spend_order = _part_method("members", Members.set_spend_order)
    set_balance_cap = _part_method("members", Members.set_balance_cap)
    set_member_pin_threshold = _part_method("members", Members.set_member_pin_threshold)
    shop_settings = _part_method("members", Members.shop_settings)
    add_promotion = _part_method("members", Members.add_promotion)
    remove_promotion = _part_method("members", Members.remove_promotion)
    promotions = _part_method("members", Members.promotions)
    bonus_for = _part_method("members", Members.bonus_for)
    # (private: reconcile_service/members.py restores settings through it)
    _setting = _part_method("members", Members.setting)
