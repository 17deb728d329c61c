"""`cashierctl self-test`: checks an installation offline (no Redis needed).

Proves that cashierctl runs (from a source checkout, a wheel or the PyInstaller
bundle alike) and finds the ledger's Lua scripts through `core.resources`, expanding
their includes (core.selftest, shared with reconcile-service and cashier-gateway).
Prints one line and exits 0, or 1 with the first problem. Adds one command to
cashierctl through `register(subparsers)` (see cashierctl's `_plugins`).
"""
from __future__ import annotations

from core import selftest

# Every operation cashierctl itself runs, plus the PIN counter of `cashier` commands.
REQUIRED_SCRIPTS = ("open_account", "credit", "freeze", "unfreeze", "deduct", "refund",
                    "restore_account", "cashier_pin_attempt")


def check() -> str:
    from core import __version__
    scripts = selftest.check_scripts(REQUIRED_SCRIPTS)
    return f"cashierctl {__version__}, {len(scripts)} Lua scripts, {selftest.origin()}"


def cmd_self_test(args) -> int:
    return selftest.run("cashierctl", check)


def register(subparsers) -> None:
    """Add the `self-test` command to cashierctl's subparsers."""
    p = subparsers.add_parser("self-test", help="check the installation offline (finds the Lua scripts)")
    p.set_defaults(func=cmd_self_test)
