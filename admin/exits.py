"""Exit codes of `cashierctl` and the one place that turns expected failures into a
message on stderr and an exit code, never a traceback. Every command (the main module's
and the plugin modules') runs through `guarded`. The codes and their meanings are the
shop-wide table in `core.exit_codes` (the same for reconcile-service and the demo)."""
from __future__ import annotations

import functools
import sys

from core.exit_codes import (EXIT_BAD_INPUT, EXIT_DECLINED, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED,
                             EXIT_UNAVAILABLE, classify)

EXIT_CONFLICT = EXIT_REFUSED     # a txn id reused for another request is one kind of refusal

__all__ = ["EXIT_OK", "EXIT_DECLINED", "EXIT_BAD_INPUT", "EXIT_UNAVAILABLE", "EXIT_REFUSED",
           "EXIT_CONFLICT", "EXIT_INTERRUPTED", "guarded"]


def guarded(fn):
    """Wrap a command handler `fn(args) -> int`: every failure core or redis-py raises for
    a user's mistake or an outage becomes one line `cashierctl: <field>: <reason>` on
    stderr and the code of `core.exit_codes` (bad input 2, unavailable 3, refused 4)."""
    @functools.wraps(fn)
    def handler(args) -> int:
        try:
            return fn(args)
        except Exception as exc:
            known = classify(exc, getattr(args, "redis_url", None))
            if known is None:
                raise
            code, message = known
            print(f"cashierctl: {message}", file=sys.stderr)
            return code
    return handler
