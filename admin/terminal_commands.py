"""`cashierctl terminal ...`: the tills that may talk to the ledger gateway (issue 24).

    cashierctl terminal enroll T1      prints T1's token ONCE (Redis keeps its SHA-256 only);
                                       enrolling again replaces the token (rotation)
    cashierctl terminal list           enrolled terminals, last seen, version, revoked
    cashierctl terminal revoke T1      refused by every gateway within 5 s

The token goes into the till's settings; it is printed on stdout only (never logged).
Exit codes follow cashierctl: 0 done, 2 bad input, 3 Redis unavailable.
"""
from __future__ import annotations

import json
import time

from core.connection import connect
from core.terminals import TerminalRegistry

from .exits import EXIT_OK, guarded


def _registry(args) -> TerminalRegistry:
    return TerminalRegistry(connect(args.redis_url))


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000)) if ms else "-"


@guarded
def cmd_enroll(args) -> int:
    token = _registry(args).enroll(args.id)
    if args.json:
        print(json.dumps({"terminal_id": args.id, "token": token}))
    else:
        print(f"terminal {args.id} enrolled. Its token (shown once; put it in the till's settings):")
        print(token)
    return EXIT_OK


@guarded
def cmd_list(args) -> int:
    terminals = _registry(args).list()
    if args.json:
        print(json.dumps([{"terminal_id": t.terminal_id, "enrolled_ms": t.enrolled_ms, "revoked_ms": t.revoked_ms,
                           "last_seen_ms": t.last_seen_ms, "version": t.version} for t in terminals]))
        return EXIT_OK
    for t in terminals:
        state = f"revoked {_when(t.revoked_ms)}" if t.revoked else "enrolled"
        print(f"{t.terminal_id}\t{state}\tenrolled {_when(t.enrolled_ms)}\tlast seen {_when(t.last_seen_ms)}"
              f"\t{t.version or '-'}")
    return EXIT_OK


@guarded
def cmd_revoke(args) -> int:
    _registry(args).revoke(args.id)
    print(f"terminal {args.id} revoked: every gateway refuses it within 5 s")
    return EXIT_OK


def register(subparsers) -> None:
    """Add the `terminal` command group to cashierctl's subparsers."""
    parent = subparsers.add_parser("terminal", help="enroll, list and revoke gateway terminals")
    sub = parent.add_subparsers(dest="terminal_command", required=True, metavar="ACTION")
    p = sub.add_parser("enroll", help="enroll a terminal and print its token once")
    p.add_argument("id", help="terminal id: 1-64 of A-Z a-z 0-9 . _ : -")
    p.set_defaults(func=cmd_enroll)
    p = sub.add_parser("list", help="list enrolled terminals")
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("revoke", help="revoke a terminal's token")
    p.add_argument("id", help="terminal id")
    p.set_defaults(func=cmd_revoke)
