"""What Redis holds now, read without changing anything: accounts, balances, the journal
entries still in Redis, the account of a hold.

`AccountReads` is part of `Ledger` (its `account`, `balance`, `journal`, ... are these
methods), built on the ledger's runner (`core.runner`: every read under the retry
policy) and key schema. balance(), available() and account() may answer from the
runner's read cache (display only, off by default: `core.read_cache`).
"""
from __future__ import annotations

import time
from typing import Sequence

from . import validation as v
from .errors import AccountNotFound
from .journal_codec import decode
from .keys import Partition
from .records import AccountInfo, JournalEntry


class AccountReads:
    """The reads of a `core.Ledger` (its runner, schema and partitions)."""

    def __init__(self, ledger):
        self.ledger = ledger
        self.runner = ledger.runner

    def account(self, account_id: str) -> AccountInfo:
        """The account as Redis holds it now. Raises AccountNotFound."""
        v.check_id(account_id, "account_id")
        cached = self.runner.read_cache.get("account", account_id)
        if cached is not None:
            return cached
        key = self.ledger.schema.partition_of(account_id).account(account_id)
        started = time.monotonic()
        bal, st, ct, lj, nm, bo = self.runner.with_retry(
            self.runner.client.hmget, key, "bal", "st", "ct", "lj", "nm", "bo", txn_id=None)
        if bal is None:
            raise AccountNotFound(account_id)
        info = AccountInfo(account_id, int(bal), st or "active", int(ct or 0), lj or "", nm or "", int(bo or 0))
        self.runner.read_cache.put("account", account_id, info, started)
        return info

    def accounts(self, account_ids: Sequence[str]) -> dict[str, AccountInfo | None]:
        """Many accounts in one pipeline (None for an id Redis does not hold).

        Each account's balance and last journal id are read together (one HMGET), so
        a reader can compare it with the database at that same journal position.
        """
        ids = [v.check_id(a, "account_id") for a in account_ids]

        def read():
            pipe = self.runner.client.pipeline(transaction=False)
            for a in ids:
                pipe.hmget(self.ledger.schema.partition_of(a).account(a), "bal", "st", "ct", "lj", "nm", "bo")
            return pipe.execute()
        rows = self.runner.with_retry(read, txn_id=None) if ids else []
        return {a: (AccountInfo(a, int(bal), st or "active", int(ct or 0), lj or "", nm or "", int(bo or 0))
                    if bal is not None else None)
                for a, (bal, st, ct, lj, nm, bo) in zip(ids, rows)}

    def account_ids(self, partition: Partition, *, page_size: int = 1000):
        """Every account id of one partition (SSCAN: no long blocking of Redis). Each page
        is read under the retry policy, so a failure raises LedgerUnavailable."""
        cursor = 0
        while True:
            cursor, ids = self.runner.with_retry(self.runner.client.sscan, partition.accounts, cursor, None,
                                                 page_size, txn_id=None)
            yield from ids
            if cursor == 0:
                return

    def balance(self, account_id: str) -> int:
        """The balance in minor units. Raises AccountNotFound for an unknown id."""
        return self.account(account_id).balance_minor

    def journal(self, account_id: str, *, count: int = 20, scan_limit: int = 10_000) -> list[JournalEntry]:
        """The most recent journal entries of one account still held in Redis, newest first.

        Entries already moved to the database and trimmed are not here: the database has them.
        """
        v.check_id(account_id, "account_id")
        part = self.ledger.schema.partition_of(account_id)
        found: list[JournalEntry] = []
        last = "+"
        scanned = 0
        while len(found) < count and scanned < scan_limit:
            page = self.runner.with_retry(self.runner.client.xrevrange, part.journal, last, "-", 500, txn_id=None)
            if not page:
                break
            for entry_id, fields in page:
                fields = decode(fields)
                if fields.get("acct") == account_id:
                    found.append(JournalEntry.from_fields(entry_id, part.index, fields))
                    if len(found) == count:
                        break
            scanned += len(page)
            last = "(" + page[-1][0]
        return found

    def available(self, account_id: str) -> int:
        """Balance minus active holds, in minor units. Raises AccountNotFound."""
        return self.balances(account_id)[1]

    def balances(self, account_id: str) -> tuple[int, int]:
        """(balance, available) read at one instant."""
        v.check_id(account_id, "account_id")
        cached = self.runner.read_cache.get("balances", account_id)
        if cached is not None:
            return cached
        part = self.ledger.schema.partition_of(account_id)
        keys = [part.account(account_id), part.holds(account_id), part.hold_expiries(account_id)]
        started = time.monotonic()
        reply = self.runner.read_script("available", keys, [])
        if not reply:
            raise AccountNotFound(account_id)
        value = (int(reply[0]), int(reply[1]))
        self.runner.read_cache.put("balances", account_id, value, started)
        return value

    def hold_account(self, hold_txn_id: str) -> str | None:
        """The account a hold was placed on, or None. Reads the hold's record in every
        partition (one pipeline): a hold id maps to one account for good, so this read
        can be done before the capture without a race."""
        v.check_id(hold_txn_id, "hold_txn_id")

        def read():
            pipe = self.runner.client.pipeline(transaction=False)
            for part in self.ledger.partitions:
                pipe.hget(part.txn(hold_txn_id), "f")
            return pipe.execute()
        for fingerprint in self.runner.with_retry(read, txn_id=None):
            if fingerprint and fingerprint.startswith("hold|"):
                return fingerprint.split("|")[1]
        return None

    def hold_resolution_account(self, script: str, hold_txn_id: str, txn_id: str) -> str | None:
        """The account of a capture/void (`script`) called without one: from this txn's own
        record when it was decided before (a retry answers what the first call answered,
        even after the hold's record expired), else from the hold's record; None if neither."""
        def read():
            pipe = self.runner.client.pipeline(transaction=False)
            for part in self.ledger.partitions:
                pipe.hget(part.txn(txn_id), "f")
                pipe.hget(part.txn(hold_txn_id), "f")
            return pipe.execute()
        fingerprints = self.runner.with_retry(read, txn_id=txn_id)
        own, held = fingerprints[0::2], fingerprints[1::2]
        for fingerprint in own:
            if fingerprint and fingerprint.startswith(script + "|"):
                return fingerprint.split("|")[1]
        for fingerprint in held:
            if fingerprint and fingerprint.startswith("hold|"):
                return fingerprint.split("|")[1]
        return None
