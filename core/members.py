"""The member layer of a stored-value shop (issue 14), a part of `Ledger` (whose methods of
the same names these are).

An account is a member (holder name, optional phone); cards are credentials that map to
accounts (`issue_card`, `block_card`, `resolve_card`), so a lost card is blocked and a new
one issued to the same account without moving money. `find_members` finds members by
phone (exact), holder name (prefix) and pinyin initials ('zs' finds 张三) through a member
index kept in each partition's own slot by the same scripts that change members.
`close_account` (退卡) pays out the principal and forfeits the bonus. Shop settings
(spending order, balance cap) and top-up promotions are journaled settings kept in Redis.
Every write is one Lua script of `core/lua/` (idempotent by txn id, journaled), run
through the ledger's runner (`core.runner`); this module validates, picks the keys
(`core.keys`) and decodes the answers.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
import time
import unicodedata
from dataclasses import dataclass
from typing import Sequence

from . import validation as v
from .errors import AccountNotFound, InvalidRequest
from .keys import Partition, card_key, card_map_key, member_index_key, settings_key  # also importable from here
from .records import Card, CloseResult, MemberMatch, Promotion  # answers; also importable from here
from .result import Result, Status

SPEND_ORDERS = ("principal_first", "bonus_first", "proportional")
DEFAULT_SPEND_ORDER = "principal_first"
CARD_BLOCK_REASONS = ("lost", "damaged", "stolen", "other")
PAYMENT_METHODS = ("cash", "wechat", "alipay", "bank_card", "other")
SHOP_ACCOUNT = "shop"              # the journal's `acct` of setting entries
DEFAULT_FIND_LIMIT = 10
MAX_FIND_LIMIT = 50
MAX_QUERY_LEN = 64
MAX_INITIAL_VARIANTS = 4           # readings of a polyphonic name indexed (曾 zeng / ceng)
_PHONE_SEPARATORS = re.compile(r"[\s\-().]")
_PHONE_RE = re.compile(r"\+?[0-9]{5,20}")
_PROMO_ID_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")


# ---------------------------------------------------------------- ids (the keys: core/keys.py)

def partition_txn_id(txn_id: str, index: int) -> str:
    """The txn id of a setting on partition `index` > 0: '@set:' + 24 hex digits of SHA-1
    (the ledger's reserved namespace of internal ids), derived from the caller's txn id so
    a retry finds its record; never a client's id."""
    return "@set:" + hashlib.sha1(f"setting|{txn_id}|{index}".encode()).hexdigest()[:24]


# ---------------------------------------------------------------- normalising names and phones

def name_key(holder_name: str) -> str:
    """What a name is indexed and searched by: NFKC, casefolded, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", holder_name).casefold().split())


def pinyin_initials(holder_name: str) -> str:
    """The pinyin initials of the Chinese characters of a name, one variant per reading of
    a polyphonic name (at most 4), separated by spaces: '张三' -> 'zs'. '' without Hanzi."""
    from pypinyin import Style, pinyin      # imported on first use: its dictionary is large
    letters = [sorted({r[0] for r in readings if r and r[0].isascii() and r[0].isalpha()})
               for readings in pinyin(holder_name, style=Style.FIRST_LETTER, heteronym=True,
                                      errors="ignore", strict=False)]
    letters = [[c.lower() for c in opts] for opts in letters if opts]
    if not letters:
        return ""
    variants = ["".join(p) for p in itertools.islice(itertools.product(*letters), MAX_INITIAL_VARIANTS)]
    return " ".join(dict.fromkeys(variants))


def check_phone(value: object, field: str = "phone") -> str:
    """An optional phone number: digits with an optional leading '+', 5 to 20 digits;
    spaces, dashes, dots and brackets are dropped. '' when none."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise InvalidRequest(field, f"must be a string, not {type(value).__name__}")
    phone = _PHONE_SEPARATORS.sub("", unicodedata.normalize("NFKC", value))
    if not _PHONE_RE.fullmatch(phone):
        raise InvalidRequest(field, "must be 5 to 20 digits (an optional leading +)")
    return phone


# ---------------------------------------------------------------- answers

@dataclass(frozen=True, slots=True)
class ShopSettings:
    spend_order: str = DEFAULT_SPEND_ORDER
    balance_cap_minor: int | None = None      # None: no cap beyond MAX_BALANCE_MINOR
    member_pin_above_minor: int = 0           # charges above this need the member's PIN (if set)


_MATCH_ORDER = {"phone": 0, "name": 1, "initials": 2}
_INDEX_PREFIX = {"p": "phone", "n": "name", "i": "initials"}


def member_index_args(part: Partition | None, holder: str, phone: object) -> tuple[list, list]:
    """KEYS / ARGV tail of open_account and restore_account: index, phone, name key, initials."""
    phone = check_phone(phone)
    if part is None:
        return [], []
    return [member_index_key(part)], [phone, name_key(holder) if holder else "",
                                      pinyin_initials(holder) if holder else ""]


def open_import_args(bonus_minor: object, import_ref: object) -> list[str]:
    """ARGV tail of open_account.lua (ARGV[12], ARGV[13]): the opening bonus and the import
    reference of a member moved in from another system; [] for a plain open."""
    v.check_amount(bonus_minor, "bonus_minor", allow_zero=True)
    ref = "" if import_ref is None else import_ref
    if not isinstance(ref, str):
        raise InvalidRequest("import_ref", f"must be a string, not {type(ref).__name__}")
    if len(ref) > v.MAX_ID_LEN or any(unicodedata.category(c) == "Cc" for c in ref):
        raise InvalidRequest("import_ref", f"at most {v.MAX_ID_LEN} characters, no control characters")
    if not bonus_minor and not ref:
        return []
    return [str(bonus_minor), ref]


def topup_args(method: object, bonus_minor: object) -> list[str]:
    """ARGV tail of a top-up (credit.lua ARGV[9], ARGV[10]): method, bonus."""
    if method not in PAYMENT_METHODS:
        raise InvalidRequest("method", f"must be one of {', '.join(PAYMENT_METHODS)}")
    v.check_amount(bonus_minor, "bonus_minor", allow_zero=True)
    return [method, str(bonus_minor)]


class Members:
    """Members, cards, lookup, settings, promotions, closing: the member methods of a
    `core.Ledger`, built on its runner, key schema and retention."""

    def __init__(self, ledger):
        self.ledger = ledger
        self.runner = ledger.runner

    def _partition(self, account_id, txn_id, terminal_id, cashier_id) -> Partition:
        v.check_request_ids(account_id, txn_id, terminal_id, cashier_id)
        return self.ledger.schema.partition_of(account_id)

    # ------------------------------------------------------------ cards

    def issue_card(self, account_id: str, card_no: str, *, txn_id: str, terminal_id: str | None = None,
                   cashier_id: str | None = None) -> Result:
        """Make `card_no` a card of the account (a first card, or a replacement after
        `block_card`: no money moves). CARD_IN_USE if the number was issued already or is
        another account's id, CARD_NO_IS_PHONE if it is another member's phone,
        CARD_BLOCKED for a blocked number, ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED. Journaled as
        kind 'card_issue'. Once APPLIED the card also goes into the account's own card list
        (what a charge presented by card is checked against, in the account's slot)."""
        v.check_id(card_no, "card_no")
        acct_part = self._partition(account_id, txn_id, terminal_id, cashier_id)
        part = self.ledger.schema.partition_of(card_no)
        keys = [card_key(part, card_no), part.txn(txn_id), part.journal, part.account(card_no),
                card_map_key(part), part.phones]
        found = ""
        if part is acct_part:
            keys.append(part.account(account_id))      # checked inside the script, atomically
        else:
            # Another slot (a Cluster): the account is checked first and a decline is handed
            # to the script, which stores it in the card's partition like any decision (a
            # retry answers it again, even once the account exists). Accounts are never
            # deleted, so only a close in between can slip through; its card then resolves
            # to a closed account, which answers ACCOUNT_CLOSED.
            bal, st = self.runner.with_retry(self.runner.client.hmget, acct_part.account(account_id), "bal", "st",
                                       txn_id=txn_id)
            if bal is None or st == "closed":
                found = Status.ACCOUNT_NOT_FOUND.value if bal is None else Status.ACCOUNT_CLOSED.value
        args = [txn_id, account_id, 0, self.ledger.retention_s, terminal_id or "", cashier_id or "", card_no, found]
        result = self.runner.run("card_issue", "card_issue", keys, args, account_id, 0, txn_id)
        if result.applied:             # a retry (replayed) writes it again: never lost to a crash
            self.record_card(account_id, card_no, "active")
        return result

    def record_card(self, account_id: str, card_no: str, state: str) -> None:
        """Put a card into its account's own card list (identity.lua mode 'card'): 'active'
        never replaces 'blocked'. Used by issue, block, restore and the rebuild."""
        part = self.ledger.schema.partition_of(account_id)
        reply = self.runner.call("identity", [part.account_cards(account_id)], ["card", card_no, account_id, state],
                                 txn_id=None)
        if reply[0] == "INVALID":
            raise InvalidRequest(*reply[3].split(": ", 1))

    def _card_owner(self, card_no: str) -> str | None:
        """Whose card `card_no` is (its record, else an account of that id): owners never change."""
        part = self.ledger.schema.partition_of(card_no)

        def read():
            pipe = self.runner.client.pipeline(transaction=False)
            pipe.hget(card_key(part, card_no), "a")
            pipe.exists(part.account(card_no))
            return pipe.execute()
        owner, is_account = self.runner.with_retry(read, txn_id=None)
        return owner or (card_no if is_account else None)

    def block_card(self, card_no: str, *, txn_id: str, reason: str, terminal_id: str | None = None,
                   cashier_id: str | None = None) -> Result:
        """Block a card (挂失): `reason` is lost, damaged, stolen or other. The account and
        its money stay; `issue_card` gives it a new card. An account id used as a card can
        be blocked too. CARD_NOT_FOUND, CARD_BLOCKED (already). Journaled as 'card_block'.
        The card is blocked in its account's card list *before* its record: from the moment
        this can answer APPLIED, every charge presented with the card is declined
        CARD_BLOCKED, also one sent after a look-up made before the block."""
        v.check_id(card_no, "card_no")
        v.check_id(txn_id, "txn_id")
        v.check_id(terminal_id, "terminal_id", optional=True)
        v.check_id(cashier_id, "cashier_id", optional=True)
        if reason not in CARD_BLOCK_REASONS:
            raise InvalidRequest("reason", f"must be one of {', '.join(CARD_BLOCK_REASONS)}")
        part = self.ledger.schema.partition_of(card_no)
        owner = self._card_owner(card_no)
        if owner is not None:
            self.record_card(owner, card_no, "blocked")
        keys = [card_key(part, card_no), part.txn(txn_id), part.journal, part.account(card_no),
                card_map_key(part)]
        args = [txn_id, "", 0, self.ledger.retention_s, terminal_id or "", cashier_id or "", card_no, reason]
        result = self.runner.run("card_block", "card_block", keys, args, card_no, 0, txn_id)
        owner = self.runner.with_retry(self.runner.client.hget, keys[0], "a", txn_id=None) or ""
        if owner and result.status in (Status.APPLIED, Status.CARD_BLOCKED):
            self.record_card(owner, card_no, "blocked")     # issued after the first read
        return dataclasses.replace(result, account_id=owner)

    def resolve_card(self, card_no: str) -> Card:
        """What a scanned or typed card number stands for (one round trip). A number without
        a card record that is an account's id resolves to that account (cards printed
        before the member layer keep working).

        Card numbers, account ids and phones share the till's one look-up: a string that is
        the identity of more than one member (a card of one, the id or phone of another:
        data from before the identities were kept apart) answers LOOKUP_AMBIGUOUS with
        `candidates` ('card:<id>', 'account:<id>', 'phone:<id>'), never one of them. A
        string that is only a member's phone answers CARD_NOT_FOUND (find it by phone)."""
        v.check_id(card_no, "card_no")
        part = self.ledger.schema.partition_of(card_no)
        phone = _PHONE_SEPARATORS.sub("", card_no)
        is_phone = bool(_PHONE_RE.fullmatch(phone)) and phone == card_no
        exact = b"p:" + card_no.encode()

        def read():
            pipe = self.runner.client.pipeline(transaction=False)
            pipe.hmget(card_key(part, card_no), "a", "st", "br")
            pipe.exists(part.account(card_no))
            pipe.hget(part.phones, card_no)
            if is_phone:
                for p in self.ledger.partitions:
                    pipe.zrangebylex(member_index_key(p), b"[" + exact + b"\x00", b"(" + exact + b"\x01")
            return pipe.execute()
        (owner, st, reason), is_account, phone_owner, *indexed = self.runner.with_retry(read, txn_id=None)
        candidates: dict[str, str] = {}
        if owner is not None:
            candidates.setdefault(owner, "card")
        if is_account:
            candidates.setdefault(card_no, "account")
        phone_owners = [phone_owner] if phone_owner else []
        phone_owners += [e.partition("\x00")[2] for entries in indexed for e in entries]
        phone_owners = [a for a in dict.fromkeys(phone_owners) if a not in candidates]
        if phone_owners and candidates:
            # a phone of a closed member is no identity any more (it is out of the index)
            statuses = self.runner.with_retry(self._read_statuses, phone_owners, txn_id=None)
            phone_owners = [a for a, st_ in zip(phone_owners, statuses) if st_ is not None and st_ != "closed"]
        for a in phone_owners:
            candidates.setdefault(a, "phone")
        if len(candidates) > 1:
            return Card(card_no, Status.LOOKUP_AMBIGUOUS,
                        candidates=tuple(f"{via}:{a}" for a, via in candidates.items()))
        if owner is not None:
            status = Status.CARD_BLOCKED if st == "blocked" else Status.CARD_ACTIVE
            return Card(card_no, status, owner, reason or "")
        if is_account:
            return Card(card_no, Status.CARD_ACTIVE, card_no, "", legacy=True)
        return Card(card_no, Status.CARD_NOT_FOUND)

    def _read_statuses(self, ids: Sequence[str]) -> list[str | None]:
        """The status of each account ('active' when unset; None: no such account)."""
        pipe = self.runner.client.pipeline(transaction=False)
        for a in ids:
            pipe.hmget(self.ledger.schema.partition_of(a).account(a), "bal", "st")
        return [None if bal is None else (st or "active") for bal, st in pipe.execute()]

    def cards(self, account_id: str | None = None, *, page_size: int = 1000) -> list[Card]:
        """The cards issued (or blocked) of one account, or of every account. Reads each
        partition's card map: a back-office listing, O(cards of the shop)."""
        if account_id is not None:
            v.check_id(account_id, "account_id")
        found: list[tuple[Partition, str, str]] = []
        for part in self.ledger.partitions:
            for card_no, owner in self.runner.with_retry(
                    lambda: list(self.runner.client.hscan_iter(card_map_key(part), count=page_size)), txn_id=None):
                if account_id is None or owner == account_id:
                    found.append((part, card_no, owner))
        if not found:
            return []

        def read():
            pipe = self.runner.client.pipeline(transaction=False)
            for part, card_no, _ in found:
                pipe.hmget(card_key(part, card_no), "st", "br")
            return pipe.execute()
        out = []
        for (_, card_no, owner), (st, reason) in zip(found, self.runner.with_retry(read, txn_id=None)):
            status = Status.CARD_BLOCKED if st == "blocked" else Status.CARD_ACTIVE
            out.append(Card(card_no, status, owner, reason or ""))
        return sorted(out, key=lambda c: (c.account_id, c.card_no))

    def account_cards(self, account_id: str) -> list[Card]:
        """One account's cards with their states and block reasons, from the account's own
        card list (kept in its slot by the scripts): O(its cards), for the till's member
        profile. Raises AccountNotFound."""
        v.check_id(account_id, "account_id")
        schema = self.ledger.schema
        home = schema.partition_of(account_id)
        bal, states = self.runner.with_retry(lambda: self._account_and_cards(home, account_id), txn_id=None)
        if bal is None:
            raise AccountNotFound(account_id)
        numbers = sorted(states)

        def reasons():
            pipe = self.runner.client.pipeline(transaction=False)
            for card_no in numbers:
                pipe.hget(card_key(schema.partition_of(card_no), card_no), "br")
            return pipe.execute()
        found = self.runner.with_retry(reasons, txn_id=None) if numbers else []
        return [Card(card_no, Status.CARD_BLOCKED if states[card_no] == "blocked" else Status.CARD_ACTIVE,
                     account_id, reason or "") for card_no, reason in zip(numbers, found)]

    def _account_and_cards(self, part: Partition, account_id: str):
        pipe = self.runner.client.pipeline(transaction=False)
        pipe.hget(part.account(account_id), "bal")
        pipe.hgetall(part.account_cards(account_id))
        return pipe.execute()

    # ------------------------------------------------------------ lookup

    def find_members(self, query: str, *, limit: int = DEFAULT_FIND_LIMIT) -> list[MemberMatch]:
        """Members whose phone is `query` (exact; spaces and dashes ignored), whose holder
        name starts with it, or whose pinyin initials start with it ('zs' finds 张三).
        At most `limit` (1..50) matches: phone matches first, then names, then initials,
        each in index order. Closed accounts are not found. One pipeline: one range read
        per partition and kind of match, then one read of the matched accounts."""
        if not isinstance(query, str):
            raise InvalidRequest("query", f"must be a string, not {type(query).__name__}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_FIND_LIMIT:
            raise InvalidRequest("limit", f"must be a whole number from 1 to {MAX_FIND_LIMIT}")
        text = name_key(query)
        if not text:
            raise InvalidRequest("query", "must not be empty")
        if len(text) > MAX_QUERY_LEN or any(unicodedata.category(c) == "Cc" for c in text):
            raise InvalidRequest("query", f"at most {MAX_QUERY_LEN} characters, no control characters")
        ranges: list[tuple[bytes, bytes]] = []
        phone = _PHONE_SEPARATORS.sub("", text)
        if _PHONE_RE.fullmatch(phone):
            exact = b"p:" + phone.encode()
            ranges.append((b"[" + exact + b"\x00", b"(" + exact + b"\x01"))
        else:
            prefix = b"n:" + text.encode()
            # UTF-8 never contains 0xff: every entry starting with the prefix sorts below it
            ranges.append((b"[" + prefix, b"(" + prefix + b"\xff"))
            letters = text.replace(" ", "")
            if letters.isascii() and letters.isalpha():
                ini = b"i:" + letters.encode()
                ranges.append((b"[" + ini, b"(" + ini + b"\xff"))

        def search():
            pipe = self.runner.client.pipeline(transaction=False)
            for part in self.ledger.partitions:
                for low, high in ranges:
                    pipe.zrangebylex(member_index_key(part), low, high, 0, limit)
            return pipe.execute()
        hits: dict[str, tuple[int, str]] = {}
        for entries in self.runner.with_retry(search, txn_id=None):
            for entry in entries:
                key, _, account_id = entry.partition("\x00")
                kind = _INDEX_PREFIX.get(key[:1], "name")
                rank = (_MATCH_ORDER[kind], key)
                if account_id not in hits or rank < hits[account_id]:
                    hits[account_id] = rank
        chosen = sorted(hits, key=lambda a: (hits[a], a))[:limit]
        if not chosen:
            return []

        def read():
            pipe = self.runner.client.pipeline(transaction=False)
            for a in chosen:
                pipe.hmget(self.ledger.schema.partition_of(a).account(a), "bal", "st", "nm", "ph", "bo")
            return pipe.execute()
        out = []
        for a, (bal, st, nm, ph, bo) in zip(chosen, self.runner.with_retry(read, txn_id=None)):
            if bal is None or st == "closed":
                continue        # closed in between (close takes it out of the index)
            kind = [k for k, r in _MATCH_ORDER.items() if r == hits[a][0]][0]
            out.append(MemberMatch(a, nm or "", ph or "", int(bal), st or "active", kind, int(bo or 0)))
        return out

    def member_phone(self, account_id: str) -> str:
        """The member's phone ('' when none). Raises AccountNotFound."""
        v.check_id(account_id, "account_id")
        bal, ph = self.runner.with_retry(self.runner.client.hmget, self.ledger.schema.partition_of(account_id).account(account_id),
                                   "bal", "ph", txn_id=None)
        if bal is None:
            raise AccountNotFound(account_id)
        return ph or ""

    # ------------------------------------------------------------ name and phone (issue 29)

    def update_member(self, account_id: str, *, txn_id: str, holder_name: str | None = None,
                      phone: str | None = None, terminal_id: str | None = None,
                      cashier_id: str | None = None) -> Result:
        """Change the member's name and/or phone (None or '': keep it). Journaled as kind
        'member_update' (amount 0) with the name and phone as they are after it; the member
        index follows in the same script. PHONE_TAKEN (another member's phone, a card
        number or another account's id), ACCOUNT_NOT_FOUND, ACCOUNT_CLOSED. A phone must
        be of the account's own partition (always, on one partition): another partition's
        is refused as bad input (its claim would need a second script, not built yet)."""
        holder = v.check_holder_name(holder_name)
        part = self._partition(account_id, txn_id, terminal_id, cashier_id)
        index_keys, member_args = member_index_args(part, holder, phone)
        phone = member_args[0]
        if not holder and not phone:
            raise InvalidRequest("holder_name", "give a new name or a new phone")
        keys = [part.account(account_id), part.txn(txn_id), part.journal, *index_keys, part.phones]
        if phone:
            if self.ledger.schema.partition_of(phone) is not part:
                raise InvalidRequest("phone", "this phone belongs to another partition of the ledger: "
                                              "changing to it is not supported yet")
            keys += [part.account(phone), part.card(phone)]
        args = [txn_id, account_id, 0, self.ledger.retention_s, terminal_id or "", cashier_id or "",
                holder, *member_args]
        return self.runner.run("member_update", "member_update", keys, args, account_id, 0, txn_id)

    # ------------------------------------------------------------ closing (退卡)

    def close_account(self, account_id: str, *, txn_id: str, terminal_id: str | None = None,
                      cashier_id: str | None = None) -> CloseResult:
        """Close the account: pay out the principal (`payout_minor`: the cash to hand over),
        forfeit the bonus (`bonus_forfeited_minor`), balance 0; every later operation on it
        answers ACCOUNT_CLOSED. Declined with ACCOUNT_HAS_HOLDS while holds are active,
        ACCOUNT_FROZEN on a frozen account. Journaled as kind 'close' (pd, bd)."""
        part = self._partition(account_id, txn_id, terminal_id, cashier_id)
        keys = [part.account(account_id), part.txn(txn_id), part.journal, part.holds(account_id),
                part.hold_expiries(account_id), member_index_key(part)]
        args = [txn_id, account_id, 0, self.ledger.retention_s, terminal_id or "", cashier_id or ""]
        reply = self.runner.call("close_account", keys, args, txn_id=txn_id, account_id=account_id)
        from .runner import decode       # redis-py: on first use (tills import this module's rules)
        if type(reply) is str:           # a bare decision (unknown account, NOT_INITIALIZED)
            base, payout, forfeited = decode(reply, "close", account_id, 0, txn_id), 0, 0
        else:                            # the decision's array with payout and bonus appended
            base = decode(reply[:4], "close", account_id, 0, txn_id)
            payout, forfeited = (int(reply[4]), int(reply[5])) if len(reply) >= 6 else (0, 0)
        fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(Result)}
        return CloseResult(**fields, payout_minor=payout, bonus_forfeited_minor=forfeited)

    # ------------------------------------------------------------ settings and promotions

    def setting(self, name: str, value: str, *, txn_id: str, every_partition: bool,
                terminal_id: str | None, cashier_id: str | None, internal: bool = False) -> Result:
        """shop_setting.lua on partition 0 with `txn_id`, then (settings the balance scripts
        read) on every other partition with an internal id derived from it: a retry with
        the same txn id replays what was done and finishes what was not. `internal`: the
        txn id is the ledger's own ('@<kind>:...', a restore's)."""
        (v.check_internal_txn_id if internal else v.check_id)(txn_id, "txn_id")
        v.check_id(terminal_id, "terminal_id", optional=True)
        v.check_id(cashier_id, "cashier_id", optional=True)
        parts = self.ledger.partitions if every_partition else self.ledger.partitions[:1]
        first: Result | None = None
        for part in parts:
            tid = txn_id if part.index == 0 else partition_txn_id(txn_id, part.index)
            keys = [settings_key(part), part.txn(tid), part.journal]
            args = [tid, SHOP_ACCOUNT, 0, self.ledger.retention_s, terminal_id or "", cashier_id or "", name, value]
            result = self.runner.run("shop_setting", "setting", keys, args, SHOP_ACCOUNT, 0, tid)
            if first is None:
                first = result
                if result.status is not Status.APPLIED:
                    break       # nothing was set (or removed): the other partitions agree
        return dataclasses.replace(first, txn_id=txn_id)

    def set_spend_order(self, spend_order: str, *, txn_id: str, terminal_id: str | None = None,
                        cashier_id: str | None = None) -> Result:
        """Which bucket a deduction takes first: principal_first (default), bonus_first or
        proportional. Applied inside the balance scripts of every partition."""
        if spend_order not in SPEND_ORDERS:
            raise InvalidRequest("spend_order", f"must be one of {', '.join(SPEND_ORDERS)}")
        return self.setting("spend_order", spend_order, txn_id=txn_id, every_partition=True,
                             terminal_id=terminal_id, cashier_id=cashier_id)

    def set_balance_cap(self, cap_minor: int | None, *, txn_id: str, terminal_id: str | None = None,
                        cashier_id: str | None = None) -> Result:
        """The most one account may hold (None: no cap). A top-up that would pass it is
        declined with BALANCE_CAP_EXCEEDED."""
        value = "" if cap_minor is None else str(v.check_amount(cap_minor, "balance_cap_minor",
                                                                max_minor=v.MAX_BALANCE_MINOR))
        return self.setting("balance_cap", value, txn_id=txn_id, every_partition=True,
                             terminal_id=terminal_id, cashier_id=cashier_id)

    def shop_settings(self) -> ShopSettings:
        raw = self.runner.with_retry(self.runner.client.hgetall, settings_key(self.ledger.partitions[0]), txn_id=None)
        cap, pin_above = raw.get("balance_cap"), raw.get("member_pin_above")
        return ShopSettings(raw.get("spend_order") or DEFAULT_SPEND_ORDER, int(cap) if cap else None,
                            int(pin_above) if pin_above else 0)

    def set_member_pin_threshold(self, above_minor: int, *, txn_id: str, terminal_id: str | None = None,
                                 cashier_id: str | None = None) -> Result:
        """Charges (deduct, hold) above `above_minor` need the member's payment PIN when the
        member has one set (0, the default: every charge). Read by the gateway; set on every
        partition like the balance cap (the reconcile pass compares each); journaled as a setting."""
        value = str(v.check_amount(above_minor, "member_pin_above_minor", allow_zero=True))
        return self.setting("member_pin_above", value, txn_id=txn_id, every_partition=True,
                            terminal_id=terminal_id, cashier_id=cashier_id)

    def add_promotion(self, min_minor: int, bonus_minor: int, *, txn_id: str, promo_id: str | None = None,
                      terminal_id: str | None = None, cashier_id: str | None = None,
                      starts_ms: int = 0, ends_ms: int = 0) -> Result:
        """A top-up rule: at least `min_minor`, get `bonus_minor` (into the bonus bucket),
        in force from `starts_ms` until before `ends_ms` (epoch ms; 0: no start / no end).
        `promo_id` defaults to 'min<min>-bonus<bonus>'; adding the same id again replaces it.
        `Result.journal_id` is partition 0's entry; the id is `promo_id_of`."""
        v.check_amount(min_minor, "min_minor")
        v.check_amount(bonus_minor, "bonus_minor")
        pid = promo_id if promo_id is not None else promo_id_of(min_minor, bonus_minor)
        if not isinstance(pid, str) or not _PROMO_ID_RE.fullmatch(pid):
            raise InvalidRequest("promo_id", "1-64 characters of A-Z a-z 0-9 . _ -")
        for name, value in (("starts_ms", starts_ms), ("ends_ms", ends_ms)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_PROMO_MS:
                raise InvalidRequest(name, "must be milliseconds since the epoch (0: none)")
        if ends_ms and ends_ms <= starts_ms:
            raise InvalidRequest("ends_ms", "must be after the start")
        value = f"{min_minor}:{bonus_minor}" + (f":{starts_ms}:{ends_ms}" if starts_ms or ends_ms else "")
        return self.setting(f"promo:{pid}", value, txn_id=txn_id,
                             every_partition=False, terminal_id=terminal_id, cashier_id=cashier_id)

    def remove_promotion(self, promo_id: str, *, txn_id: str, terminal_id: str | None = None,
                         cashier_id: str | None = None) -> Result:
        """Remove a rule; SETTING_NOT_FOUND when there is no such promotion."""
        if not isinstance(promo_id, str) or not _PROMO_ID_RE.fullmatch(promo_id):
            raise InvalidRequest("promo_id", "1-64 characters of A-Z a-z 0-9 . _ -")
        return self.setting(f"promo:{promo_id}", "", txn_id=txn_id, every_partition=False,
                             terminal_id=terminal_id, cashier_id=cashier_id)

    def promotions(self) -> list[Promotion]:
        """The top-up rules, smallest minimum first."""
        raw = self.runner.with_retry(self.runner.client.hgetall, settings_key(self.ledger.partitions[0]), txn_id=None)
        out = []
        for name, value in raw.items():
            if name.startswith("promo:"):
                out.append(parse_promotion(name[len("promo:"):], value))
        return sorted(out, key=lambda p: (p.min_minor, p.bonus_minor, p.promo_id))

    def bonus_for(self, amount_minor: int, promotions: Sequence[Promotion] | None = None, *,
                  at_ms: int | None = None) -> Promotion | None:
        """The promotion a top-up of `amount_minor` earns now (or at `at_ms`): of the rules
        in force it reaches, the one with the largest bonus (one rule per top-up, never
        summed). None: no bonus."""
        return best_promotion(amount_minor, self.promotions() if promotions is None else promotions, at_ms=at_ms)


def mask_phone(phone: str) -> str:
    """A phone as a till may show it: the first 3 and the last 4 digits ('138****8000');
    short numbers keep only their last 2."""
    digits = "".join(c for c in phone if c.isdigit())
    if len(digits) >= 8:
        return digits[:3] + "*" * (len(digits) - 7) + digits[-4:]
    return "*" * max(0, len(digits) - 2) + digits[-2:] if digits else ""


MAX_PROMO_MS = 10 ** 15


def parse_promotion(promo_id: str, value: str) -> Promotion:
    """A promotion as the shop settings keep it: '<min>:<bonus>' or, with dates,
    '<min>:<bonus>:<starts_ms>:<ends_ms>' (core/lua/shop_setting.lua checks the form)."""
    parts = [int(x) for x in value.split(":")]
    return Promotion(promo_id, *parts[:4])


def best_promotion(amount_minor: int, promotions: Sequence[Promotion], *,
                   at_ms: int | None = None) -> Promotion | None:
    """Of the `promotions` in force now (or at `at_ms`) a top-up of `amount_minor`
    reaches, the one with the largest bonus (one rule per top-up, never summed); None: no
    bonus. Redis-free: a till previews the bonus with it, and the gateway decides with it
    (at a start or end the two clocks may disagree: the gateway's answer `bonus_changed`
    has the cashier show the bonus in force and ask again)."""
    v.check_amount(amount_minor, "amount_minor")
    now_ms = int(time.time() * 1000) if at_ms is None else at_ms
    reached = [p for p in promotions if p.min_minor <= amount_minor and p.in_force(now_ms)]
    return max(reached, key=lambda p: (p.bonus_minor, p.min_minor), default=None)


def promo_id_of(min_minor: int, bonus_minor: int) -> str:
    return f"min{min_minor}-bonus{bonus_minor}"
