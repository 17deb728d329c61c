"""The till's reads of the ledger, through the gateway, for display: an account as the
sale screen shows it (`lookup`), what was typed or scanned resolved to a member or a pick
list (`find`), a member's profile (`profile`), the shop's promotions and past operations
(`history`). A part of `desktop.engine.Engine` (it runs these on the engine's read
workers, `self.reads`, against its `self.ledger`: a `gateway.client.GatewayLedger`);
nothing here decides money: every operation is decided by the ledger on the live balance.
"""
from __future__ import annotations

from dataclasses import dataclass

from core import AccountNotFound, InvalidRequest, Status
from core.records import MemberMatch
from core.validation import check_id

from .outbox import now_ms
from .workers import Task

MAX_MATCHES = 8                                  # members offered in the pick list


@dataclass(frozen=True, slots=True)
class AccountView:
    """An account as the sale screen shows it: status, balance, available (balance -
    active holds), all in minor units, and when it was read (ms)."""
    account_id: str
    status: str
    balance_minor: int
    available_minor: int
    read_ms: int
    holder_name: str = ""
    bonus_minor: int = 0              # the bonus bucket (part of the balance, never paid out)
    card_no: str = ""                 # the card it was found by ('' when typed as an id or a name)

    @property
    def held_minor(self) -> int:
        return max(0, self.balance_minor - self.available_minor)

    @property
    def principal_minor(self) -> int:
        return self.balance_minor - self.bonus_minor


@dataclass(frozen=True, slots=True)
class Found:
    """What a look-up (`Engine.find`) found for `query`: one account (`view`), several
    members to pick from (`matches`), a blocked card (`blocked`: core.members.Card) or
    nothing (all empty). `ambiguous`: `query` itself is the card, account id or phone of
    each of `matches` (data from before these were kept apart): the cashier asks the
    customer and picks; the till never picks one of them by itself."""
    query: str
    view: AccountView | None = None
    matches: tuple = ()
    blocked: object | None = None
    ambiguous: bool = False


@dataclass(frozen=True, slots=True)
class MemberProfile:
    """A member as the profile dialog shows them: the account (balance, principal, bonus,
    status), their cards with states, the phone masked by the gateway, their recent
    operations at every terminal (newest first, as far back as the ledger keeps them) and
    the top-ups among those by payment method (minor units)."""
    view: AccountView
    cards: tuple = ()                 # core.records.Card: card_no, status, reason
    phone_masked: str = ""
    recent: tuple = ()                # core.records.PastOperation
    top_ups_by_method: tuple = ()     # (method, count, sum_minor), largest sum first


PROFILE_RECENT_COUNT = 30
PROFILE_KINDS = frozenset({"deduct", "refund", "credit", "hold", "capture", "void", "close", "compensate",
                           "offline", "offline_debt"})



class LedgerReads:
    """The read half of the engine (mixed into Engine: needs `self.ledger`, `self.reads`)."""

    def lookup(self, account_id: str, on_done, on_error) -> Task:
        """Read an account for display (status, balance, available) on a worker: an
        AccountView to on_done, or the exception (AccountNotFound, ...) to on_error.
        The task can be cancelled: its answer is then dropped."""
        return self.reads.run(lambda: self._view(account_id), on_done, on_error)

    def _view(self, account_id: str, card_no: str = "") -> AccountView:
        info = self.ledger.account(account_id)
        balance_minor, available_minor = self.ledger.balances(account_id)   # one instant
        # the bonus as read with the status (a change in between shows at the next refresh)
        bonus_minor = min(info.bonus_minor, balance_minor)
        return AccountView(account_id, info.status, balance_minor, available_minor, now_ms(),
                           info.holder_name, bonus_minor, card_no)

    def find(self, query: str, on_done, on_error) -> Task:
        """Resolve what was typed or scanned (worker thread) to a `Found`: a card (or an
        account id used as one) -> its account; a blocked card -> `blocked`; else the
        members whose phone is it, whose name or pinyin initials start with it: one ->
        that account, several -> the pick list (at most MAX_MATCHES)."""
        def read() -> Found:
            try:
                check_id(query, "card_no")
                is_id = True
            except InvalidRequest:
                is_id = False            # e.g. a Chinese name: only a member search
            if is_id:
                card = self.ledger.resolve_card(query)
                if card.status is Status.LOOKUP_AMBIGUOUS:
                    return Found(query, matches=self._candidates(query, card.candidates), ambiguous=True)
                if card.status is Status.CARD_BLOCKED:
                    return Found(query, blocked=card)
                if card.active:
                    return Found(query, view=self._view(card.account_id, "" if card.legacy else query))
            matches = tuple(self.ledger.find_members(query, limit=MAX_MATCHES))
            if len(matches) == 1:
                return Found(query, view=self._view(matches[0].account_id), matches=matches)
            return Found(query, matches=matches)
        return self.reads.run(read, on_done, on_error)

    def _candidates(self, query: str, candidates) -> tuple:
        """The members an ambiguous string stands for, as pick-list rows (`matched_by`: card,
        account or phone)."""
        out = []
        for entry in candidates:
            via, _, account_id = entry.partition(":")
            try:
                info = self.ledger.account(account_id)
            except AccountNotFound:
                continue
            out.append(MemberMatch(account_id, info.holder_name, query if via == "phone" else "", info.balance_minor,
                                   info.status, via, info.bonus_minor))
        return tuple(out)

    def profile(self, account_id: str, on_done, on_error) -> Task:
        """The member's profile (worker thread): a MemberProfile to on_done."""
        def read() -> MemberProfile:
            info, cards, phone = self.ledger.member_profile(account_id)
            balance_minor, available_minor = self.ledger.balances(account_id)
            view = AccountView(account_id, info.status, balance_minor, available_minor, now_ms(), info.holder_name,
                               min(info.bonus_minor, balance_minor))
            # money only: card and account changes carry no amount or balance worth a row
            recent = tuple(p for p in self.history.recent(account_id, count=PROFILE_RECENT_COUNT)
                           if p.kind in PROFILE_KINDS)
            by_method: dict[str, list[int]] = {}
            for past in recent:
                if past.kind == "credit" and past.status in ("", "APPLIED"):
                    tally = by_method.setdefault(past.method or "cash", [0, 0])
                    tally[0] += 1
                    # what the member paid: the principal part (the bonus is the shop's gift)
                    paid = past.principal_delta_minor
                    tally[1] += abs(past.amount_minor) if paid is None else abs(paid)
            top_ups = tuple(sorted(((m, c, s) for m, (c, s) in by_method.items()), key=lambda t: (-t[2], t[0])))
            return MemberProfile(view, tuple(cards), phone, recent, top_ups)
        return self.reads.run(read, on_done, on_error)

    def promotions(self, on_done, on_error) -> Task:
        """The shop's top-up promotions (worker thread)."""
        return self.reads.run(self.ledger.promotions, on_done, on_error)

    @property
    def history(self):
        """Past operations by txn id and an account's recent ones (core.history's answers,
        through the gateway)."""
        return self.ledger.history
