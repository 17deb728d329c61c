"""The exit codes every command line of the shop uses (cashierctl, reconcile-service,
the demo), with one meaning each, and the table they print in `--help`.

One outcome, one code, whichever program hit it: a script that runs `cashierctl topup`
and `reconcile-service status` can branch on the code alone. The table is data, so the
help epilog, docs/operations.md and the CLI fuzz test (tests/admin/test_fuzz_cli.py)
read the same thing. Nothing here knows argparse, Qt or SQL.
"""
from __future__ import annotations

EXIT_OK = 0
EXIT_DECLINED = 1        # answered "no": a decline, an open discrepancy, a failed check
EXIT_BAD_INPUT = 2       # a mistake in an argument, setting, URL or path; nothing changed
EXIT_UNAVAILABLE = 3     # Redis or the database did not answer within the deadline
EXIT_REFUSED = 4         # refused in this state: txn id reused, schema not migrated, no ledger, unsafe Redis
EXIT_INTERRUPTED = 130   # Ctrl-C or SIGTERM (128 + SIGINT, what shells report)

# (code, short name, what it means and what to do), in order.
TABLE: tuple[tuple[int, str, str], ...] = (
    (EXIT_OK, "ok", "done"),
    (EXIT_DECLINED, "declined",
     "answered no: a change declined (insufficient funds, frozen account, ...), an open "
     "discrepancy, an invariant violation, a failed doctor or self-test check, the demo's "
     "end-to-end check failed"),
    (EXIT_BAD_INPUT, "bad input",
     "a wrong argument, setting, URL, path or unknown account: the message names the field "
     "(e.g. redis_url, amount, account_id, data_dir); nothing was changed"),
    (EXIT_UNAVAILABLE, "unavailable",
     "Redis or the database did not answer within the deadline: the outcome of a change is "
     "unknown; run the same command again with the same --txn-id"),
    (EXIT_REFUSED, "refused",
     "refused in this state: a txn id already used for another request, the database not "
     "migrated, Redis holding no ledger, Redis configured to evict keys, nothing to restore"),
    (EXIT_INTERRUPTED, "interrupted", "stopped by Ctrl-C or SIGTERM"),
)

CODES = frozenset(code for code, _, _ in TABLE)


def epilog() -> str:
    """The table as plain text, for argparse's epilog (RawDescriptionHelpFormatter)."""
    import textwrap
    lines = ["exit codes (the same for cashierctl, reconcile-service and the demo):"]
    for code, name, meaning in TABLE:
        lines += textwrap.wrap(f"{name}: {meaning}", width=78, initial_indent=f"  {code:>3}  ",
                               subsequent_indent=" " * 7)
    return "\n".join(lines)


def markdown_table() -> str:
    """The table for docs/operations.md (a test checks that the page holds this text)."""
    rows = ["| code | outcome | meaning |", "|---|---|---|"]
    rows += [f"| {code} | {name} | {meaning} |" for code, name, meaning in TABLE]
    return "\n".join(rows)


def classify(exc: BaseException, redis_url: str | None = None) -> tuple[int, str] | None:
    """(exit code, one-line message naming the field) for an expected failure raised by
    core or redis-py, or None for anything else (a bug: let it show).

    `redis_url` (the one the command used) is named, without its password, where the
    error itself does not say which Redis it was.
    """
    from redis import exceptions as rx

    from . import errors
    from .connection import redacted

    where = f"Redis at {redacted(redis_url)}" if redis_url else "Redis"
    if isinstance(exc, errors.InvalidRequest):        # ConfigError (e.g. redis_url) is one too
        return EXIT_BAD_INPUT, str(exc)
    if isinstance(exc, errors.TxnConflict):
        return EXIT_REFUSED, str(exc)
    if isinstance(exc, errors.LedgerNotInitialized):
        return EXIT_REFUSED, f"redis_url: {where}: {exc}"
    if isinstance(exc, errors.UnsafeRedisConfig):
        return EXIT_REFUSED, f"redis_url: {exc}"
    cause = exc.__cause__ if isinstance(exc, errors.LedgerUnavailable) else exc
    if isinstance(cause, rx.AuthenticationError):
        # a wrong password is a configuration mistake, not an outage: waiting will not fix it
        return EXIT_BAD_INPUT, f"redis_url: {where} refused the user name or password ({cause})"
    if isinstance(cause, rx.ResponseError) and "DB index" in str(cause):
        return EXIT_BAD_INPUT, f"redis_url: {where} has no such database number ({cause})"
    if isinstance(cause, rx.NoPermissionError):
        return EXIT_REFUSED, (f"redis_url: the Redis user may not run this command ({cause}); "
                              "see `cashierctl acl`")
    if isinstance(exc, errors.LedgerError):
        return EXIT_UNAVAILABLE, f"redis_url: {exc}"
    if isinstance(exc, (rx.ConnectionError, rx.TimeoutError, rx.RedisClusterException)):
        return EXIT_UNAVAILABLE, f"redis_url: {where} did not answer ({type(exc).__name__}: {exc})"
    if isinstance(exc, rx.RedisError):
        return EXIT_UNAVAILABLE, f"redis_url: {where} refused the command ({type(exc).__name__}: {exc})"
    return None
