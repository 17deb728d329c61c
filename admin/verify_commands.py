"""`cashierctl verify`: the invariant checker of issue 8 on a live installation.

    cashierctl [--redis-url URL] [--json] verify [--database-url URL] [--no-drain]

Drains the journal into the database of record (as a consumer of the reconcile group;
`--no-drain` compares only what is applied), then checks every account: opening +
credits + refunds + compensations - deductions - captures == Redis balance == database
balance == sum of its entries; every journaled txn in the database once and every
duplicate reversed; no negative balance; no hold resolved twice. Prints what it
checked and every violation with its evidence (`--json` too). Exit codes
(`core.exit_codes`): 0 no violation, 1 violations, 2 bad input, 3 Redis or the database
unavailable, 4 refused (the database schema is not migrated, Redis holds no ledger).
Added to cashierctl through `register(subparsers)` (see cashierctl's `_plugins`); it
needs the reconcile service installed (it reads the database through
`reconcile_service.verify`).
"""
from __future__ import annotations

import json
import os
import sys

from core.exit_codes import EXIT_BAD_INPUT, EXIT_OK, EXIT_REFUSED, EXIT_UNAVAILABLE, classify
from core.exit_codes import EXIT_DECLINED as EXIT_VIOLATIONS


def cmd_verify(args) -> int:
    try:
        from reconcile_service.config import ConfigError, default_database_url
        from reconcile_service.db import SchemaNotCurrent, make_engine, require_current_schema
        from reconcile_service.verify import verify
    except ModuleNotFoundError as exc:
        print(f"cashierctl verify: needs the reconcile service installed ({exc.name} is missing)",
              file=sys.stderr)
        return EXIT_REFUSED
    from redis.exceptions import RedisError
    from sqlalchemy.exc import SQLAlchemyError

    from core import Ledger, LedgerError, RetryPolicy
    from core.connection import redacted

    url = args.database_url or default_database_url()
    try:
        engine = make_engine(url, create=False)      # a reader: never creates an SQLite file
    except ConfigError as exc:
        print(f"cashierctl verify: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        ledger = Ledger.from_url(args.redis_url, auto_init=False,
                                 retry=RetryPolicy(deadline_s=args.retry_deadline_s))
    except Exception as exc:
        engine.dispose()
        known = classify(exc, args.redis_url)
        if known is None:
            raise
        print(f"cashierctl verify: {known[1]}", file=sys.stderr)
        return known[0]
    try:
        require_current_schema(engine)
        report = verify(ledger, engine, drain_first=not args.no_drain)
    except SchemaNotCurrent as exc:
        print(f"cashierctl verify: database_url: {redacted(url)}: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    except (LedgerError, RedisError) as exc:
        code, message = classify(exc, args.redis_url)
        print(f"cashierctl verify: {message}", file=sys.stderr)
        return code
    except SQLAlchemyError as exc:
        print(f"cashierctl verify: database_url: the database at {redacted(url)} failed: "
              f"{str(exc).splitlines()[0][:300]}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    finally:
        ledger.close()
        engine.dispose()
    if args.json:
        print(json.dumps(report.as_dict(), indent=2, default=str))
    else:
        print("checked: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in sorted(report.checked.items())))
        for v in report.violations:
            print(f"VIOLATION {v.kind} {v.account_id or '-'}: {v.detail}"
                  + (f"  evidence {json.dumps(v.evidence, default=str)}" if v.evidence else ""))
        print(f"{len(report.violations)} violation(s)")
    return EXIT_OK if report.ok else EXIT_VIOLATIONS


def register(subparsers) -> None:
    """Add the `verify` command to cashierctl's subparsers."""
    p = subparsers.add_parser("verify", help="check the ledger's invariants across Redis and the database")
    p.add_argument("--database-url", default=os.environ.get("CASHIER_DATABASE_URL"),
                   help="database of record (env CASHIER_DATABASE_URL; default: the reconcile service's SQLite file)")
    p.add_argument("--no-drain", action="store_true",
                   help="do not apply pending journal entries first (accounts in flight are skipped)")
    p.set_defaults(func=cmd_verify)
