"""`cashierctl cashier ...`: manage the cashiers who sign in at the terminals.

Adds one command group, ``cashier``, with ``add``, ``disable``, ``enable``,
``reset-pin`` and ``list``. PINs are read with getpass (asked twice) or, for
scripts, as one line from standard input with ``--pin-stdin``; they are never
taken from the command line (it shows in ``ps`` and shell history) and never
printed or logged. The registry itself is `core.cashiers.CashierRegistry`.
Exit codes follow cashierctl: 0 done, 2 bad input, 3 Redis unavailable.
"""
from __future__ import annotations

import getpass
import json
import sys

from core.cashiers import CashierRegistry, check_pin
from core.connection import connect
from core.errors import InvalidRequest

from .exits import EXIT_OK, guarded


def _registry(args) -> CashierRegistry:
    return CashierRegistry(connect(args.redis_url))


def _read_pin(args, prompt: str) -> str:
    if getattr(args, "pin_stdin", False):
        line = sys.stdin.readline()
        return check_pin(line.rstrip("\r\n"))
    first = getpass.getpass(f"{prompt} (4-12 digits): ")
    check_pin(first)
    if getpass.getpass("Repeat the PIN: ") != first:
        raise InvalidRequest("pin", "the two PINs differ")
    return first


def _describe(c) -> str:
    rights = [r for r, on in (("supervisor", c.supervisor), ("can-top-up", c.can_top_up)) if on]
    return (f"{c.cashier_id}\t{c.name}\t{'disabled' if c.disabled else 'enabled'}\t"
            f"{','.join(rights) or '-'}")


@guarded
def cmd_add(args) -> int:
    registry = _registry(args)
    pin = _read_pin(args, f"PIN for {args.id}")
    c = registry.add(args.id, args.name, pin, supervisor=args.supervisor, can_top_up=args.can_top_up)
    print(f"cashier added: {_describe(c)}")
    return EXIT_OK


@guarded
def cmd_disable(args) -> int:
    c = _registry(args).set_disabled(args.id, args.action == "disable")
    print(f"cashier {args.action}d: {_describe(c)}")
    return EXIT_OK


@guarded
def cmd_reset_pin(args) -> int:
    registry = _registry(args)
    if registry.get(args.id) is None:
        raise InvalidRequest("cashier_id", f"no cashier {args.id!r}")
    c = registry.reset_pin(args.id, _read_pin(args, f"New PIN for {args.id}"))
    print(f"PIN reset (and any lock lifted): {_describe(c)}")
    return EXIT_OK


@guarded
def cmd_list(args) -> int:
    cashiers = _registry(args).list()
    if getattr(args, "json", False):
        print(json.dumps([{"cashier_id": c.cashier_id, "name": c.name, "disabled": c.disabled,
                           "supervisor": c.supervisor, "can_top_up": c.can_top_up}
                          for c in cashiers]))
        return EXIT_OK
    if not cashiers:
        print("no cashiers yet: add one with `cashierctl cashier add ID --name NAME`")
    for c in cashiers:
        print(_describe(c))
    return EXIT_OK


def register(subparsers) -> None:
    """Add the `cashier` command group to cashierctl's subparsers."""
    parent = subparsers.add_parser("cashier", help="manage cashiers and their PINs")
    sub = parent.add_subparsers(dest="cashier_command", required=True, metavar="ACTION")

    p = sub.add_parser("add", help="add a cashier (the PIN is asked for)")
    p.add_argument("id", help="cashier id: 1-64 of A-Z a-z 0-9 . _ : -")
    p.add_argument("--name", required=True, help="name shown at the terminal")
    p.add_argument("--supervisor", action="store_true", help="may approve refunds with their PIN")
    p.add_argument("--can-top-up", action="store_true", help="may top up accounts at the terminal")
    p.add_argument("--pin-stdin", action="store_true", help="read the PIN as one line from stdin")
    p.set_defaults(func=cmd_add)

    for action in ("disable", "enable"):
        p = sub.add_parser(action, help=f"{action} a cashier's sign-in")
        p.add_argument("id", help="cashier id")
        p.set_defaults(func=cmd_disable, action=action)

    p = sub.add_parser("reset-pin", help="set a new PIN and lift a lock")
    p.add_argument("id", help="cashier id")
    p.add_argument("--pin-stdin", action="store_true", help="read the PIN as one line from stdin")
    p.set_defaults(func=cmd_reset_pin)

    p = sub.add_parser("list", help="list cashiers")
    p.set_defaults(func=cmd_list)
