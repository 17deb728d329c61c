"""The reconcile service's lifecycle: connecting, the daemon loop, one-shot runs, status.

`Service` owns the Redis ledger, the database engine, the consumer and the reconciler.
The daemon (`run_daemon`) applies batches of every partition and, between batches, runs
its periodic work (lag and memory metrics, trimming, hold releases, reconciliation
passes), each piece on its own timer whatever the load, a failure of one postponing only
that one (`PeriodicTask`). When Redis or the database is away it backs off
(exponentially, with jitter), reports it (log, metrics, /healthz) and carries on where
the group left it. When Redis is full (maxmemory, noeviction) it keeps draining,
acknowledging and trimming, which need no memory and free it, and says which periodic
work it cannot do until memory is freed. With `wait_replicas` in the Redis URL it books
only batches that replicas hold (`journal`); one they do not confirm in time waits, with
the same backoff, without marking Redis down. SIGTERM/SIGINT finish the current batch
(commit and XACK) and exit 0; a second signal exits at once, which is also safe
because nothing is acknowledged before its commit.
"""
from __future__ import annotations

import logging
import os
import random
import signal
import socket
import time
from typing import Callable, TypeVar

import redis.exceptions as rx
from sqlalchemy import select
from sqlalchemy.exc import InterfaceError, OperationalError

from core import Ledger, LedgerNotInitialized, LedgerUnavailable, RetryPolicy, UnsafeRedisConfig
from core.connection import redacted
from core.errors import NotReplicated

from .config import ConfigError, Settings
from .db import make_engine, migrate, require_current_schema
from .holds import HoldSweeper, summary as holds_summary
from .journal import Consumer, Journal
from .metrics import Metrics
from .models import JournalProgress, ReconcilePass
from .reconcile import PassReport, Reconciler, open_discrepancies
from .restore import RestoreReport, database_partitions, redis_has_ledger, restore
from .store import get_setting, put_setting

log = logging.getLogger(__name__)
T = TypeVar("T")

REDIS_DOWN = (rx.ConnectionError, rx.TimeoutError, rx.BusyLoadingError, rx.ClusterDownError,
              rx.TryAgainError, rx.ReadOnlyError, rx.MasterDownError)
DB_DOWN = (OperationalError, InterfaceError)
ONE_SHOT_DEADLINE_S = 60.0
LAG_INTERVAL_S = 5.0


class Stopped(Exception):
    """A stop was requested while waiting."""


class Unavailable(Exception):
    """A server stayed away past the deadline; the message names it and why."""


def _lost_data(exc: BaseException) -> bool:
    return isinstance(exc, LedgerNotInitialized) or (
        isinstance(exc, rx.ResponseError) and "NOGROUP" in str(exc))


# What a server says when it is up but the settings are wrong: waiting will not help, so
# these are configuration errors at once (exit 2), never "unavailable, retrying".
_DB_CONFIG_MISTAKES = ("does not exist", "password authentication failed", "no password supplied",
                       "unable to open database file", "authentication failed", "no pg_hba.conf entry")


def config_mistake(exc: BaseException, redis_url: str | None = None) -> str | None:
    """The message of a ConfigError if `exc` is a wrong setting rather than an outage."""
    from core.exit_codes import EXIT_BAD_INPUT, classify
    if isinstance(exc, DB_DOWN):
        first_line = next((line.strip() for line in str(getattr(exc, "orig", exc)).splitlines()
                           if line.strip()), "")
        if any(words in first_line for words in _DB_CONFIG_MISTAKES):
            return f"database_url: the database server answered: {first_line[:300]}"
        return None
    from core.errors import ConfigError as CoreConfigError, InvalidRequest
    if isinstance(exc, InvalidRequest) and not isinstance(exc, CoreConfigError):
        return None      # a bad request inside the work (not a setting): handled where it is
    known = classify(exc, redis_url)
    if known is not None and known[0] == EXIT_BAD_INPUT:
        return known[1]
    return None


def redis_full(exc: BaseException) -> bool:
    """Redis refused a write because maxmemory is reached (noeviction): it is up, only
    writes that need memory wait; reads, XACK and XTRIM still work."""
    if isinstance(exc, rx.OutOfMemoryError):
        return True
    return isinstance(exc, LedgerUnavailable) and "out of memory" in str(exc)


class PeriodicTask:
    """One piece of the daemon's periodic work on its own timer. A failure postpones
    only this task, by a backoff that doubles up to `max_backoff_s`, so it is logged a
    few times a minute at most and never blocks the drain or the other tasks."""

    def __init__(self, name: str, what: str, interval_s: float, run: Callable[[], object], *,
                 first_backoff_s: float, max_backoff_s: float, due_at: float):
        self.name, self.what, self.interval_s, self.run = name, what, interval_s, run
        self.first_backoff_s, self.max_backoff_s = max(first_backoff_s, 0.05), max_backoff_s
        self.next_due = due_at
        self.delay_s = self.first_backoff_s
        self.failures = 0

    def due(self, now: float) -> bool:
        return self.interval_s > 0 and now >= self.next_due

    def succeeded(self, now: float) -> None:
        self.failures = 0
        self.delay_s = self.first_backoff_s
        self.next_due = now + self.interval_s

    def failed(self, now: float) -> float:
        """Postpone after a failure; answers the seconds until the next try."""
        self.failures += 1
        wait_s = self.delay_s * random.uniform(0.7, 1.0)
        self.next_due = now + wait_s
        self.delay_s = min(self.max_backoff_s, self.delay_s * 2)
        return wait_s


def _which(exc: BaseException) -> str | None:
    if isinstance(exc, LedgerNotInitialized) or _lost_data(exc):
        return None
    if isinstance(exc, REDIS_DOWN + (LedgerUnavailable,)):
        return "redis"
    if isinstance(exc, rx.ResponseError) and str(exc).startswith("NOREPLICAS"):
        return "redis"      # a primary cut off from its replicas (Sentinel is replacing it)
    if isinstance(exc, DB_DOWN):
        return "database"
    return None


class Service:
    def __init__(self, settings: Settings, metrics: Metrics | None = None, *, create_database: bool = True):
        self.settings = settings
        self.metrics = metrics or Metrics()
        self.consumer_name = settings.consumer_name or f"{socket.gethostname()}-{os.getpid()}"
        self.database_url = settings.resolved_database_url()
        # create_database=False (status): a missing SQLite file is an error, not created
        self.engine = make_engine(self.database_url, create=create_database)
        # socket timeout above XREADGROUP's BLOCK, or every idle block would time out
        self.ledger = Ledger.from_url(settings.redis_url, auto_init=False,
                                      socket_timeout_s=max(5.0, settings.block_ms / 1000 + 3),
                                      retry=RetryPolicy(deadline_s=2.0))
        self.stop_requested = False
        self.consumer: Consumer | None = None
        self.reconciler: Reconciler | None = None
        self.hold_sweeper: HoldSweeper | None = None
        self._signals = 0

    # ------------------------------------------------------------ plumbing

    def describe(self) -> dict:
        return {"redis": redacted(self.settings.redis_url), "database": redacted(self.database_url),
                "consumer": self.consumer_name}

    def close(self) -> None:
        try:
            self.ledger.close()
        finally:
            self.engine.dispose()

    def install_signal_handlers(self) -> None:
        def handler(signum, _frame):
            self._signals += 1
            if self._signals > 1:
                log.warning("second signal: exiting now (unacknowledged entries will be redelivered)")
                os._exit(1)
            log.info("stop requested: finishing the current batch", extra={"signal": signal.Signals(signum).name})
            self.stop_requested = True
        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)

    def sleep(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self.stop_requested and time.monotonic() < end:
            time.sleep(min(0.05, max(0.0, end - time.monotonic())))

    def with_retry(self, fn: Callable[[], T], what: str, deadline_s: float | None) -> T:
        """Run fn, retrying while Redis or the database is away (backoff with jitter) until
        `deadline_s` has passed (None: for ever). A server that answers that the settings
        are wrong (no such database, wrong password) raises ConfigError at once."""
        started = time.monotonic()
        delay = self.settings.first_backoff_s
        attempts = 0
        while True:
            if self.stop_requested:
                raise Stopped()
            try:
                result = fn()
                self.metrics.redis_up.set(1)
                self.metrics.database_up.set(1)
                return result
            except Exception as exc:  # classified below; anything else propagates
                if (mistake := config_mistake(exc, self.settings.redis_url)) is not None:
                    raise ConfigError(mistake) from None
                server = _which(exc)
                if server is None:
                    raise
                attempts += 1
                self._mark_down(server)
                waited = time.monotonic() - started
                remaining = None if deadline_s is None else deadline_s - waited
                if remaining is not None and remaining <= 0:
                    field = "redis_url" if server == "redis" else "database_url"
                    raise Unavailable(f"{what}: {field}: the {server} at {self.describe()[server]} did not "
                                      f"answer within the retry deadline of {deadline_s:g} s ({attempts} "
                                      f"attempt(s) in {waited:.1f} s; last error {type(exc).__name__}: "
                                      f"{str(exc).splitlines()[0][:300] if str(exc) else '-'})") from None
                log.warning(f"{server} unavailable, retrying", extra={
                    "during": what, "retry_in_s": round(delay, 2), "error": type(exc).__name__,
                    "detail": str(exc).splitlines()[0][:300] if str(exc) else ""})
                pause = delay * random.uniform(0.7, 1.0)
                # the last pause ends at the deadline, so the last attempt is made at it
                self.sleep(pause if remaining is None else min(pause, remaining))
                delay = min(self.settings.max_backoff_s, max(delay * 2, 0.05))

    def _mark_down(self, server: str) -> None:
        (self.metrics.redis_up if server == "redis" else self.metrics.database_up).set(0)

    def one_shot_deadline_s(self) -> float:
        return self.settings.retry_deadline_s or ONE_SHOT_DEADLINE_S

    # ------------------------------------------------------------ setup

    def prepare_database(self, auto_migrate: bool) -> None:
        if auto_migrate:
            migrate(self.engine)
        else:
            require_current_schema(self.engine)

    def ready(self, *, restore_if_empty: bool) -> RestoreReport | None:
        """Make sure Redis holds a ledger (restoring it from the database when it lost
        everything and that is allowed), remember its partition count, build the consumer."""
        report = None
        if not redis_has_ledger(self.ledger):
            if restore_if_empty and database_partitions(self.engine):
                log.warning("Redis holds no ledger: restoring every account from the database")
                report = self.run_restore()
            else:
                raise LedgerNotInitialized("no cs:meta key")
        self.load_scripts()
        partitions = len(self.ledger.partitions)
        if get_setting(self.engine, "partitions") != str(partitions):
            put_setting(self.engine, "partitions", str(partitions))
        s = self.settings
        self.consumer = Consumer(self.ledger, self.engine, self.consumer_name, batch_size=s.batch_size,
                                 claim_idle_ms=s.claim_idle_ms, metrics=self.metrics)
        self.reconciler = Reconciler(self.ledger, self.engine, self.metrics, self.consumer_name)
        self.hold_sweeper = HoldSweeper(self.ledger, self.engine)
        return report

    def load_scripts(self) -> None:
        """The ledger's scripts on the primary and, on Sentinel, on every replica: terminals
        whose user may not load scripts then find them after a Redis restart or a failover
        (the daemon repeats this at every trim, which also covers a replica that rejoined)."""
        try:
            self.ledger.scripts.load_all(self.ledger.client)
        except LedgerUnavailable as exc:     # this Redis user may not load scripts
            log.warning("could not load the ledger scripts", extra={"detail": str(exc)[:300]})

    def run_restore(self, progress=None) -> RestoreReport:
        s = self.settings
        return restore(self.ledger, self.engine, self.consumer_name, self.metrics, batch_size=s.batch_size,
                       claim_idle_ms=s.claim_idle_ms, progress=progress, stop=lambda: self.stop_requested)

    # ------------------------------------------------------------ work

    def trim(self) -> int:
        journal = Journal(self.ledger)
        return sum(journal.trim(p, self.settings.trim_keep_s) for p in self.ledger.partitions)

    def reconcile_cycle(self, *, drain: bool = True, progress=None) -> PassReport:
        """Drain (optionally), pass; after repairs, drain their entries and pass again so
        that the answer reflects the repaired state."""
        assert self.consumer and self.reconciler and self.hold_sweeper
        if drain:
            # what the database knows of expired holds first, so their release is
            # journaled and drained with everything else
            self.consumer.drain(stop=lambda: self.stop_requested)
            if self.hold_sweeper.sweep():
                self.consumer.drain(stop=lambda: self.stop_requested)
        report = self.reconciler.run_pass(progress=progress)
        if report.repairs and not self.stop_requested:
            self.consumer.drain(stop=lambda: self.stop_requested)
            report = self.reconciler.run_pass(progress=progress)
        return report

    def run_once(self) -> int:
        deadline = self.one_shot_deadline_s()
        self.with_retry(lambda: self.prepare_database(auto_migrate=True), "migrating the database", deadline)
        self.with_retry(lambda: self.ready(restore_if_empty=self.settings.restore_on_start),
                        "connecting", deadline)
        drained = self.with_retry(lambda: self.consumer.drain(stop=lambda: self.stop_requested),
                                  "draining the journal", deadline)
        if self.stop_requested:
            return 0
        self.with_retry(self.trim, "trimming the journal", deadline)
        report = self.with_retry(self.reconcile_cycle, "reconciling", deadline)
        self.with_retry(self.consumer.update_lag_metrics, "reading lag", deadline)
        log.info("run --once finished", extra={"entries": drained, **report.as_dict()})
        return 0 if report.clean else 1

    def periodic_tasks(self, now: float) -> list[PeriodicTask]:
        s = self.settings

        def trim() -> None:
            trimmed = self.trim()
            self.load_scripts()
            self.consumer.forget_idle_consumers()
            if trimmed:
                log.debug("journal trimmed", extra={"entries": trimmed})

        def task(name, what, interval_s, run, due_at):
            return PeriodicTask(name, what, interval_s, run, first_backoff_s=s.first_backoff_s,
                                max_backoff_s=s.max_backoff_s, due_at=due_at)
        return [
            task("lag", "read lag and memory", LAG_INTERVAL_S, self.update_gauges, now),
            task("trim", "trim the journal", s.trim_interval_s, trim, now),
            task("holds", "journal the release of expired holds (expire_holds writes)",
                 s.hold_expiry_interval_s, lambda: self.hold_sweeper.sweep(), now),
            task("pass", "run a reconciliation pass", s.reconcile_interval_s,
                 lambda: self.reconciler.run_pass(), now + s.reconcile_interval_s),
        ]

    def update_gauges(self) -> None:
        self.consumer.update_lag_metrics()
        self.metrics.observe_memory(self.ledger.client)

    def run_periodic(self, task: PeriodicTask) -> None:
        """Run one due task; its failure is logged and postpones it alone. A wrong setting
        or a Redis that lost its data is the main loop's to handle, so those propagate."""
        try:
            task.run()
        except Exception as exc:
            if config_mistake(exc, self.settings.redis_url) is not None or _lost_data(exc) \
                    or isinstance(exc, UnsafeRedisConfig):
                raise
            retry_in_s = task.failed(time.monotonic())
            self.metrics.periodic_failures.labels(task.name).inc()
            detail = {"task": task.name, "retry_in_s": round(retry_in_s, 2), "failures": task.failures,
                      "error": type(exc).__name__, "detail": str(exc).splitlines()[0][:300] if str(exc) else ""}
            if redis_full(exc):
                self.metrics.redis_full.set(1)
                log.warning(f"Redis is full (maxmemory reached, noeviction): cannot {task.what}; "
                            "draining, acknowledging and trimming go on", extra=detail)
            elif (server := _which(exc)) is not None:
                self._mark_down(server)
                log.warning(f"{server} unavailable: cannot {task.what}, retrying", extra=detail)
            else:
                log.exception(f"{task.name}: unexpected error; retrying after backoff", extra=detail)
            return
        task.succeeded(time.monotonic())
        if task.name == "holds":
            self.metrics.redis_full.set(0)        # a hold release wrote: Redis has room again

    def run_daemon(self) -> int:
        s = self.settings
        self.metrics.started.set(time.time())
        self.metrics.pass_interval.set(s.reconcile_interval_s)
        self.with_retry(lambda: self.prepare_database(auto_migrate=True), "migrating the database", None)
        log.info("reconcile service starting", extra=self.describe())
        ready = False
        tasks: list[PeriodicTask] = []
        delay = s.first_backoff_s
        while not self.stop_requested:
            try:
                if not ready:
                    self.ready(restore_if_empty=s.restore_on_start)
                    ready = True
                    tasks = self.periodic_tasks(time.monotonic())
                    log.info("consuming the journal", extra={"partitions": len(self.ledger.partitions)})
                handled = 0
                for part in self.ledger.partitions:
                    if self.stop_requested:
                        break
                    handled += self.consumer.step(part)
                self.metrics.redis_up.set(1)
                self.metrics.database_up.set(1)
                self.metrics.beat()
                delay = s.first_backoff_s
                # between batches, whatever the load: a pass or a hold sweep never waits
                # for the journal to go quiet
                for task in tasks:
                    if not self.stop_requested and task.due(time.monotonic()):
                        self.run_periodic(task)
                if handled == 0 and not self.stop_requested:
                    parts = self.ledger.partitions
                    if len(parts) == 1:
                        self.consumer.step(parts[0], block_ms=s.block_ms)
                    else:
                        self.sleep(s.block_ms / 1000)
            except Exception as exc:
                if (mistake := config_mistake(exc, self.settings.redis_url)) is not None:
                    raise ConfigError(mistake) from None       # waiting cannot fix a wrong setting
                server = _which(exc)
                if _lost_data(exc):
                    ready = False
                    log.error("Redis holds no ledger data (lost or never initialized); waiting",
                              extra={"detail": str(exc)[:300], "retry_in_s": round(delay, 2)})
                elif isinstance(exc, UnsafeRedisConfig):
                    log.error(str(exc))
                elif isinstance(exc, NotReplicated):
                    # Redis answers, its replicas did not confirm a batch: the consumer has
                    # logged and counted it; the batch stays pending and is read again
                    pass
                elif redis_full(exc):
                    self.metrics.redis_full.set(1)
                    log.warning("Redis is full (maxmemory reached, noeviction) and refused a write of the "
                                "drain; retrying", extra={"retry_in_s": round(delay, 2),
                                                          "detail": str(exc).splitlines()[0][:300]})
                elif server is not None:
                    self._mark_down(server)
                    log.warning(f"{server} unavailable, retrying", extra={
                        "retry_in_s": round(delay, 2), "error": type(exc).__name__,
                        "detail": str(exc).splitlines()[0][:300] if str(exc) else ""})
                else:
                    # Unknown errors must not kill a money daemon silently nor spin: log with
                    # the traceback, back off, try again (the batch was not acknowledged).
                    log.exception("unexpected error; retrying after backoff")
                self.metrics.beat()
                self.sleep(delay * random.uniform(0.7, 1.0))
                delay = min(s.max_backoff_s, max(delay * 2, 0.05))
        log.info("reconcile service stopped")
        return 0

    # ------------------------------------------------------------ status

    def status(self) -> dict:
        out: dict = {**self.describe(), "partitions": [], "last_pass": None}
        with self.engine.connect() as conn:
            progress = {p.journal_partition: p for p in conn.execute(select(JournalProgress)).all()}
            last = conn.execute(select(ReconcilePass).where(ReconcilePass.outcome != "running")
                                .order_by(ReconcilePass.id.desc()).limit(1)).first()
        if last is not None:
            out["last_pass"] = {"id": last.id, "started_at": last.started_at.isoformat(),
                                "finished_at": last.finished_at.isoformat() if last.finished_at else None,
                                "outcome": last.outcome, "accounts_checked": last.accounts_checked,
                                "accounts_in_flight": last.accounts_in_flight,
                                "discrepancies_found": last.discrepancies_found,
                                "repairs_made": last.repairs_made}
        out["holds"] = holds_summary(self.engine)
        count, items = open_discrepancies(self.engine)
        out["open_discrepancies"] = count
        out["discrepancies"] = items
        try:
            if not redis_has_ledger(self.ledger):
                out["redis_error"] = "Redis holds no ledger (cs:meta missing): run `reconcile-service restore`"
                parts = []
            else:
                journal = Journal(self.ledger)
                parts = [journal.state(p) for p in self.ledger.partitions]
        except (LedgerUnavailable,) + REDIS_DOWN as exc:
            out["redis_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
            parts = []
        for st in parts:
            p = progress.get(st.partition)
            out["partitions"].append({
                "partition": st.partition, "stream_length": st.length, "lag": st.lag, "pending": st.pending,
                "unapplied": st.unapplied, "last_delivered_id": st.last_delivered_id,
                "db_entries_applied": p.entries_applied if p else 0,
                "db_last_journal_id": p.last_journal_id if p else None,
                "db_last_batch_at": p.last_batch_at.isoformat() if p else None})
        return out
