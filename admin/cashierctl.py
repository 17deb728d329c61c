"""`cashierctl`: the command line of the shop's IT person and back office.

Opens accounts, tops up, freezes, shows balances and recent journal entries, and
manages cashiers. Every command goes through `core.Ledger`, so the same validation,
idempotency and journal apply as at the till. Amounts are typed in yuan ("12.50")
and parsed exactly. Each command prints its txn id: if the outcome is unknown
(Redis did not answer), run the same command again with ``--txn-id`` and nothing is
applied twice.

Exit codes (`core.exit_codes`, the same for every program of the shop; printed by
`--help`): 0 done, 1 declined (the reason is printed), 2 bad input (the message names
the field; nothing changed), 3 Redis did not answer within --retry-deadline-s (the
outcome is unknown: rerun with the same --txn-id), 4 refused (txn id already used for
another request, Redis holds no ledger or may evict keys), 130 interrupted.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
import uuid

from core import AccountNotFound, InvalidRequest, Ledger, Result, RetryPolicy, Status, __version__
from core.connection import redacted
from core.exit_codes import epilog
from core.money import format_minor, parse_minor

from .exits import EXIT_DECLINED, EXIT_INTERRUPTED, EXIT_OK, guarded

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DEFAULT_RETRY_DEADLINE_S = RetryPolicy().deadline_s


def _ledger(args) -> Ledger:
    return Ledger.from_url(args.redis_url, auto_init=False, retry=RetryPolicy(deadline_s=args.retry_deadline_s))


def _txn(args, verb: str) -> str:
    return args.txn_id or f"ctl-{verb}-{uuid.uuid4().hex[:16]}"


def _report(result: Result, args) -> int:
    if result.status is Status.ACCOUNT_NOT_FOUND:
        # (only if it vanished after _existing): the same words and code as `balance`;
        # "declined ... balance 0.00" would read as if the account existed
        raise AccountNotFound(result.account_id)
    if args.json:
        print(json.dumps({"status": result.status.value, "balance_minor": result.balance_minor,
                          "replayed": result.replayed, "txn_id": result.txn_id,
                          "account_id": result.account_id, "kind": result.kind}))
    else:
        again = " (already done earlier: nothing changed now)" if result.replayed else ""
        verdict = "done" if result.applied else f"declined: {result.status.value}"
        print(f"{result.kind} {result.account_id}: {verdict}{again}; "
              f"balance {format_minor(result.balance_minor)}; txn {result.txn_id}")
    return EXIT_OK if result.applied else EXIT_DECLINED


def cmd_init(args) -> int:
    ledger = _ledger(args)
    schema = ledger.init(partitions=args.partitions, retention_s=args.retention_s)
    retention_s = ledger.retention_s
    print(f"ledger ready on {redacted(args.redis_url)}: {schema.partitions} journal partition(s); "
          f"idempotency retention {retention_s} s ({retention_s / 86400:g} days)")
    return EXIT_OK


def _shop_retention(text: str) -> int:
    """--retention-s: whole seconds, 1 day to 400 days (core.validation.check_shop_retention)."""
    from core.validation import check_shop_retention
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"retention_s: {text!r} is not a whole number of seconds") from None
    try:
        return check_shop_retention(value)
    except InvalidRequest as exc:
        raise argparse.ArgumentTypeError(f"{exc.field}: {exc.reason}") from None


def cmd_open(args) -> int:
    initial = parse_minor(args.initial, "initial", allow_zero=True)
    return _report(_ledger(args).open_account(args.account, txn_id=_txn(args, "open"),
                                              initial_minor=initial, cashier_id=args.operator,
                                              holder_name=args.holder, phone=args.phone), args)


def _existing(ledger: Ledger, account_id: str) -> Ledger:
    """Refuse an unknown account before writing anything (AccountNotFound: exit 2, the same
    words as `balance`): a mistyped id is bad input, and the write would store a decline."""
    ledger.account(account_id)
    return ledger


def cmd_topup(args) -> int:
    amount = parse_minor(args.amount, "amount")
    ledger = _existing(_ledger(args), args.account)
    bonus = parse_minor(args.bonus, "bonus", allow_zero=True) if args.bonus else 0
    if args.promo and not args.bonus:          # the shop's promotion for this amount, if any
        promo = ledger.bonus_for(amount)
        bonus = promo.bonus_minor if promo else 0
    return _report(ledger.credit(args.account, amount, txn_id=_txn(args, "topup"), method=args.method,
                                 bonus_minor=bonus, cashier_id=args.operator), args)


def cmd_freeze(args) -> int:
    ledger = _existing(_ledger(args), args.account)
    op = ledger.freeze if args.command == "freeze" else ledger.unfreeze
    return _report(op(args.account, txn_id=_txn(args, args.command), cashier_id=args.operator), args)


def cmd_balance(args) -> int:
    info = _ledger(args).account(args.account)
    if args.json:
        print(json.dumps({"account_id": info.account_id, "balance_minor": info.balance_minor,
                          "status": info.status, "holder_name": info.holder_name}))
    else:
        holder = f" {info.holder_name}" if info.holder_name else ""
        print(f"{info.account_id}{holder}: {format_minor(info.balance_minor)} ({info.status})")
    return EXIT_OK


def cmd_journal(args) -> int:
    entries = _ledger(args).journal(args.account, count=args.count)
    if args.json:
        print(json.dumps([dataclasses.asdict(e) for e in entries]))
        return EXIT_OK
    if not entries:
        print(f"no journal entries of {args.account} are held in Redis "
              "(older entries are in the database)")
    for e in entries:
        print(f"{e.journal_id:>22}  {e.kind:<10} {format_minor(e.amount_minor):>12}  "
              f"-> {format_minor(e.balance_after_minor):>12}  txn {e.txn_id}"
              f"{'  orig ' + e.original_txn_id if e.original_txn_id else ''}"
              f"{'  term ' + e.terminal_id if e.terminal_id else ''}"
              f"{'  cashier ' + e.cashier_id if e.cashier_id else ''}")
    return EXIT_OK


def cmd_acl(args) -> int:
    """Print the three users' ACL SETUSER lines, or (--apply) set them on every node,
    delete the till user of earlier versions and warn about any other user that can
    write the ledger's keys (core.acl)."""
    from core.acl import FORMER_USERS, apply_users, ledger_users, ledger_writers, retire_users
    if args.terminal_password:
        raise InvalidRequest("terminal_password", "there is no till user any more (tills talk to the gateway, "
                             "which has its own user): give --gateway-password (CASHIER_GATEWAY_PASSWORD), "
                             "a new one, not the tills' old password")
    users = ledger_users(args.gateway_password or "<gateway-password>",
                         args.reconcile_password or "<reconcile-password>",
                         args.admin_password or "<admin-password>")
    if not args.apply:
        for user in users:
            print(user.line())
        return EXIT_OK
    if not (args.gateway_password and args.reconcile_password and args.admin_password):
        raise InvalidRequest("password", "--apply needs --gateway-password, --reconcile-password "
                             "and --admin-password (or CASHIER_*_PASSWORD variables)")
    client = _ledger(args).client
    nodes = apply_users(client, users)
    print(f"applied {len(users)} users ({', '.join(u.name for u in users)}) on {', '.join(nodes)}")
    retired = retire_users(client)
    for user, where in retired.removed.items():
        closed = retired.connections.get(user, 0)
        if user in FORMER_USERS:        # a former name of one of the three
            print(f"deleted the former user {user} (now {user.removeprefix('cashier-')}) on {', '.join(where)}"
                  + (f" ({closed} open connection(s) closed: give that program the user "
                     f"{user.removeprefix('cashier-')} in its URL)" if closed else ""))
            continue
        print(f"deleted the old till user {user} on {', '.join(where)}"
              + (f" ({closed} open connection(s) closed: a till still talking to Redis directly must "
                 "use the gateway now)" if closed else ""))
    for writer in ledger_writers(client):
        print(f"cashierctl: warning: user {writer.name} can write the ledger's keys "
              f"({', '.join(writer.can)} on cs:*) on {', '.join(writer.nodes)} and is not one of the "
              f"ledger's users: left as it is; {writer.fix}",
              file=sys.stderr)
    return EXIT_OK


def cmd_scripts_load(args) -> int:
    ledger = _ledger(args)
    ledger.scripts.load_all(ledger.client)
    print(f"loaded {len(ledger.scripts.scripts)} scripts (function library {ledger.scripts.library_name}) "
          f"on {redacted(args.redis_url)}")
    return EXIT_OK


def cmd_doctor(args) -> int:
    from core.doctor import FAIL, diagnose
    findings = diagnose(_ledger(args), args.redis_url)
    if args.json:
        print(json.dumps([dataclasses.asdict(f) for f in findings]))
    else:
        for f in findings:
            print(f"[{f.level:>4}] {f.check:<12} {f.detail}" + (f"\n       fix: {f.fix}" if f.fix else ""))
    return EXIT_DECLINED if any(f.level == FAIL for f in findings) else EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cashierctl", description=__doc__.split("\n\n")[0],
                                     epilog=epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"cashierctl {__version__}",
                        help="print the version and exit")
    parser.add_argument("--redis-url", default=os.environ.get("CASHIER_REDIS_URL", DEFAULT_REDIS_URL),
                        help="central Redis (env CASHIER_REDIS_URL; default redis://127.0.0.1:6379/0)")
    parser.add_argument("--retry-deadline-s", type=_positive_seconds, default=DEFAULT_RETRY_DEADLINE_S,
                        help="how long to keep retrying while Redis does not answer "
                             "(default %(default)g s); then exit 3 with the outcome unknown")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("-v", "--verbose", action="store_true", help="log retries and details")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def with_txn(p):
        p.add_argument("--txn-id", help="reuse to retry a command whose outcome was unknown")
        p.add_argument("--operator", help="who does this (recorded as cashier id)")
        return p

    p = sub.add_parser("init", help="create the ledger on a new, empty Redis")
    p.add_argument("--partitions", type=int, help="journal partitions (default 1 standalone, 16 cluster)")
    p.add_argument("--retention-s", type=_shop_retention,
                   help="how long txn ids are remembered (idempotency), whole seconds from 86400 (1 day) "
                        "to 34560000 (400 days); stored in cs:meta for every till and service; "
                        "default: keep the stored one (7 days on a new ledger)")
    p.set_defaults(func=cmd_init)
    p = with_txn(sub.add_parser("open", help="open an account"))
    p.add_argument("account", help=ACCOUNT_HELP)
    p.add_argument("--initial", default="0", help="opening balance in yuan, e.g. 50.00")
    p.add_argument("--holder", help="the account holder's name, shown at the till (e.g. 张三)")
    p.add_argument("--phone", help="the member's phone, to find the member by (e.g. 13800138000)")
    p.set_defaults(func=cmd_open)
    p = with_txn(sub.add_parser("topup", help="add money to an account"))
    p.add_argument("account", help=ACCOUNT_HELP)
    p.add_argument("amount", help="in yuan, e.g. 12.50")
    p.add_argument("--method", default="cash", choices=("cash", "wechat", "alipay", "bank_card", "other"),
                   help="how the member paid (default cash)")
    p.add_argument("--bonus", help="bonus in yuan into the bonus bucket, e.g. 20.00")
    p.add_argument("--promo", action="store_true", help="add the bonus of the shop's promotion for this amount")
    p.set_defaults(func=cmd_topup)
    for name in ("freeze", "unfreeze"):
        p = with_txn(sub.add_parser(name, help=f"{name} an account"))
        p.add_argument("account", help=ACCOUNT_HELP)
        p.set_defaults(func=cmd_freeze)
    p = sub.add_parser("balance", help="show an account's balance")
    p.add_argument("account", help=ACCOUNT_HELP)
    p.set_defaults(func=cmd_balance)
    p = sub.add_parser("journal", help="recent journal entries of an account")
    p.add_argument("account", help=ACCOUNT_HELP)
    p.add_argument("--count", type=_journal_count, default=20,
                   help=f"how many of the newest entries, 1..{MAX_JOURNAL_COUNT} (default %(default)s)")
    p.set_defaults(func=cmd_journal)

    p = sub.add_parser("acl", help="print (or --apply) the Redis ACL users gateway, "
                                  "reconcile and admin")
    p.add_argument("--apply", action="store_true",
                   help="run the ACL SETUSER lines on every node (as an admin URL), delete the old till "
                        "user cashier-terminal(-*) and warn about any other user that can write cs:*")
    for who in ("gateway", "reconcile", "admin"):
        p.add_argument(f"--{who}-password", default=os.environ.get(f"CASHIER_{who.upper()}_PASSWORD"),
                       help=f"password of the {who} user (env CASHIER_{who.upper()}_PASSWORD)")
    p.add_argument("--terminal-password", help=argparse.SUPPRESS)     # the old till user's: refused, says why
    p.set_defaults(func=cmd_acl)
    p = sub.add_parser("scripts", help="load the ledger's Lua scripts into Redis")
    p.add_argument("action", choices=["load"], help="load: (re)load every script (after an upgrade)")
    p.set_defaults(func=cmd_scripts_load)
    p = sub.add_parser("doctor", help="check the deployment: eviction, persistence, ACL, TLS, scripts, lag")
    p.set_defaults(func=cmd_doctor)

    for module in _plugins():
        module.register(sub)
    return parser


# Command groups that live in their own modules, imported by name: build.spec reads this
# tuple for the bundle's hidden imports, so a new group is named here once.
PLUGIN_MODULES = ("admin.cashier_commands", "admin.selftest_commands", "admin.verify_commands",
                  "admin.member_commands", "admin.capacity_commands", "admin.terminal_commands")


def _plugins():
    """Command groups that live in their own modules (cashiers, ...)."""
    import importlib
    for name in PLUGIN_MODULES:
        try:
            yield importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise


ACCOUNT_HELP = "account id: 1-64 of A-Z a-z 0-9 . _ : -"


MAX_JOURNAL_COUNT = 1000       # one screenful of a terminal's scrollback is plenty; Redis reads pages of 500


def _journal_count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"count: {text!r} is not a whole number") from None
    if not 1 <= value <= MAX_JOURNAL_COUNT:
        raise argparse.ArgumentTypeError(f"count: must be between 1 and {MAX_JOURNAL_COUNT}, got {text}")
    return value


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"retry_deadline_s: {text!r} is not a number of seconds") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"retry_deadline_s: must be between 0 and 3600 s, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return guarded(args.func)(args)
    except KeyboardInterrupt:
        print("cashierctl: interrupted; if a change was sent, rerun with the same --txn-id", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
