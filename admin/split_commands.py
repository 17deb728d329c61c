"""`cashierctl split` / `cashierctl merge`: spread a hot account over several slots, and
fold it back.

    cashierctl split ACCOUNT --shards N [--txn-id ID] [--operator ID]
    cashierctl merge ACCOUNT [--txn-id ID] [--operator ID]

Both go through `core.Ledger.split_account` / `merge_account`: every step is journaled
and idempotent, so when the outcome is unknown (Redis did not answer) run the same
command again with the printed ``--txn-id`` and it finishes what was left undone.
Sharding helps only where the shards land on different Redis processes (a Cluster);
on a standalone Redis the shards are different keys in the same slot.

Exit codes follow cashierctl: 0 done, 1 declined (the reason is printed), 2 bad input,
3 Redis unavailable or unsafe, 4 txn id conflict.
"""
from __future__ import annotations

import json
import uuid

from core import Ledger, Result
from core.money import format_minor

from .exits import EXIT_DECLINED, EXIT_OK, guarded


def _report(result: Result, args, shards: int | None = None) -> int:
    if args.json:
        out = {"status": result.status.value, "balance_minor": result.balance_minor,
               "replayed": result.replayed, "txn_id": result.txn_id,
               "account_id": result.account_id, "kind": result.kind}
        if shards is not None:
            out["shards"] = shards
        print(json.dumps(out))
    else:
        again = " (already done earlier: finished what was left)" if result.replayed else ""
        verdict = "done" if result.applied else f"declined: {result.status.value}"
        into = f" into {shards} shards" if shards and result.applied else ""
        print(f"{result.kind} {result.account_id}{into}: {verdict}{again}; "
              f"total {format_minor(result.balance_minor)}; txn {result.txn_id}")
    return EXIT_OK if result.applied else EXIT_DECLINED


@guarded
def cmd_split(args) -> int:
    ledger = Ledger.from_url(args.redis_url, auto_init=False)
    txn = args.txn_id or f"ctl-split-{uuid.uuid4().hex[:16]}"
    return _report(ledger.split_account(args.account, shards=args.shards, txn_id=txn,
                                        cashier_id=args.operator), args, args.shards)


@guarded
def cmd_merge(args) -> int:
    ledger = Ledger.from_url(args.redis_url, auto_init=False)
    txn = args.txn_id or f"ctl-merge-{uuid.uuid4().hex[:16]}"
    return _report(ledger.merge_account(args.account, txn_id=txn, cashier_id=args.operator), args)


def register(subparsers) -> None:
    """Add `split` and `merge` to cashierctl's sub-commands."""
    p = subparsers.add_parser("split", help="spread a hot account over N sub-balances on other slots")
    p.add_argument("account")
    p.add_argument("--shards", type=int, required=True, help="number of sub-balances, 2..16")
    p.add_argument("--txn-id", help="reuse to retry a command whose outcome was unknown")
    p.add_argument("--operator", help="who does this (recorded as cashier id)")
    p.set_defaults(func=cmd_split)
    p = subparsers.add_parser("merge", help="fold a split account's sub-balances back into one")
    p.add_argument("account")
    p.add_argument("--txn-id", help="reuse to retry a command whose outcome was unknown")
    p.add_argument("--operator", help="who does this (recorded as cashier id)")
    p.set_defaults(func=cmd_merge)
