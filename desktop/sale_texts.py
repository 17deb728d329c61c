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


def tr(text: str) -> str:
    return QCoreApplication.translate("SalePage", text)


def _fmt(amount_minor: int) -> str:
    return money.format_minor(amount_minor, QLocale())


def account_words(view) -> str:
    """The balance line of the account on screen (an AccountView)."""
    text = tr("Account %1 · %2").replace("%1", view.account_id).replace("%2", account_status_words(view.status))
    if view.holder_name:   # a name, not UI text: shown as given, never translated
        text += f" · {view.holder_name}"
    text += "\n"
    if view.held_minor:
        text += (tr("Balance %1 · On hold %2 · Available %3").replace("%1", _fmt(view.balance_minor))
                 .replace("%2", _fmt(view.held_minor)).replace("%3", _fmt(view.available_minor)))
    else:
        text += tr("Balance %1").replace("%1", _fmt(view.balance_minor))
    if view.bonus_minor:
        text += " · " + (tr("principal %1 + bonus %2").replace("%1", _fmt(view.principal_minor))
                         .replace("%2", _fmt(view.bonus_minor)))
    return text


def lookup_error_words(account_id: str, exc: Exception) -> str:
    """Why what was typed or scanned put no account on screen."""
    if getattr(exc, "status", None) is not None and getattr(exc, "card_no", None):   # a blocked card
        return (tr("Card %1 is blocked (reported %2): it cannot be used. Find the member by phone or "
                   "name, then give them a new card (Member…).").replace("%1", exc.card_no)
                .replace("%2", card_reason_words(exc.reason or "lost").lower()))
    if isinstance(exc, AccountNotFound):
        return tr("Account: unknown account %1 (no card, phone or name matches)").replace("%1", account_id)
    if isinstance(exc, InvalidRequest):
        return id_error_words(tr("Account"), exc.reason)
    return tr("Account: cannot look up now (no connection to the central server)")


def working_words(kind: str, account_id: str, amount_minor: int) -> str:
    """The panel while `kind` is on its way."""
    text = {"deduct": tr("Charging %1 to %2…"), "refund": tr("Refunding %1 to %2…"),
            "credit": tr("Topping up %1 to %2…"), "hold": tr("Holding %1 on %2…"),
            "capture": tr("Completing the sale: %1 from %2…"),
            "void": tr("Releasing the hold of %1 on %2…"),
            "open": tr("Opening member account %2…"),
            "card_replace": tr("Changing the card of %2…"),
            "close": tr("Closing account %2…")}[kind]
    return text.replace("%1", _fmt(amount_minor)).replace("%2", account_id)


def decision_words(op: Op, released_minor: int = 0) -> str:
    """The panel once `op` is decided; `released_minor`: what a completed sale gave back
    of its hold."""
    if not op.applied:
        return member_outcome_words(op) if op.kind in MEMBER_KINDS else status_words(op.status, op.kind)
    if op.kind == "hold":
        return (tr("Held: %1 until %2").replace("%1", _fmt(op.amount_minor)).replace("%2", clock_time(op.expires_ms))
                + "\n" + tr("Available now %1").replace("%1", _fmt(op.balance_after_minor)))
    if op.kind == "void":
        return (tr("Hold released: %1").replace("%1", _fmt(op.amount_minor)) + "\n"
                + tr("Balance %1").replace("%1", _fmt(op.balance_after_minor)))
    if op.kind in MEMBER_KINDS:
        return member_outcome_words(op)
    if op.kind == "credit":
        return ((tr("Topped up: %1 (%2)") if not op.bonus_minor else tr("Topped up: %1 (%2) + bonus %3"))
                .replace("%1", _fmt(op.amount_minor)).replace("%2", method_words(op.method or "cash"))
                .replace("%3", _fmt(op.bonus_minor)) + "\n"
                + tr("New balance %1").replace("%1", _fmt(op.balance_after_minor)))
    if released_minor:
        verb = tr("Sale completed: %1 charged, %2 released").replace("%2", _fmt(released_minor))
    else:
        verb = {"deduct": tr("Approved: %1 charged"), "refund": tr("Refunded: %1"),
                "capture": tr("Sale completed: %1 charged")}[op.kind]
    return (verb.replace("%1", _fmt(op.amount_minor)) + "\n"
            + tr("New balance %1").replace("%1", _fmt(op.balance_after_minor)))


def resolved_words(op: Op) -> str:
    """One line for an operation that was being checked and is now decided."""
    return (tr("Checked: %1 %2 for %3: %4").replace("%1", kind_words(op.kind))
            .replace("%2", _fmt(op.amount_minor)).replace("%3", op.account_id)
            .replace("%4", short_status(op.status, op.pending)))


def hold_panel_words(hold: Op | None) -> str:
    if hold is None:
        return tr("No open hold")
    return (tr("Open hold: %2 until %3\nAccount %1").replace("%1", hold.account_id)
            .replace("%2", _fmt(hold.amount_minor)).replace("%3", clock_time(hold.expires_ms)))


def large_amount_words(amount_minor: int) -> str:
    return (tr("Large amount: %1\n%2\nIs this amount right?").replace("%1", _fmt(amount_minor))
            .replace("%2", money.amount_in_words(amount_minor, QLocale())))


def release_words(hold: Op) -> str:
    return (tr("Release the hold of %1 on account %2? The money goes back to the account.")
            .replace("%1", _fmt(hold.amount_minor)).replace("%2", hold.account_id))


def checking_words() -> str:
    return tr("Being checked: the central server has not answered yet.\n"
              "Do NOT charge again. The terminal keeps trying on its own.")


def refund_hint_words() -> str:
    return tr("Refund: select an approved charge in the list first (Tab to the list, arrow keys to choose).")
