"""core: the cashier system's ledger on Redis.

Every balance change goes through `Ledger`, which runs one atomic Lua script per
operation (check, change, idempotency record and journal entry together). This
package knows nothing of Qt or SQL: the terminal (`desktop`) and the reconcile
daemon (`reconcile_service`) build on it.

The names that need redis-py (`Ledger` and its records) are imported on first use
(PEP 562), so `from core import Result, LedgerUnavailable` loads no Redis client: the
ledger gateway's client (gateway/client.py) runs on tills that hold none.
"""
import importlib

from .errors import (AccountNotFound, ConfigError, InvalidRequest, LedgerError, LedgerNotInitialized,
                     LedgerUnavailable, NotReplicated, OperationNotFound, TxnConflict, UnsafeRedisConfig)
from .result import Result, Status
from .validation import MAX_AMOUNT_MINOR, MAX_BALANCE_MINOR

__version__ = "0.1.0"

# name -> the module that defines it, imported when the name is first read
_ON_FIRST_USE = {name: ".ledger" for name in ("AccountInfo", "DeductRequest", "JournalEntry", "Ledger",
                                              "RetryPolicy")}

__all__ = [
    "Ledger", "DeductRequest", "Result", "Status", "RetryPolicy", "AccountInfo", "JournalEntry",
    "LedgerError", "InvalidRequest", "ConfigError", "AccountNotFound", "TxnConflict", "LedgerUnavailable",
    "LedgerNotInitialized", "UnsafeRedisConfig", "NotReplicated", "OperationNotFound",
    "MAX_AMOUNT_MINOR", "MAX_BALANCE_MINOR", "__version__",
]


def __getattr__(name: str):
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *_ON_FIRST_USE})
