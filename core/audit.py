"""The audit trail of management actions (the back office's forms): `record_action`
journals one `audit` entry (amount 0, no account) through core/lua/audit.lua, so every
action is in the journal and, once drained, in the hash-chained book like every entry.

The record is a JSON object: who (the exact login), action ("member.open", "card.block",
...), target (the account, card, cashier, ...), summary (what changed, in words; never a
PIN or a password), address (where the request came from), refs (the txn ids of the
ledger operations the action made) and a random nonce. Its txn id commits to it:
``bo-audit-`` and the first 32 hex digits of the SHA-256 of the record's text, so the
book's copy of the record (reconcile_service `audit_records`) can be checked against the
chained row (`record_digest_ok`). A retry passes the same record and so the same txn id.
"""
from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import dataclass, field

from . import validation as v
from .errors import InvalidRequest
from .result import Result

AUDIT_KIND = "audit"
AUDIT_BOOK_ACCOUNT = "~"             # like a Z record: no account
AUDIT_TERMINAL = "backoffice"        # the terminal_id of the back office's operations and records
TXN_PREFIX = "bo-audit-"
MAX_RECORD_BYTES = 4096              # core/lua/audit.lua has the same limit
MAX_TEXT_LEN = 500                   # summary and target, each
_NOT_ID = re.compile(r"[^A-Za-z0-9._:-]")


def ledger_who(username: str) -> str:
    """A login name as a ledger id (cashier_id): characters core's ids do not allow ('@')
    become '_'; the exact name is in the audit record."""
    return _NOT_ID.sub("_", username)[: v.MAX_ID_LEN] or "_"


@dataclass(frozen=True)
class AuditRecord:
    who: str
    action: str
    target: str = ""
    summary: str = ""
    address: str = ""
    refs: tuple[str, ...] = ()
    nonce: str = field(default_factory=lambda: secrets.token_hex(8))

    def text(self) -> str:
        """The canonical JSON text (sorted keys, no spaces) that is journaled and hashed."""
        return json.dumps(dict(who=self.who, action=self.action, target=self.target, summary=self.summary,
                               address=self.address, refs=list(self.refs), nonce=self.nonce),
                          sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @property
    def txn_id(self) -> str:
        return txn_id_of(self.text())


def txn_id_of(record_text: str) -> str:
    return TXN_PREFIX + hashlib.sha256(record_text.encode()).hexdigest()[:32]


def record_digest_ok(txn_id: str, record_text: str) -> bool:
    """Whether `record_text` is the record `txn_id` commits to."""
    return txn_id == txn_id_of(record_text)


def check_record(record: AuditRecord) -> str:
    """The record's text, or InvalidRequest naming the field."""
    if not record.who or len(record.who) > 64:
        raise InvalidRequest("who", "1-64 characters")
    if not re.fullmatch(r"[a-z_]{1,32}(\.[a-z_]{1,32})?", record.action or ""):
        raise InvalidRequest("action", "a name like member.open")
    for name in ("target", "summary"):
        if len(getattr(record, name)) > MAX_TEXT_LEN:
            raise InvalidRequest(name, f"longer than {MAX_TEXT_LEN} characters")
    for ref in record.refs:
        v.check_id(ref, "refs")
    text = record.text()
    if len(text.encode()) > MAX_RECORD_BYTES:
        raise InvalidRequest("record", f"longer than {MAX_RECORD_BYTES} bytes")
    return text


def record_action(ledger, record: AuditRecord, *, terminal_id: str = AUDIT_TERMINAL) -> Result:
    """Journal `record` (idempotent: the same record again replays). Result.kind 'audit'."""
    text = check_record(record)
    v.check_id(terminal_id, "terminal_id")
    txn_id = txn_id_of(text)
    part = ledger.schema.partition_of(terminal_id)
    keys = [part.txn(txn_id), part.journal]
    args = [txn_id, terminal_id, ledger.retention_s, ledger_who(record.who), text]
    return ledger.runner.run("audit", AUDIT_KIND, keys, args, AUDIT_BOOK_ACCOUNT, 0, txn_id)
