"""The account half of the sale screen: what the account field takes (a card, an
account id, a phone, a name or its pinyin initials, a scan, a receipt number), the
look-up on a worker, the pick list's answer, the account on screen and its re-reads.

Each look-up is a cancellable task (desktop/workers.Task): typing, scanning or looking
up something else cancels it, so its answer is dropped and the screen never shows a
stale or another customer's account. A look-up refused because the central server
could not be reached is run again once the connection is back (`connection_back`), as
long as the field still holds what was looked up and nothing else was done since.
The state lives in the sale session
(desktop/sale_session.py); this class only moves it between the widgets and the engine.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable

from PySide6.QtCore import QCoreApplication, QObject, Signal

from core import AccountNotFound, InvalidRequest
from core.kinds import RECEIPT_NUMBER_PATTERN
from core.member_codes import is_member_code, parse_member_code
from core.members import MAX_QUERY_LEN

from .engine import ONLINE
from .sale_layout import set_tone
from .sale_texts import account_words, lookup_error_words
from .texts import id_error_words

RECEIPT_NUMBER = re.compile(RECEIPT_NUMBER_PATTERN)


def _outage(exc: Exception) -> bool:
    """A look-up refused for want of the central server (not an unknown account, a bad
    id or a blocked card): worth running again once the connection is back."""
    blocked = getattr(exc, "status", None) is not None and getattr(exc, "card_no", None)
    return not blocked and not isinstance(exc, (AccountNotFound, InvalidRequest))


# lupdate finds `translate("SalePage", "...")` calls by their literal context (a
# wrapper taking only the text would put them in no context at all)
translate = QCoreApplication.translate


class AccountLookup(QObject):
    pickRequested = Signal(str, object, object)   # query, matches, the look-up (a Task): the pick list
    lookupStarted = Signal()             # a new look-up: an open pick list is another customer's
    receiptRequested = Signal(str)       # a receipt number typed in the account field or scanned

    def __init__(self, page, *, changed: Callable[[], None], clear_result: Callable[[], None]):
        """`page`: the sale screen, for its session, engine and widgets; `changed()` when
        the buttons must follow; `clear_result()` when the panel's result is another
        customer's."""
        super().__init__(page)
        self.page, self.session, self.engine = page, page.session, page.engine
        self.changed, self.clear_result = changed, clear_result
        # the pick list of an ambiguous string (a card of one member, the account id or
        # phone of another): account id -> the card it was picked by ('' when not a card).
        # A pick from it shows that account as it is, never looking the string up again.
        self.ambiguous_picks: dict[str, str] = {}
        self.retry_query = ""             # a look-up refused in an outage: run again when back online

    def typed(self) -> str:
        return self.page.account_input.text().strip()

    def edited(self, text: str) -> None:
        self.retry_query = ""
        dropped, others_result = self.session.account_edited(text)
        self.page.account_error.clear()
        if dropped or self.session.unconfirmed:
            self.show()                   # the account line never shows someone not typed
        if others_result:
            self.clear_result()           # that result was another customer's
        self.changed()                    # the hold panel follows the account typed

    def take_scan(self, code: str) -> None:
        """A receipt's number opens that sale; a card replaces the account field and is
        looked up at once."""
        if self.session.cashier is not None and RECEIPT_NUMBER.fullmatch(code):
            self.receiptRequested.emit(code)
            return
        self.page.account_input.setText(code)
        self.look_up()

    def receipt_typed(self) -> None:
        """A receipt number typed (or scanned) into the account field: not an account."""
        number = self.typed()
        if self.session.cashier is None or not RECEIPT_NUMBER.fullmatch(number):
            return
        self.page.account_input.clear()           # the account look-up's answer is then ignored
        self.page.balance_label.clear()
        self.receiptRequested.emit(number)

    def customer_changes_to(self, account_id: str) -> None:
        change = self.session.customer_changes_to(account_id)
        if change is None:
            return
        clear_amount, clear_result = change
        if clear_amount:                          # another customer was on screen
            self.page.amount_input.clear()
            self.page.amount_error.clear()
            self.page.next_customer()
        if clear_result:
            self.clear_result()
        self.changed()

    def look_up(self) -> None:
        page, query = self.page, self.typed()
        if is_member_code(query):
            query = self.member_code(query)
        if not query or len(query) > MAX_QUERY_LEN:
            page.account_error.setText(id_error_words(translate("SalePage", "Account"),
                                                      "must not be empty" if not query else "longer than 64"))
            page.account_input.setFocus()
            return
        self.session.cancel_lookup()
        self.retry_query = ""
        self.lookupStarted.emit()
        page.account_error.clear()
        self.customer_changes_to(query)
        self.session.looking_up()
        page.balance_label.setText(translate("SalePage", "Looking up %1…").replace("%1", query))
        page.amount_input.setFocus()
        page.amount_input.selectAll()
        lookup = self.engine.find(query, lambda found: self._found(lookup, query, found),
                                  lambda exc: self.failed(query, exc, lookup))
        self.session.lookup = lookup

    def member_code(self, text: str) -> str:
        """A member code scanned (or typed) into the account field: the engine holds it for
        its account's next charge (the member's confirmation: no PIN asked), and the field
        shows the account, which is looked up. A malformed one is looked up as it is (and
        found nowhere)."""
        try:
            scanned = parse_member_code(text)
        except InvalidRequest:
            return text
        self.engine.hold_member_code(scanned.account_id, text.strip())
        self.page.account_input.setText(scanned.account_id)
        return scanned.account_id

    def _found(self, lookup, query: str, found) -> None:
        if not self.session.lookup_wanted(lookup) or self.typed() != query:
            return                                   # the cashier has moved on
        if found.view is not None:
            self.show_account(found.view, query)
        elif found.blocked is not None:
            self.failed(query, found.blocked, lookup)
        elif found.ambiguous and found.matches:
            self.ambiguous_picks = {m.account_id: query if m.matched_by == "card" else "" for m in found.matches}
            self.page.balance_label.setText(
                translate("SalePage", "“%1” is the card, account number or phone of %2 members: ask the customer which one they are")
                .replace("%1", query).replace("%2", str(len(found.matches))))
            self.pickRequested.emit(query, found.matches, lookup)
        elif found.matches:
            self.page.balance_label.setText(translate("SalePage", "%1 members found: pick one").replace("%1", str(len(found.matches))))
            self.pickRequested.emit(query, found.matches, lookup)
        else:
            self.failed(query, AccountNotFound(query), lookup)

    def show_account(self, view, query: str = "") -> None:
        self.session.found_as(query, view.account_id)
        self.customer_changes_to(view.account_id)
        self.page.account_input.setText(view.account_id)
        self.session.account_shown(view)
        self.page.account_error.clear()
        self.show()
        self.changed()

    def bring_on_screen(self, account_id: str, *, opening: bool) -> None:
        """An operation on another account than the one typed (e.g. a refund of an earlier
        customer's charge picked in the history): that customer comes on screen, so its
        result is never shown under someone else. An account being opened is not there
        yet: it is looked up once it is opened."""
        if account_id == self.typed():
            return
        self.page.account_input.setText(account_id)
        if not opening:
            self.look_up()
            return
        self.session.cancel_lookup()
        self.customer_changes_to(account_id)
        self.session.account = None
        self.page.account_error.clear()
        self.page.balance_label.clear()

    def pick(self, lookup, account_id: str) -> bool:
        """Look the picked account up, unless the cashier has moved on since `lookup`
        (then nothing happens and False is answered)."""
        if not self.session.lookup_wanted(lookup):
            return False
        if account_id in self.ambiguous_picks:
            # the string typed stands for several members: read the one picked by its id
            card_no = self.ambiguous_picks.pop(account_id)
            self.ambiguous_picks = {}
            self.page.account_input.setText(account_id)
            self.session.cancel_lookup()
            self.customer_changes_to(account_id)
            self.session.looking_up()
            self.page.balance_label.setText(translate("SalePage", "Looking up %1…").replace("%1", account_id))
            picked = self.engine.lookup(account_id, lambda view: self._picked(picked, account_id, view, card_no),
                                        lambda exc: self.failed(account_id, exc, picked))
            self.session.lookup = picked
            return True
        self.page.account_input.setText(account_id)
        self.look_up()
        return True

    def _picked(self, lookup, account_id: str, view, card_no: str) -> None:
        if not self.session.lookup_wanted(lookup) or self.typed() != account_id:
            return                                   # the cashier has moved on
        self.show_account(replace(view, card_no=card_no), account_id)

    def looked_up(self, account_id: str, view) -> None:
        if self.typed() != account_id:
            return                                   # the cashier has moved on
        current = self.session.account
        if current is not None and current.account_id == view.account_id and not view.card_no:
            view = replace(view, card_no=current.card_no)       # still the customer found by card
        self.session.account_shown(view)
        self.show()
        self.changed()

    def refresh(self) -> None:
        """Re-read the account on screen. Quiet: no focus change, and a failed read keeps
        what is shown."""
        if self.engine.closed:
            self.page.refresh_timer.stop()
            return
        view, refresh = self.session.account, self.session.refresh
        if view is not None and (refresh is None or not refresh.pending) and self.engine.state == ONLINE:
            self.session.refresh = self.engine.lookup(
                view.account_id, lambda new: self.session.refreshed(new) and self.show(), lambda _exc: None)
        self.page.history_table.refill_holds()

    def failed(self, account_id: str, exc: Exception, lookup=None) -> None:
        if self.typed() != account_id or (lookup is not None and not self.session.lookup_wanted(lookup)):
            return
        page = self.page
        self.session.account = None
        page.balance_label.clear()
        self.changed()
        page.account_error.setText(lookup_error_words(account_id, exc))
        page.account_input.setFocus()
        page.account_input.selectAll()
        if _outage(exc):
            self.retry_query = account_id

    def connection_back(self) -> None:
        """The connection is back (engine.connectionChanged, online): a look-up refused
        in the outage runs again, if the field still holds it and no account is on screen."""
        query, self.retry_query = self.retry_query, ""
        if (query and self.session.cashier is not None and self.typed() == query
                and self.session.account is None and not self.engine.closed):
            self.look_up()

    def show(self) -> None:
        """The account on screen on the balance line (or how to start)."""
        info = self.session.account
        if info is None:
            if not self.typed():
                self.page.balance_label.setText(translate("SalePage", "Scan a card to start"))
            elif self.session.unconfirmed:
                self.page.balance_label.setText(translate("SalePage", "Press Enter to look up %1").replace("%1", self.typed()))
            set_tone(self.page.balance_label, "")
            return
        self.page.balance_label.setText(account_words(info))
        set_tone(self.page.balance_label, "frozen" if info.status == "frozen" else "")
