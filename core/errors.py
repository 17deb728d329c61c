"""The ledger's exceptions: one small hierarchy, each with a message a cashier or an
operator can act on.

The hierarchy::

    LedgerError
      InvalidRequest(field, reason)      malformed input; nothing sent, nothing changed
        AccountNotFound                  a read named an account that does not exist
        ConfigError(field, reason)       a setting (a Redis URL, ...) is wrong: fix the configuration
      TxnConflict                        txn id reused for a different request
      LedgerUnavailable                  Redis did not answer in time: outcome unknown
        LedgerNotInitialized             Redis holds no ledger
        NotReplicated                    WAIT: too few replicas confirmed (retried inside core)
      UnsafeRedisConfig                  Redis may lose balances: the ledger refuses to write
      OperationNotFound                  no operation with this txn id in Redis (core.history)

Declines (insufficient funds, frozen account, ...) are *not* exceptions: they are
`Result`s with a `Status`, because a decline is a normal answer. Exceptions are for
requests that were never decided (`InvalidRequest`, `TxnConflict`) or whose outcome
is unknown (`LedgerUnavailable`).
"""
from __future__ import annotations


class LedgerError(Exception):
    """Base of every error raised by `core`."""


class InvalidRequest(LedgerError, ValueError):
    """The request is malformed; nothing was sent to Redis and nothing changed."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class AccountNotFound(InvalidRequest):
    """A read named an account that does not exist."""

    def __init__(self, account_id: str):
        self.account_id = account_id
        super().__init__("account_id", f"no account {account_id!r}")


class ConfigError(InvalidRequest):
    """A setting is wrong (e.g. `redis_url` does not parse); nothing was tried.

    A subclass of InvalidRequest, so every handler of bad input (exit code 2 of the
    CLIs, the terminal's settings dialog) shows it as it is: the field and the reason.
    Retrying cannot help: the configuration must change.

    Raised as ConfigError(field, reason), or as ConfigError(message) with a whole message
    that begins with what is wrong (the reconcile service's settings: "batch_size (from
    command line): must be at least 1, got 0"); that message is kept word for word.
    """

    def __init__(self, field: str, reason: str | None = None):
        if reason is not None:
            super().__init__(field, reason)
            return
        message = field                  # the one-argument form: a whole message
        head, _, self.reason = message.partition(": ")
        self.field = head.split(" (from ")[0]
        LedgerError.__init__(self, message)


class TxnConflict(LedgerError):
    """The txn id was already used for a different request; nothing changed.

    A retry must reuse its txn id with the *same* request; a new request needs a new id.
    """

    def __init__(self, txn_id: str, stored: str, requested: str):
        self.txn_id = txn_id
        self.stored_fingerprint = stored
        self.requested_fingerprint = requested
        super().__init__(
            f"txn_id {txn_id!r} was already used for {stored!r}; this request is {requested!r}. "
            "Use a new txn id for a new request."
        )


class LedgerUnavailable(LedgerError):
    """Redis could not be reached in time. The outcome is unknown: retry with the same txn id."""

    def __init__(self, message: str, txn_id: str | None = None):
        self.txn_id = txn_id
        if txn_id:
            message = (f"{message}. The outcome of txn {txn_id!r} is unknown: "
                       "retry with the same txn id until Redis answers.")
        super().__init__(message)


class LedgerNotInitialized(LedgerUnavailable):
    """Redis holds no ledger (new server, or data lost): balances must be restored first."""

    def __init__(self, detail: str = ""):
        super().__init__(
            "Redis holds no ledger data" + (f" ({detail})" if detail else "")
            + ". If this Redis lost its data, run `reconcile-service restore`; "
            "for a brand-new installation run `cashierctl init`."
        )


class NotReplicated(LedgerUnavailable):
    """WAIT returned fewer replicas than required: the change is not yet safe.

    Raised inside the runner's retries (`core.runner`), which retry the call with the same
    txn id; past the deadline the caller gets a plain `LedgerUnavailable`."""


class OperationNotFound(LedgerError):
    """No operation with this txn id in Redis: older than the retention, or mistyped."""

    def __init__(self, txn_id: str, retention_s: int):
        self.txn_id = txn_id
        self.retention_s = retention_s
        days = retention_s / 86400
        super().__init__(
            f"no operation with receipt number {txn_id!r} in the last {days:g} days. Check the "
            "number; an older sale can no longer be refunded at the till: the back office "
            "gives the money back with a top-up.")


class UnsafeRedisConfig(LedgerError):
    """Redis is configured in a way that can lose balances; the ledger refuses to write."""
