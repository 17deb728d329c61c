"""`cashierctl capacity`: how much Redis memory this installation needs at a given rate
(issue 33 item 1).

    cashierctl capacity --ops-per-s 2 [--accounts N] [--retention-s S] [--journal-keep-s S]
                        [--trim-interval-s S] [--lag-s S] [--reconcile-config PATH]

The byte costs per part are `core.capacity`'s (measured by `python -m bench --parts
capacity`). The retention is the shop's setting (cs:meta `retention_s`, set by `cashierctl
init --retention-s`, what every program of the shop runs with; `core.ledger.DEFAULT_RETENTION_S`
with `--accounts`, when nothing is read from Redis); the journal keep and trim interval are the reconcile
service's settings (its defaults < its TOML file, `--reconcile-config` or
CASHIER_RECONCILE_CONFIG). Without `--accounts` the accounts are counted on Redis
(`--redis-url`) and the estimate is set against its maxmemory and what it uses now; with
`--accounts` nothing is read from Redis. Exit codes: 0 it fits (or no Redis was read),
1 the planned maxmemory is above Redis's maxmemory, 2 bad input (the message names the
field), 3 Redis did not answer. Added to cashierctl through `register(subparsers)`.
"""
from __future__ import annotations

import argparse
import json
import math
import os

from core import InvalidRequest, Ledger, RetryPolicy
from core import capacity
from core.capacity import human_bytes
from core.ledger import DEFAULT_RETENTION_S
from core.validation import MAX_RETENTION_S

from .exits import EXIT_DECLINED, EXIT_OK, guarded

# the reconcile service's defaults, for an installation without it (a till-only machine)
FALLBACK_JOURNAL_KEEP_S = 3600.0
FALLBACK_TRIM_INTERVAL_S = 60.0
MAX_OPS_PER_S = 1_000_000
MAX_ACCOUNTS = 1_000_000_000


def _number(field: str, *, low: float, high: float, whole: bool = False, low_open: bool = False):
    def parse(text: str):
        try:
            value = int(text) if whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{field}: {text!r} is not a {'whole ' if whole else ''}number") from None
        if not math.isfinite(value) or value < low or (low_open and value == low) or value > high:
            bound = f"above {low:g}" if low_open else f"at least {low:g}"
            raise argparse.ArgumentTypeError(f"{field}: must be {bound} and at most {high:g}, got {text}")
        return value
    return parse


def _reconcile_settings(args) -> tuple[float, float, str]:
    """(journal keep s, trim interval s, where they came from)."""
    try:
        from reconcile_service.config import load_settings
    except ModuleNotFoundError:
        return FALLBACK_JOURNAL_KEEP_S, FALLBACK_TRIM_INTERVAL_S, "reconcile service defaults (not installed)"
    from reconcile_service.config import ENV_CONFIG, ConfigError
    path = args.reconcile_config or os.environ.get(ENV_CONFIG)
    try:
        settings = load_settings(config_path=path, environ={})
    except ConfigError as exc:              # names the setting and the file: bad input, exit 2
        raise InvalidRequest("reconcile_config", str(exc)) from None
    return settings.trim_keep_s, settings.trim_interval_s, (f"reconcile settings of {path}" if path
                                                            else "reconcile service defaults")


def _redis_state(args) -> tuple[int, int, int, int]:
    """(accounts, used_memory, maxmemory, retention_s) of the Redis at --redis-url (the
    fullest primary's memory; the shop's retention setting of its cs:meta)."""
    ledger = Ledger.from_url(args.redis_url, auto_init=False,
                             retry=RetryPolicy(deadline_s=args.retry_deadline_s))
    client = ledger.client
    accounts = sum(int(client.scard(p.accounts)) for p in ledger.partitions)
    used, limit = capacity.memory_use(client)
    return accounts, used, limit, ledger.retention_s


@guarded
def cmd_capacity(args) -> int:
    keep_s, trim_s, source = _reconcile_settings(args)
    if args.journal_keep_s is not None:
        keep_s, source = args.journal_keep_s, "command line"
    if args.trim_interval_s is not None:
        trim_s = args.trim_interval_s
    retention_s, retention_from = DEFAULT_RETENTION_S, "the default"
    used = limit = None
    accounts = args.accounts
    if accounts is None:
        accounts, used, limit, retention_s = _redis_state(args)
        retention_from = "the shop's setting"
    if args.retention_s is not None:
        retention_s, retention_from = args.retention_s, "command line"
    est = capacity.estimate(args.ops_per_s, accounts=accounts, retention_s=retention_s,
                            journal_keep_s=keep_s, trim_interval_s=trim_s, lag_s=args.lag_s)
    fits = None if limit is None else (limit > 0 and est.maxmemory_bytes <= limit)
    if args.json:
        print(json.dumps(dict(est.as_dict(), used_memory_bytes=used, redis_maxmemory_bytes=limit, fits=fits,
                              journal_settings_from=source, retention_from=retention_from)))
    else:
        _print_text(est, keep_s, trim_s, source, used, limit, fits, retention_from)
    return EXIT_DECLINED if fits is False else EXIT_OK


def _print_text(est: capacity.Estimate, keep_s: float, trim_s: float, source: str, used, limit,
                fits, retention_from: str = "the default") -> None:
    days = est.retention_s / 86400
    print(f"At {est.ops_per_s:g} operations/s with {est.accounts:,} accounts (journal held {keep_s:g} s after "
          f"booking + trim every {trim_s:g} s + lag {est.journal_held_s - keep_s - trim_s:g} s: {source}; "
          f"retention {est.retention_s} s: {retention_from}):")
    print(f"  idempotency records  {est.records_held:>14,} held ({days:g} day{'' if days == 1 else 's'} retention) × "
          f"{capacity.RECORD_BYTES + capacity.KEYSPACE_BYTES_PER_KEY} bytes = {human_bytes(est.record_bytes)}")
    print(f"  journal entries      {est.journal_entries_held:>14,} held ({est.journal_held_s:g} s) × "
          f"{capacity.JOURNAL_ENTRY_BYTES} bytes = {human_bytes(est.journal_bytes)}")
    print(f"  accounts             {est.accounts:>14,} × {capacity.ACCOUNT_BYTES} bytes = "
          f"{human_bytes(est.account_bytes)}")
    print(f"  empty ledger                        {human_bytes(est.base_bytes)}")
    print(f"  total, steady state                 {human_bytes(est.total_bytes)}")
    print(f"  plan maxmemory at least             {human_bytes(est.maxmemory_bytes)} "
          f"(the steady state at {capacity.PLAN_FILL:.0%}, under the first alert)")
    if limit is None:
        return
    now = f"; it uses {human_bytes(used)} now"
    if not limit:
        print(f"Redis has no maxmemory set{now}: set one (and noeviction), so a full Redis refuses writes "
              "instead of the machine swapping or the kernel killing it")
    elif fits:
        print(f"Redis maxmemory {human_bytes(limit)}: fits{now}")
    else:
        print(f"Redis maxmemory {human_bytes(limit)}: too small for this rate{now}; raise it to "
              f"{human_bytes(est.maxmemory_bytes)} or shorten the retention")


def register(subparsers) -> None:
    p = subparsers.add_parser("capacity", help="the Redis memory this installation needs at a rate")
    p.add_argument("--ops-per-s", required=True, type=_number("ops_per_s", low=0, high=MAX_OPS_PER_S,
                                                              low_open=True),
                   help="average operations per second over the whole day (every till together)")
    p.add_argument("--accounts", type=_number("accounts", low=0, high=MAX_ACCOUNTS, whole=True),
                   help="accounts (members) to plan for (default: counted on Redis, which is then read)")
    p.add_argument("--retention-s", type=_number("retention_s", low=1, high=MAX_RETENTION_S, whole=True),
                   help="idempotency retention (default the shop's setting in cs:meta, "
                        f"`cashierctl init --retention-s`; {DEFAULT_RETENTION_S} s with --accounts)")
    p.add_argument("--journal-keep-s", type=_number("journal_keep_s", low=0, high=MAX_RETENTION_S),
                   help="how long booked journal entries stay in Redis (default the reconcile service's trim_keep_s)")
    p.add_argument("--trim-interval-s", type=_number("trim_interval_s", low=0, high=MAX_RETENTION_S),
                   help="how often the reconcile service trims (default its trim_interval_s)")
    p.add_argument("--lag-s", type=_number("lag_s", low=0, high=MAX_RETENTION_S), default=0.0,
                   help="journal lag to allow for, e.g. the longest database outage to ride out (default 0)")
    p.add_argument("--reconcile-config", help="the reconcile service's TOML file (default CASHIER_RECONCILE_CONFIG)")
    p.set_defaults(func=cmd_capacity)
