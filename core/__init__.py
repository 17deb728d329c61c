"""core: the cashier system's ledger on Redis.

Every balance change goes through `Ledger`, which runs one atomic Lua script per
operation (check, change, idempotency record and journal entry together). This
package knows nothing of Qt or SQL: the terminal (`desktop`) and the reconcile
daemon (`reconcile_service`) build on it.
"""
from .errors import (AccountNotFound, ConfigError, InvalidRequest, LedgerError, LedgerNotInitialized,
                     LedgerUnavailable, NotReplicated, OperationNotFound, TxnConflict, UnsafeRedisConfig)
from .ledger import AccountInfo, DeductRequest, JournalEntry, Ledger, RetryPolicy
from .result import Result, Status
from .validation import MAX_AMOUNT_MINOR, MAX_BALANCE_MINOR

__version__ = "0.1.0"

__all__ = [
    "Ledger", "DeductRequest", "Result", "Status", "RetryPolicy", "AccountInfo", "JournalEntry",
    "LedgerError", "InvalidRequest", "ConfigError", "AccountNotFound", "TxnConflict", "LedgerUnavailable",
    "LedgerNotInitialized", "UnsafeRedisConfig", "NotReplicated", "OperationNotFound",
    "MAX_AMOUNT_MINOR", "MAX_BALANCE_MINOR", "__version__",
]
