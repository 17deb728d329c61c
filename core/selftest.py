"""What every program's offline `self-test` shares (cashierctl, reconcile-service,
cashier-gateway): finding the ledger's Lua scripts through `core.resources` with their
includes expanded, saying where the program runs from (a source checkout or the
PyInstaller bundle), and the one-line verdict: "<program> self-test: OK (summary)" and
exit 0, or "<program> self-test: FAILED: <problem>" and exit 1, never a traceback.
No Redis, no network: each program's own `check()` adds what it ships.
"""
from __future__ import annotations

import re
import sys
from typing import Callable, Iterable

EXIT_OK, EXIT_FAILED = 0, 1
_UNEXPANDED_INCLUDE = re.compile(r"^--@include \w+\s*$", re.MULTILINE)


def check_scripts(required: Iterable[str]) -> dict:
    """The loaded Lua scripts (core.scripts.load_scripts); raises naming any of `required`
    that is missing and any script whose `--@include` lines were not expanded."""
    from .resources import lua_dir
    from .scripts import load_scripts
    scripts = load_scripts()
    missing = [name for name in required if name not in scripts]
    if missing:
        raise RuntimeError(f"Lua scripts missing from {lua_dir()}: {', '.join(missing)}")
    unexpanded = [s.name for s in scripts.values() if _UNEXPANDED_INCLUDE.search(s.body)]
    if unexpanded:
        raise RuntimeError(f"includes not expanded in: {', '.join(unexpanded)}")
    return scripts


def origin() -> str:
    """'from the bundle at …' (PyInstaller) or 'from the source at …'."""
    from .resources import package_root
    where = "bundle" if getattr(sys, "frozen", False) else "source"
    return f"from the {where} at {package_root()}"


def run(program: str, check: Callable[[], str]) -> int:
    """Print the verdict line of `check()` (its summary, or its first problem); the exit code."""
    try:
        summary = check()
    except Exception as exc:   # one line saying what is wrong, never a traceback
        print(f"{program} self-test: FAILED: {type(exc).__name__}: {exc}")
        return EXIT_FAILED
    print(f"{program} self-test: OK ({summary})")
    return EXIT_OK
