"""Structured logging for the reconcile service: one JSON object per line (or plain text).

Fields passed with ``extra={...}`` become keys of the JSON object, so operators can
filter on `partition`, `txn_id`, `account_id`, ... URLs are logged only through
`core.connection.redacted`, never with their passwords.
"""
from __future__ import annotations

import json
import logging
import sys
import time

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {"ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
               + f".{int(record.msecs):03d}Z",
               "level": record.levelname, "logger": record.name, "msg": record.getMessage()}
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        extras = " ".join(f"{k}={v}" for k, v in record.__dict__.items()
                          if k not in _STANDARD and not k.startswith("_"))
        base = f"{time.strftime('%H:%M:%S', time.localtime(record.created))} {record.levelname:<7} " \
               f"{record.getMessage()}"
        text = f"{base} {extras}" if extras else base
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a record is emitted, not the one at set-up
    (a caller that swaps sys.stderr, as in-process tests do, must not be left holding a
    closed stream)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def setup_logging(level: str = "INFO", fmt: str = "json") -> None:
    handler = _StderrHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # core logs every retried Redis call at WARNING; the service reports outages itself.
    logging.getLogger("core.ledger").setLevel(max(logging.ERROR, root.level))
    logging.getLogger("alembic").setLevel(logging.WARNING)
