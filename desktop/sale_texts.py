"""The sale screen's sentences: the account line, the result panel, the hold panel and
the look-up errors, from values (an AccountView, an Op, a look-up's exception).

They are translated in the sale screen's context ("SalePage" in
desktop/translations), as when the screen wrote them itself.
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLocale

from core import AccountNotFound, InvalidRequest

from . import money
from .history_model import clock_time
from .outbox import MEMBER_KINDS, Op
from .texts import (account_status_words, card_reason_words, id_error_words, kind_words, member_outcome_words,
                    method_words, short_status, status_words)


# lupdate finds `translate("SalePage", "...")` calls by their literal context (a
# wrapper taking only the text would put them in no context at all)
translate = QCoreApplication.translate


def _fmt(amount_minor: int) -> str:
    return money.format_minor(amount_minor, QLocale())


def account_words(view) -> str:
    """The balance line of the account on screen (an AccountView)."""
    text = translate("SalePage", "Account %1 · %2").replace("%1", view.account_id).replace("%2", account_status_words(view.status))
    if view.holder_name:   # a name, not UI text: shown as given, never translated
        text += f" · {view.holder_name}"
    text += "\n"
    if view.held_minor:
        text += (translate("SalePage", "Balance %1 · On hold %2 · Available %3").replace("%1", _fmt(view.balance_minor))
                 .replace("%2", _fmt(view.held_minor)).replace("%3", _fmt(view.available_minor)))
    else:
        text += translate("SalePage", "Balance %1").replace("%1", _fmt(view.balance_minor))
    if view.bonus_minor:
        text += " · " + (translate("SalePage", "principal %1 + bonus %2").replace("%1", _fmt(view.principal_minor))
                         .replace("%2", _fmt(view.bonus_minor)))
    return text


def lookup_error_words(account_id: str, exc: Exception) -> str:
    """Why what was typed or scanned put no account on screen."""
    if getattr(exc, "status", None) is not None and getattr(exc, "card_no", None):   # a blocked card
        return (translate("SalePage", "Card %1 is blocked (reported %2): it cannot be used. Find the member by phone or "
                   "name, then give them a new card (Member…).").replace("%1", exc.card_no)
                .replace("%2", card_reason_words(exc.reason or "lost").lower()))
    if isinstance(exc, AccountNotFound):
        return translate("SalePage", "Account: unknown account %1 (no card, phone or name matches)").replace("%1", account_id)
    if isinstance(exc, InvalidRequest):
        return id_error_words(translate("SalePage", "Account"), exc.reason)
    return translate("SalePage", "Account: cannot look up now (no connection to the central server)")


def working_words(kind: str, account_id: str, amount_minor: int) -> str:
    """The panel while `kind` is on its way."""
    text = {"deduct": translate("SalePage", "Charging %1 to %2…"), "refund": translate("SalePage", "Refunding %1 to %2…"),
            "credit": translate("SalePage", "Topping up %1 to %2…"), "hold": translate("SalePage", "Holding %1 on %2…"),
            "capture": translate("SalePage", "Completing the sale: %1 from %2…"),
            "void": translate("SalePage", "Releasing the hold of %1 on %2…"),
            "open": translate("SalePage", "Opening member account %2…"),
            "card_replace": translate("SalePage", "Changing the card of %2…"),
            "close": translate("SalePage", "Closing account %2…"),
            "sale": translate("SalePage", "Charging %1 to the card of %2, the rest by another payment…"),
            "tender_refund": translate("SalePage", "Refunding %1 of a card + other payment to %2…")}[kind]
    return text.replace("%1", _fmt(amount_minor)).replace("%2", account_id)


def decision_words(op: Op, released_minor: int = 0) -> str:
    """The panel once `op` is decided; `released_minor`: what a completed sale gave back
    of its hold."""
    if op.kind in ("sale", "tender_refund"):
        return split_words(op)
    if not op.applied:
        return member_outcome_words(op) if op.kind in MEMBER_KINDS else status_words(op.status, op.kind)
    if op.kind == "hold":
        return (translate("SalePage", "Held: %1 until %2").replace("%1", _fmt(op.amount_minor)).replace("%2", clock_time(op.expires_ms))
                + "\n" + translate("SalePage", "Available now %1").replace("%1", _fmt(op.balance_after_minor)))
    if op.kind == "void":
        return (translate("SalePage", "Hold released: %1").replace("%1", _fmt(op.amount_minor)) + "\n"
                + translate("SalePage", "Balance %1").replace("%1", _fmt(op.balance_after_minor)))
    if op.kind in MEMBER_KINDS:
        return member_outcome_words(op)
    if op.kind == "credit":
        return ((translate("SalePage", "Topped up: %1 (%2)") if not op.bonus_minor else translate("SalePage", "Topped up: %1 (%2) + bonus %3"))
                .replace("%1", _fmt(op.amount_minor)).replace("%2", method_words(op.method or "cash"))
                .replace("%3", _fmt(op.bonus_minor)) + "\n"
                + translate("SalePage", "New balance %1").replace("%1", _fmt(op.balance_after_minor)))
    if released_minor:
        verb = translate("SalePage", "Sale completed: %1 charged, %2 released").replace("%2", _fmt(released_minor))
    else:
        verb = {"deduct": translate("SalePage", "Approved: %1 charged"), "refund": translate("SalePage", "Refunded: %1"),
                "capture": translate("SalePage", "Sale completed: %1 charged")}[op.kind]
    return (verb.replace("%1", _fmt(op.amount_minor)) + "\n"
            + translate("SalePage", "New balance %1").replace("%1", _fmt(op.balance_after_minor)))


def tender_words(tenders: dict) -> str:
    """'cash 13.50 + WeChat Pay 5.00': the tenders of a split sale besides the card."""
    return " + ".join(f"{method_words(m)} {_fmt(a)}" for m, a in tenders.items())


def split_words(op: Op) -> str:
    """The panel once a split-tender sale or its refund is decided (issue 31). A declined
    sale recorded nothing: the customer still owes the whole bill, and the panel says so."""
    d = op.details
    if op.kind == "sale":
        total = d.get("total_minor", op.amount_minor)
        if not op.applied:
            return (status_words(op.status, op.kind) + "\n"
                    + translate("SalePage", "Nothing was paid: the customer still owes %1.").replace("%1", _fmt(total)))
        text = (translate("SalePage", "Paid %1: card %2 + %3").replace("%1", _fmt(total))
                .replace("%2", _fmt(op.amount_minor)).replace("%3", tender_words(d.get("tenders", {}))))
        if d.get("change_minor"):
            text += "\n" + translate("SalePage", "Change %1").replace("%1", _fmt(d["change_minor"]))
        return text + "\n" + translate("SalePage", "New balance %1").replace("%1", _fmt(op.balance_after_minor))
    if not op.applied:
        # the row's steps run in order (card, then each tender): a later one refused after an
        # earlier one applied (another till refunding the same sale) leaves part given back
        return (status_words(op.status, "refund") + "\n"
                + translate("SalePage", "Part of it may have been given back: see what is left of the sale "
                                        "(Earlier sale…, F3) before refunding again."))
    parts = ([translate("SalePage", "card %1").replace("%1", _fmt(d["card_minor"]))] if d.get("card_minor") else [])
    if d.get("tenders"):
        parts.append(tender_words(d["tenders"]))
    return (translate("SalePage", "Refunded: %1 (%2)").replace("%1", _fmt(op.amount_minor)).replace("%2", " + ".join(parts))
            + "\n" + translate("SalePage", "New balance %1").replace("%1", _fmt(op.balance_after_minor)))


def resolved_words(op: Op) -> str:
    """One line for an operation that was being checked and is now decided."""
    return (translate("SalePage", "Checked: %1 %2 for %3: %4").replace("%1", kind_words(op.kind))
            .replace("%2", _fmt(op.amount_minor)).replace("%3", op.account_id)
            .replace("%4", short_status(op.status, op.pending)))


def hold_panel_words(hold: Op | None) -> str:
    if hold is None:
        return translate("SalePage", "No open hold")
    return (translate("SalePage", "Open hold: %2 until %3\nAccount %1").replace("%1", hold.account_id)
            .replace("%2", _fmt(hold.amount_minor)).replace("%3", clock_time(hold.expires_ms)))


def large_amount_words(amount_minor: int) -> str:
    return (translate("SalePage", "Large amount: %1\n%2\nIs this amount right?").replace("%1", _fmt(amount_minor))
            .replace("%2", money.amount_in_words(amount_minor, QLocale())))


def release_words(hold: Op) -> str:
    return (translate("SalePage", "Release the hold of %1 on account %2? The money goes back to the account.")
            .replace("%1", _fmt(hold.amount_minor)).replace("%2", hold.account_id))


def checking_words() -> str:
    return translate("SalePage", "Being checked: the central server has not answered yet.\n"
              "Do NOT charge again. The terminal keeps trying on its own.")


def refund_hint_words() -> str:
    return translate("SalePage", "Refund: select an approved charge in the list first (Tab to the list, arrow keys to choose).")


def offline_status_words(use) -> str:
    """While the till sells offline (desktop/offline.py): the budget used and the block list's age."""
    from datetime import datetime
    from .texts import offline_words
    as_of = datetime.fromtimestamp(use.blocklist_as_of_ms / 1000).strftime("%H:%M") if use.blocklist_as_of_ms else "—"
    return offline_words(use.used_minor, use.budget_minor, as_of)


def offline_sale_words(op, use) -> str:
    """The panel after a charge made offline: what was charged, that it is settled later,
    and the budget used."""
    from . import money
    text = translate("SalePage", "Charged OFFLINE: %1 to %2. Receipt marked OFFLINE; the card is charged when "
                     "the central server is back.").replace("%1", money.format_minor(op.amount_minor)) \
        .replace("%2", op.account_id)
    return text if use is None else text + "\n" + offline_status_words(use)

