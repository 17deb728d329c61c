"""The member layer's indexes, a part of `Ledger` (`rebuild_member_index` is the Ledger's
own method): the search index `find_members` reads (names, pinyin initials, phones, in
each partition's own slot) and the identities a look-up and a charge by card are checked
against (each phone in its own partition's phone index, each account's card list). The
scripts keep both in step as members change; this module claims a phone in its own
partition (identity.lua, for an account whose phone lives elsewhere) and rebuilds both
from the members' data (a repair, and the step after upgrading: docs/operations.md).
"""
from __future__ import annotations

from typing import Sequence

from .errors import InvalidRequest
from .keys import Partition, card_key, card_map_key, member_index_key
from .members import name_key, pinyin_initials


class MemberIndex:
    """Rebuilds and claims of the member index and the identities, on a ledger's runner."""

    def __init__(self, ledger):
        self.ledger = ledger
        self.runner = ledger.runner

    def rebuild_member_index(self, *, page_size: int = 500) -> dict[str, int]:
        """Rebuild the member index from the accounts (a repair: the scripts keep it in
        step). Indexes every account with a name or phone, then removes entries no account
        stands behind; then the identity index (`rebuild_identities`). Safe while the shop
        is open; answers counts."""
        counts = {"accounts": 0, "entries": 0, "removed": 0}
        self._rebuild_search_index(counts, page_size)
        counts.update(self.rebuild_identities(page_size=page_size))
        return counts

    def rebuild_identities(self, *, page_size: int = 500) -> dict[str, int]:
        """Rebuild the identities a look-up and a charge by card are checked against, from
        the members' data (data from before issue 25, or a lost index): every account's
        phone into the phone index of the phone's partition (`phones`; a phone another
        member holds already is left to that member and counted in `phone_conflicts`: such
        a string answers LOOKUP_AMBIGUOUS until a phone is changed), phone entries no
        account stands behind removed (`phones_removed`), and every card into its account's
        card list (`cards`; a block is never undone). Safe while the shop is open."""
        counts = {"phones": 0, "phone_conflicts": 0, "phones_removed": 0, "cards": 0}
        for part in self.ledger.partitions:
            ids = list(self.runner.with_retry(lambda: list(self.runner.client.sscan_iter(part.accounts, count=page_size)),
                                        txn_id=None))
            for start in range(0, len(ids), page_size):
                batch = ids[start:start + page_size]
                phones = self.runner.with_retry(self._read_field, part, batch, "ph", txn_id=None)
                for account_id, phone in zip(batch, phones):
                    if not phone:
                        continue
                    reply = self.phone_identity("index", phone, account_id)
                    counts["phones" if reply == "APPLIED" else "phone_conflicts"] += 1
            held = self.runner.with_retry(lambda: list(self.runner.client.hscan_iter(part.phones, count=page_size)),
                                          txn_id=None)
            for phone, owner in held:
                owner_part = self.ledger.schema.partition_of(owner)
                now = self.runner.with_retry(self.runner.client.hget, owner_part.account(owner), "ph", txn_id=None)
                if now != phone:
                    self.phone_identity("release", phone, owner)
                    counts["phones_removed"] += 1
            cards = self.runner.with_retry(lambda: list(self.runner.client.hscan_iter(card_map_key(part), count=page_size)),
                                           txn_id=None)
            for card_no, owner in cards:
                st = self.runner.with_retry(self.runner.client.hget, card_key(part, card_no), "st", txn_id=None)
                self.ledger.members.record_card(owner, card_no, "blocked" if st == "blocked" else "active")
                counts["cards"] += 1
        return counts

    def phone_identity(self, mode: str, phone: str, account_id: str) -> str:
        """identity.lua on a phone in the phone's own partition: its status."""
        part = self.ledger.schema.partition_of(phone)
        keys = [part.phones, part.account(phone), part.card(phone)] if mode == "claim" else [part.phones]
        reply = self.runner.call("identity", keys, [mode, phone, account_id], txn_id=None)
        if reply[0] == "INVALID":
            raise InvalidRequest(*reply[3].split(": ", 1))
        return reply[0]

    def _read_field(self, part: Partition, ids: Sequence[str], name: str) -> list[str | None]:
        pipe = self.runner.client.pipeline(transaction=False)
        for a in ids:
            pipe.hget(part.account(a), name)
        return pipe.execute()

    def _rebuild_search_index(self, counts: dict[str, int], page_size: int) -> None:
        for part in self.ledger.partitions:
            index = member_index_key(part)
            ids = list(self.runner.with_retry(lambda: list(self.runner.client.sscan_iter(part.accounts, count=page_size)),
                                        txn_id=None))
            for start in range(0, len(ids), page_size):
                batch = ids[start:start + page_size]
                names = self.runner.with_retry(self._read_names, part, batch, txn_id=None)
                for account_id, holder in zip(batch, names):
                    for _ in range(3):           # STALE: the name changed meanwhile; read it again
                        holder = holder or ""
                        reply = self.runner.call("member_index", [part.account(account_id), index],
                                                 ["account", account_id, holder, name_key(holder),
                                                  pinyin_initials(holder) if holder else ""], txn_id=None)
                        if reply[0] != "STALE":
                            break
                        holder = self.runner.with_retry(self.runner.client.hget, part.account(account_id), "nm", txn_id=None)
                    if reply[0] == "INVALID":
                        raise InvalidRequest(*reply[3].split(": ", 1))
                    counts["accounts"] += 1
                    counts["entries"] += int(reply[1])
            cursor = 0
            while True:
                cursor, page = self.runner.with_retry(self.runner.client.zscan, index, cursor, None, page_size, txn_id=None)
                entries = [e for e, _ in page]
                if entries:
                    keys = [index, *(part.account(e.rpartition("\x00")[2]) for e in entries)]
                    reply = self.runner.call("member_index", keys, ["sweep", *entries], txn_id=None)
                    if reply[0] == "INVALID":
                        raise InvalidRequest(*reply[3].split(": ", 1))
                    counts["removed"] += int(reply[1])
                if cursor == 0:
                    break

    def _read_names(self, part: Partition, ids: Sequence[str]) -> list[str | None]:
        pipe = self.runner.client.pipeline(transaction=False)
        for a in ids:
            pipe.hget(part.account(a), "nm")
        return pipe.execute()
