"""`cashierctl self-test`: checks an installation offline (no Redis needed).

Proves that cashierctl runs (from a source checkout, a wheel or the PyInstaller
bundle alike) and finds the ledger's Lua scripts through `core.resources`, expanding
their includes. Prints one line and exits 0, or 1 with the first problem. Adds one
command to cashierctl through `register(subparsers)` (see cashierctl's `_plugins`).
"""
from __future__ import annotations

import re
import sys

EXIT_OK, EXIT_FAILED = 0, 1
# Every operation cashierctl itself runs, plus the PIN counter of `cashier` commands.
REQUIRED_SCRIPTS = ("open_account", "credit", "freeze", "unfreeze", "deduct", "refund",
                    "restore_account", "cashier_pin_attempt")


def check() -> str:
    from core import __version__
    from core.resources import lua_dir, package_root
    from core.scripts import load_scripts
    scripts = load_scripts()
    missing = [name for name in REQUIRED_SCRIPTS if name not in scripts]
    if missing:
        raise RuntimeError(f"Lua scripts missing from {lua_dir()}: {', '.join(missing)}")
    unexpanded = [s.name for s in scripts.values()
                  if re.search(r"^--@include \w+\s*$", s.body, re.MULTILINE)]
    if unexpanded:
        raise RuntimeError(f"includes not expanded in: {', '.join(unexpanded)}")
    where = "bundle" if getattr(sys, "frozen", False) else "source"
    return f"cashierctl {__version__}, {len(scripts)} Lua scripts, from the {where} at {package_root()}"


def cmd_self_test(args) -> int:
    try:
        summary = check()
    except Exception as exc:   # one line saying what is wrong, never a traceback
        print(f"cashierctl self-test: FAILED: {type(exc).__name__}: {exc}")
        return EXIT_FAILED
    print(f"cashierctl self-test: OK ({summary})")
    return EXIT_OK


def register(subparsers) -> None:
    """Add the `self-test` command to cashierctl's subparsers."""
    p = subparsers.add_parser("self-test", help="check the installation offline (finds the Lua scripts)")
    p.set_defaults(func=cmd_self_test)
