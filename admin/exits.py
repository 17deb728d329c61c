"""Exit codes of `cashierctl` and the one place that turns expected failures into a
message on stderr and an exit code, never a traceback. Every command (the main module's
and the plugin modules') runs through `guarded`."""
from __future__ import annotations

import functools
import sys

from redis.exceptions import RedisError

from core import InvalidRequest, LedgerError, TxnConflict
from core.connection import redacted

EXIT_OK, EXIT_DECLINED, EXIT_BAD_INPUT, EXIT_UNAVAILABLE, EXIT_CONFLICT = 0, 1, 2, 3, 4


def guarded(fn):
    """Wrap a command handler `fn(args) -> int`: InvalidRequest -> 2, TxnConflict -> 4,
    LedgerUnavailable / unsafe Redis / other ledger errors and Redis refusals -> 3."""
    @functools.wraps(fn)
    def handler(args) -> int:
        try:
            return fn(args)
        except InvalidRequest as exc:
            print(f"cashierctl: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except TxnConflict as exc:
            print(f"cashierctl: {exc}", file=sys.stderr)
            return EXIT_CONFLICT
        except LedgerError as exc:
            print(f"cashierctl: {exc}", file=sys.stderr)
            return EXIT_UNAVAILABLE
        except RedisError as exc:
            where = redacted(getattr(args, "redis_url", "") or "Redis")
            print(f"cashierctl: Redis at {where} refused the command: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            return EXIT_UNAVAILABLE
    return handler
