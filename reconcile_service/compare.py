"""The periodic pass's comparisons beyond balance and status (issue 25 items 6-9).

Each reads Redis and the book at the same journal position, as the balance comparison
does ("like with like"): every record the scripts write keeps the id of its last journal
entry ('lj' of an account, a card, a partition's settings); Redis is read first, then the
consumer group's state, and a record is compared only when the group has applied up to
its 'lj' (else it is "in flight", left to the next pass, never a false alarm).

* buckets (`compare_buckets`, called for each page of accounts): a Redis account's bonus
  bucket (and so its principal) against `accounts.bonus_minor` at the account's position;
* cards (`compare_cards`): every card of each partition's card map, its map entry and its
  card record (owner, state) against `cards`; every card of the book present in Redis;
* settings and promotions (`compare_settings`): each partition's `cfg` hash against
  `shop_settings` (promotions live on partition 0 only);
* bonus credits (`compare_bonus_credits`): every top-up's bonus against the promotion in
  force in the book at the top-up's position (the `shop_settings` promo rows and their
  positions); a top-up made before a promotion's last change cannot be judged any more
  and stays as it was (an open finding stays open);
* cashier records (`compare_cashiers`): the book holds no cashier table (cashiers are
  Redis-only, core/cashiers.py), so what is compared is Redis with itself: every id of
  the cashier index has its record with a name and a scrypt PIN hash;
* TTLs (`compare_ttls`): a TTL on any ledger key that must never expire (core.key_ttls);
* chain anchors (`compare_anchors`): the book's heads against their Redis anchors.

Each finding names its subject (`Finding.subject`: 'card:<no>', 'setting:<name>',
'txn:<id>', 'key:<key>', ...), one open discrepancy per kind and subject, cleared when no
longer observed (unless in flight).
"""
from __future__ import annotations

import logging

from redis.exceptions import NoPermissionError, RedisError
from sqlalchemy import func, select

from core import Ledger
from core.cashiers import INDEX_KEY, hash_key as cashier_key
from core.key_ttls import expiring_ledger_keys
from core.keys import Partition
from core.members import parse_promotion

from .anchors import anchor_problems
from .journal import Journal
from .models import Account, Card, DuplicateEntry, LedgerEntry, ShopSetting, journal_pos

log = logging.getLogger(__name__)

PAGE = 500
PROMO = "promo:"
SETTING_NAMES = ("spend_order", "balance_cap", "member_pin_above")
# the kinds these comparisons find, each cleared by the pass when no longer observed
KINDS = ("bucket_mismatch", "card_mismatch", "card_missing_in_db", "card_missing_in_redis",
         "setting_mismatch", "bonus_mismatch", "cashier_record_mismatch", "ttl_on_ledger_key",
         "chain_behind_anchor", "chain_anchor_mismatch")


def unjudged(kind: str) -> str:
    """The in-flight marker of a whole kind whose check could not run this pass."""
    return f"*kind:{kind}"


class Comparer:
    """The comparisons of one pass: `findings` and the in-flight subjects are the pass's."""

    def __init__(self, ledger: Ledger, engine, report, in_flight: set[str]):
        from .reconcile import Finding      # reconcile imports this module
        self.ledger, self.engine, self.report, self.in_flight = ledger, engine, report, in_flight
        self.client = ledger.client
        self.journal = Journal(ledger)
        self._finding = Finding
        self.promos_at = ""        # partition 0's position the promotions were compared at

    def add(self, kind: str, subject: str, cause: str, account_id: str | None = None, **evidence) -> None:
        self.report.findings.append(self._finding(kind, account_id, cause, evidence=dict(evidence, subject=subject),
                                                  subject=subject))

    def applied(self, part: Partition, journal_id: str | None) -> bool:
        """Whether the book has every entry of `part` up to `journal_id` (a record's 'lj',
        read before this call: Redis first, then the group's state, as for balances)."""
        return self.journal.state(part).applied_through(journal_id or "0-0")

    # ------------------------------------------------------------ buckets

    def compare_buckets(self, conn, part: Partition, redis_accounts: dict, state) -> None:
        """Bonus bucket of each account of a page (whose entries are all applied) against
        the book at the account's last journal id. Principal = balance - bonus, so with
        the balance compared already the bonus decides both buckets."""
        ids = [a for a, info in redis_accounts.items()
               if info is not None and "#" not in a and state.applied_through(info.last_journal_id or "0-0")]
        if not ids:
            return
        rows = {r.account_id: r for r in conn.execute(select(
            Account.account_id, Account.bonus_minor, Account.principal_minor, Account.last_journal_pos)
            .where(Account.account_id.in_(ids)))}
        for account_id in ids:
            info, row = redis_accounts[account_id], rows.get(account_id)
            if row is None or not info.last_journal_id:
                continue
            pos = journal_pos(info.last_journal_id)
            if row.last_journal_pos == pos:
                db_bonus = int(row.bonus_minor or 0)
            elif row.last_journal_pos > pos:
                db_bonus = bonus_at(conn, account_id, pos)
            else:
                continue                    # the balance comparison reports the missing entry
            if db_bonus != info.bonus_minor:
                self.add("bucket_mismatch", account_id,
                         f"Redis bonus bucket {info.bonus_minor} (principal {info.principal_minor}) != database "
                         f"bonus {db_bonus} (principal {info.balance_minor - db_bonus}) at journal position "
                         f"{info.last_journal_id}", account_id, journal_partition=part.index,
                         journal_id=info.last_journal_id, redis_bonus_minor=info.bonus_minor,
                         db_bonus_minor=db_bonus)

    # ------------------------------------------------------------ cards

    def compare_cards(self) -> None:
        for part in self.ledger.partitions:
            cursor = 0
            while True:
                cursor, page = self.client.hscan(part.cards, cursor, count=PAGE)
                if page:
                    self._compare_card_page(part, sorted(page))
                if int(cursor) == 0:
                    break
        self._cards_lost_in_redis()

    def _compare_card_page(self, part: Partition, card_nos: list[str]) -> None:
        pipe = self.client.pipeline(transaction=False)
        pipe.hmget(part.cards, card_nos)
        for no in card_nos:
            pipe.hmget(part.card(no), "a", "st", "lj")
        replies = pipe.execute()
        state = self.journal.state(part)          # after the cards: like with like
        mapped, records = replies[0], replies[1:]
        with self.engine.connect() as conn:
            db = {r.card_no: r for r in conn.execute(select(Card.card_no, Card.account_id, Card.status)
                                                      .where(Card.card_no.in_(card_nos)))}
        for no, map_owner, (owner, st, lj) in zip(card_nos, mapped, records):
            if not state.applied_through(lj or "0-0"):
                self.in_flight.add(f"card:{no}")
                continue
            row = db.get(no)
            redis = {"map_account_id": map_owner, "card_account_id": owner, "status": st, "journal_id": lj}
            if row is None:
                self.add("card_missing_in_db", f"card:{no}", f"card {no} is in Redis (account {map_owner}) but "
                         f"not in the database, which has applied the partition past its entry {lj}",
                         None, card_no=no, redis=redis)
            elif (map_owner, owner, st or "active") != (row.account_id, row.account_id, row.status):
                self.add("card_mismatch", f"card:{no}", f"card {no}: Redis maps it to {map_owner}, its record "
                         f"says {owner}/{st or 'active'}, the database {row.account_id}/{row.status}",
                         row.account_id, card_no=no, redis=redis,
                         database={"account_id": row.account_id, "status": row.status})

    def _cards_lost_in_redis(self) -> None:
        """Cards of the book missing from Redis (Redis never deletes a card, so no entry
        can be in flight for it)."""
        after = ""
        while True:
            with self.engine.connect() as conn:
                rows = conn.execute(select(Card.card_no, Card.account_id).where(Card.card_no > after)
                                    .order_by(Card.card_no).limit(PAGE)).all()
            if not rows:
                return
            after = rows[-1].card_no
            pipe = self.client.pipeline(transaction=False)
            for r in rows:
                pipe.hexists(self.ledger.schema.partition_of(r.card_no).cards, r.card_no)
            for r, present in zip(rows, pipe.execute()):
                if not present:
                    self.add("card_missing_in_redis", f"card:{r.card_no}", f"card {r.card_no} of {r.account_id} "
                             "is in the database, not in Redis's card map", r.account_id, card_no=r.card_no)

    # ------------------------------------------------------------ settings, promotions, bonuses

    def compare_settings(self) -> bool:
        """Each partition's settings as of their last journal id ('lj' of the `cfg` hash)
        against the book. Answers whether partition 0 (the promotions) was compared."""
        first = self.ledger.partitions[0]
        pipe = self.client.pipeline(transaction=False)
        pipe.hgetall(first.settings)
        pipe.time()
        cfg0, (sec, usec) = pipe.execute()
        # top-ups booked up to this instant had every promotion change before them in Redis
        self.promos_at = journal_pos(f"{int(sec) * 1000 + int(usec) // 1000}-0")
        if not self.applied(first, cfg0.get("lj")):
            self.in_flight.add(unjudged("setting_mismatch"))
            return False
        at = journal_pos(cfg0.get("lj") or "0-0")
        with self.engine.connect() as conn:
            book = {r.name: r for r in conn.execute(select(ShopSetting.name, ShopSetting.value,
                                                           ShopSetting.journal_pos))}
        for part in self.ledger.partitions:
            cfg = cfg0 if part.index == 0 else self.client.hgetall(part.settings)
            if part.index and not self.applied(part, cfg.get("lj")):
                self.in_flight.add(unjudged("setting_mismatch"))
                continue
            names = {n for n in cfg if is_setting(n)} | {n for n, r in book.items() if r.value}
            if part.index:
                names = {n for n in names if not n.startswith(PROMO)}     # promotions: partition 0 only
            for name in sorted(names):
                row = book.get(name)
                if row is not None and row.journal_pos > at:
                    self.in_flight.add(f"setting:{name}@{part.index}")     # changed after the read
                    continue
                want = row.value if row is not None else ""
                if cfg.get(name, "") == want:
                    continue
                if part.index and self.client.hget(part.settings, name) == want:
                    continue      # a change still being copied to the partitions
                self.add("setting_mismatch", f"setting:{name}@{part.index}",
                         f"setting {name} on partition {part.index}: Redis {cfg.get(name, '')!r}, the book "
                         f"{want!r}" + ("" if row is not None else " (the book never had it)"),
                         None, setting=name, journal_partition=part.index, redis_value=cfg.get(name),
                         book_value=want, journal_id=cfg.get("lj"))
        return True

    def compare_bonus_credits(self) -> None:
        """Every top-up with a bonus against the promotions in force in the book at its
        position. Run only once partition 0 is applied up to now (`compare_settings`), so
        every promotion change made before a booked top-up is in the book."""
        with self.engine.connect() as conn:
            promos = [(r.name[len(PROMO):], r.value, r.journal_pos) for r in conn.execute(
                select(ShopSetting.name, ShopSetting.value, ShopSetting.journal_pos)
                .where(ShopSetting.name.like(f"{PROMO}%")))]
            credits = conn.execute(select(LedgerEntry.txn_id, LedgerEntry.account_id, LedgerEntry.journal_partition,
                                          LedgerEntry.journal_id, LedgerEntry.journal_pos,
                                          LedgerEntry.principal_delta_minor, LedgerEntry.bonus_delta_minor)
                                   .where(LedgerEntry.kind == "credit", LedgerEntry.bonus_delta_minor > 0,
                                          LedgerEntry.journal_pos <= self.promos_at)).all()
        for c in credits:
            if any(pos > c.journal_pos for _, _, pos in promos):
                self.in_flight.add(f"txn:{c.txn_id}")      # a promotion changed since: not judgeable now
                continue
            in_force = [parse_promotion(pid, value) for pid, value, _ in promos if value]
            promo = self.ledger.bonus_for(int(c.principal_delta_minor), in_force,
                                          at_ms=int(c.journal_id.partition("-")[0]))   # its stream time
            expected = promo.bonus_minor if promo is not None else 0
            if int(c.bonus_delta_minor) != expected:
                self.add("bonus_mismatch", f"txn:{c.txn_id}",
                         f"top-up {c.txn_id} of {c.principal_delta_minor} got bonus {c.bonus_delta_minor}; the "
                         f"promotions in force in the book give {expected}"
                         + (f" ({promo.promo_id})" if promo else " (none applies)"),
                         c.account_id, txn_id=c.txn_id, journal_partition=c.journal_partition,
                         journal_id=c.journal_id, bonus_minor=int(c.bonus_delta_minor), expected_bonus_minor=expected,
                         promotions={p.promo_id: f"{p.min_minor}:{p.bonus_minor}" for p in in_force})

    # ------------------------------------------------------------ cashiers, TTLs, anchors

    def compare_cashiers(self) -> None:
        ids = sorted(self.client.smembers(INDEX_KEY))
        for start in range(0, len(ids), PAGE):
            page = ids[start:start + PAGE]
            pipe = self.client.pipeline(transaction=False)
            for cid in page:
                pipe.hmget(cashier_key(cid), "name", "pin")
            for cid, (name, pin) in zip(page, pipe.execute()):
                if not name or not (pin or "").startswith("scrypt$"):
                    self.add("cashier_record_mismatch", f"cashier:{cid}",
                             f"cashier {cid} is in the cashier index but its record "
                             + ("is missing" if name is None and pin is None else "has no name or PIN hash"),
                             None, cashier_id=cid)

    def compare_ttls(self) -> None:
        for e in expiring_ledger_keys(self.client, page_size=PAGE):
            self.add("ttl_on_ledger_key", f"key:{e.key}", f"{e.key} expires in {e.seconds_left:.0f} s: a ledger key "
                     "must never expire (PERSIST it now)", None, key=e.key, seconds_left=round(e.seconds_left, 3))

    def compare_anchors(self) -> None:
        with self.engine.connect() as conn:
            problems = anchor_problems(conn, self.ledger)
        for p in problems:
            self.add(p.kind, f"partition:{p.partition}", p.detail, None, **p.evidence)

    def run(self) -> None:
        """Every comparison but the buckets (which run with the balances' pages); a check
        that cannot run (no permission, Redis away meanwhile) leaves its kind as it was."""
        checks = ((self.compare_cards, ("card_mismatch", "card_missing_in_db", "card_missing_in_redis")),
                  (self.compare_cashiers, ("cashier_record_mismatch",)),
                  (self.compare_ttls, ("ttl_on_ledger_key",)),
                  (self.compare_anchors, ("chain_behind_anchor", "chain_anchor_mismatch")))
        try:
            promos_ok = self.compare_settings()
        except (NoPermissionError, RedisError) as exc:
            promos_ok = False
            self._skipped("settings", ("setting_mismatch",), exc)
        if promos_ok:
            self.compare_bonus_credits()
        else:
            self.in_flight.add(unjudged("bonus_mismatch"))
        for check, kinds in checks:
            try:
                check()
            except NoPermissionError as exc:
                self._skipped(check.__name__, kinds, exc)

    def _skipped(self, what: str, kinds, exc: Exception) -> None:
        self.in_flight.update(unjudged(k) for k in kinds)
        log.warning("comparison skipped", extra={"check": what, "error": f"{type(exc).__name__}: {exc}"[:300]})


def is_setting(name: str) -> bool:
    """A field of a `cfg` hash that is a shop setting (the hash also keeps 'lj', the
    last journal id of the partition's settings)."""
    return name in SETTING_NAMES or name.startswith(PROMO)


def bonus_at(conn, account_id: str, pos: str) -> int:
    """The account's bonus bucket in the book as of journal position `pos` (inclusive)."""
    total = 0
    for table in (LedgerEntry, DuplicateEntry):
        total += conn.execute(select(func.coalesce(func.sum(table.bonus_delta_minor), 0)).where(
            table.account_id == account_id, table.journal_pos <= pos)).scalar_one()
    return int(total)
