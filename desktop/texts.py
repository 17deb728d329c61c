"""Every message the terminal shows about money, in words a cashier can act on.

Ledger statuses (the hold statuses included), refusals, amount and id errors,
hold states and connection states are turned
into translated sentences here (Qt context "Texts"), so that the screens never show
a status code, an exception or a traceback.
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLocale

from . import money


def status_words(status: str, kind: str = "") -> str:
    """The result of a decided operation, e.g. 'Declined: not enough money'. `kind`: the
    operation's (a charge declined by its card is told apart from a card not issued)."""
    if kind in ("deduct", "hold", "sale") and status == "CARD_BLOCKED":
        return QCoreApplication.translate("Texts", "Declined: the card is blocked (reported lost or stolen); nothing was charged")
    words = {
        "APPLIED": QCoreApplication.translate("Texts", "Approved"),
        "INSUFFICIENT_FUNDS": QCoreApplication.translate("Texts", "Declined: not enough money on the account"),
        "ACCOUNT_NOT_FOUND": QCoreApplication.translate("Texts", "Declined: unknown account"),
        "ACCOUNT_FROZEN": QCoreApplication.translate("Texts", "Declined: the account is frozen"),
        "ORIGINAL_NOT_FOUND": QCoreApplication.translate("Texts", "Refund refused: the original charge was not found"),
        "REFUND_EXCEEDS_ORIGINAL": QCoreApplication.translate("Texts", "Refund refused: more than the charge left to refund"),
        "BALANCE_LIMIT_EXCEEDED": QCoreApplication.translate("Texts", "Declined: the balance would pass its upper limit"),
        "ACCOUNT_NOT_FROZEN": QCoreApplication.translate("Texts", "Declined: the account is not frozen"),
        "ACCOUNT_EXISTS": QCoreApplication.translate("Texts", "Declined: the account already exists"),
        "TOO_MANY_HOLDS": QCoreApplication.translate("Texts", "Declined: this account has too many open holds"),
        "HOLD_NOT_FOUND": QCoreApplication.translate("Texts", "Not completed: the hold was not found (it may be too old)"),
        "HOLD_ALREADY_CAPTURED": QCoreApplication.translate("Texts", "Not completed: this hold was already completed"),
        "HOLD_ALREADY_VOIDED": QCoreApplication.translate("Texts", "Not completed: this hold was already released"),
        "HOLD_EXPIRED": QCoreApplication.translate("Texts", "Not completed: the hold has expired, the money is free again"),
        "CAPTURE_EXCEEDS_HOLD": QCoreApplication.translate("Texts", "Not completed: the final amount is more than the hold"),
        "ACCOUNT_HAS_HOLDS": QCoreApplication.translate("Texts", "Not closed: the account has open holds; complete or release them first"),
        "ACCOUNT_CLOSED": QCoreApplication.translate("Texts", "Declined: the account is closed (card returned)"),
        "CARD_NOT_FOUND": QCoreApplication.translate("Texts", "Not made: that card is not one of this account's cards"),
        "CARD_BLOCKED": QCoreApplication.translate("Texts", "Not made: that card number is blocked (reported lost) and cannot be issued"),
        "CARD_IN_USE": QCoreApplication.translate("Texts", "Not made: that card number is already in use"),
        "CARD_NO_IS_PHONE": QCoreApplication.translate("Texts", "Not made: that card number is another member's phone number"),
        "CARD_NOT_THIS_ACCOUNT": QCoreApplication.translate("Texts", "Declined: that card is not one of this account's cards"),
        "ACCOUNT_ID_TAKEN": QCoreApplication.translate("Texts", "Not made: that account number is already a card number or a member's phone"),
        "PHONE_TAKEN": QCoreApplication.translate("Texts", "Not made: that phone is already another member's phone, card number or account number"),
        "BALANCE_CAP_EXCEEDED": QCoreApplication.translate("Texts", "Declined: the top-up would pass the shop's balance cap"),
        "CONFIRMATION_REQUIRED": QCoreApplication.translate("Texts", "Not made: the member's payment PIN or member code is needed for this amount"),
        "TENDER_NOT_IN_SALE": QCoreApplication.translate("Texts", "Refund refused: the sale was not paid that way"),
        "INVALID": QCoreApplication.translate("Texts", "Not made: the request was not valid"),
        "CONFLICT": QCoreApplication.translate("Texts", "Not made: transaction number clash, call support"),
        "NOT_SENT": QCoreApplication.translate("Texts", "Not made: the terminal could not save it, call support"),
        "ABANDONED": QCoreApplication.translate("Texts", "Abandoned by a supervisor: too old to re-send, handled by hand"),
        "DEBT_OPEN": QCoreApplication.translate(
            "Texts", "Declined: the member owes an offline debt; a top-up pays it first"),
        "OFFLINE_LIMIT_EXCEEDED": QCoreApplication.translate(
            "Texts", "Offline sale not settled: past the shop's offline limit; tell a supervisor"),
    }
    return words.get(status, QCoreApplication.translate("Texts", "Not made: unexpected answer, call support"))


def short_status(status: str, pending: bool) -> str:
    """One or two words for the history table."""
    if pending:
        return QCoreApplication.translate("Texts", "Being checked")
    short = {
        "APPLIED": QCoreApplication.translate("Texts", "Approved"),
        "INSUFFICIENT_FUNDS": QCoreApplication.translate("Texts", "Not enough money"),
        "ACCOUNT_NOT_FOUND": QCoreApplication.translate("Texts", "Unknown account"),
        "ACCOUNT_FROZEN": QCoreApplication.translate("Texts", "Account frozen"),
        "ORIGINAL_NOT_FOUND": QCoreApplication.translate("Texts", "Original not found"),
        "REFUND_EXCEEDS_ORIGINAL": QCoreApplication.translate("Texts", "Exceeds original"),
        "BALANCE_LIMIT_EXCEEDED": QCoreApplication.translate("Texts", "Balance limit"),
        "TOO_MANY_HOLDS": QCoreApplication.translate("Texts", "Too many holds"),
        "HOLD_NOT_FOUND": QCoreApplication.translate("Texts", "Hold not found"),
        "HOLD_ALREADY_CAPTURED": QCoreApplication.translate("Texts", "Already completed"),
        "HOLD_ALREADY_VOIDED": QCoreApplication.translate("Texts", "Already released"),
        "HOLD_EXPIRED": QCoreApplication.translate("Texts", "Hold expired"),
        "CAPTURE_EXCEEDS_HOLD": QCoreApplication.translate("Texts", "More than held"),
        "ACCOUNT_HAS_HOLDS": QCoreApplication.translate("Texts", "Open holds"),
        "ACCOUNT_CLOSED": QCoreApplication.translate("Texts", "Account closed"),
        "ACCOUNT_EXISTS": QCoreApplication.translate("Texts", "Account exists"),
        "CARD_NOT_FOUND": QCoreApplication.translate("Texts", "Card not found"),
        "CARD_BLOCKED": QCoreApplication.translate("Texts", "Card blocked"),
        "CARD_IN_USE": QCoreApplication.translate("Texts", "Card in use"),
        "CARD_NO_IS_PHONE": QCoreApplication.translate("Texts", "Card no. is a phone"),
        "CARD_NOT_THIS_ACCOUNT": QCoreApplication.translate("Texts", "Not this account's card"),
        "ACCOUNT_ID_TAKEN": QCoreApplication.translate("Texts", "Number taken"),
        "PHONE_TAKEN": QCoreApplication.translate("Texts", "Phone taken"),
        "BALANCE_CAP_EXCEEDED": QCoreApplication.translate("Texts", "Balance cap"),
        "CONFIRMATION_REQUIRED": QCoreApplication.translate("Texts", "Member PIN needed"),
        "TENDER_NOT_IN_SALE": QCoreApplication.translate("Texts", "Not paid that way"),
        "ABANDONED": QCoreApplication.translate("Texts", "Abandoned"),
        "DEBT_OPEN": QCoreApplication.translate("Texts", "Debt open"),
        "OFFLINE_LIMIT_EXCEEDED": QCoreApplication.translate("Texts", "Offline limit"),
    }
    return short.get(status, QCoreApplication.translate("Texts", "Not made"))


def kind_words(kind: str) -> str:
    return {
        "deduct": QCoreApplication.translate("Texts", "Charge"),
        "offline": QCoreApplication.translate("Texts", "Charge (offline)"),
        "offline_debt": QCoreApplication.translate("Texts", "Charge (offline, left a debt)"),
        "refund": QCoreApplication.translate("Texts", "Refund"),
        "credit": QCoreApplication.translate("Texts", "Top-up"),
        "hold": QCoreApplication.translate("Texts", "Hold"),
        "capture": QCoreApplication.translate("Texts", "Sale completed"),
        "void": QCoreApplication.translate("Texts", "Hold released"),
        "open": QCoreApplication.translate("Texts", "New member"),
        "card_replace": QCoreApplication.translate("Texts", "Card replaced"),
        "close": QCoreApplication.translate("Texts", "Account closed"),
        "shift_close": QCoreApplication.translate("Texts", "Shift closed"),
        "sale": QCoreApplication.translate("Texts", "Card + other payment"),
        "tender_refund": QCoreApplication.translate("Texts", "Refund of a card + other payment"),
    }.get(kind, kind)


def method_words(method: str) -> str:
    """A top-up's payment method."""
    return {
        "cash": QCoreApplication.translate("Texts", "Cash"),
        "wechat": QCoreApplication.translate("Texts", "WeChat Pay"),
        "alipay": QCoreApplication.translate("Texts", "Alipay"),
        "bank_card": QCoreApplication.translate("Texts", "Bank card"),
        "other": QCoreApplication.translate("Texts", "Other"),
    }.get(method, method)


DRAWER_REASONS = ("change", "safe_drop", "expense", "correction", "other")


def drawer_reason_words(reason: str) -> str:
    """Why cash was put into or taken out of the drawer (desktop/drawer.py)."""
    return {
        "change": QCoreApplication.translate("Texts", "Change"),
        "safe_drop": QCoreApplication.translate("Texts", "Safe drop"),
        "expense": QCoreApplication.translate("Texts", "Expense"),
        "correction": QCoreApplication.translate("Texts", "Correction"),
        "other": QCoreApplication.translate("Texts", "Other"),
    }.get(reason, reason)


def card_reason_words(reason: str) -> str:
    return {
        "lost": QCoreApplication.translate("Texts", "Lost"),
        "damaged": QCoreApplication.translate("Texts", "Damaged"),
        "stolen": QCoreApplication.translate("Texts", "Stolen"),
        "other": QCoreApplication.translate("Texts", "Other reason"),
    }.get(reason, reason)


def hold_state_words(state: str, until: str = "") -> str:
    """A hold as the history and the hold panel show it (`until`: the expiry, e.g. 14:35)."""
    return {
        "open": QCoreApplication.translate("Texts", "Held until %1").replace("%1", until),
        "checking": QCoreApplication.translate("Texts", "Being checked"),
        "captured": QCoreApplication.translate("Texts", "Completed"),
        "released": QCoreApplication.translate("Texts", "Released"),
        "expired": QCoreApplication.translate("Texts", "Expired"),
        "gone": QCoreApplication.translate("Texts", "Hold not found"),
    }.get(state, state)


def refusal_words(reason: str) -> str:
    """Why a new operation was not started."""
    return {
        "offline": QCoreApplication.translate(
            "Texts", "No connection to the central server: charges are refused until it is back."),
        "reconnecting": QCoreApplication.translate(
            "Texts", "The central server is switching over: try again in a few seconds."),
        "not_initialized": QCoreApplication.translate(
            "Texts", "The central server holds no account data: call support. Charges are refused."),
        "unsafe": QCoreApplication.translate(
            "Texts", "The central server is set up unsafely: call support. Charges are refused."),
        "revoked": QCoreApplication.translate(
            "Texts", "The ledger gateway refuses this terminal's credential (revoked or replaced): "
            "call the shop's IT person. Charges are refused."),
        "account_pending": QCoreApplication.translate(
            "Texts", "A charge for this account is still being checked: wait for its result."),
        "account_stale": QCoreApplication.translate(
            "Texts", "An old operation of this account is too old to re-send: a supervisor must decide it first "
            "(Old operations… in the status bar)."),
        "busy": QCoreApplication.translate(
            "Texts", "The last charge is still being processed: wait for its result."),
        "no_hold": QCoreApplication.translate(
            "Texts", "No open hold: select a hold in the list or scan the card it was made for."),
        "hold_closed": QCoreApplication.translate(
            "Texts", "This hold is already completed, released or expired."),
        "closed": QCoreApplication.translate("Texts", "The terminal is shutting down."),
        "no_shift": QCoreApplication.translate("Texts", "No shift is open: sign in again."),
        "not_looked_up": QCoreApplication.translate(
            "Texts", "Not charged: the account was changed. Press Enter in the account field to look it up first."),
        # offline sales (desktop/offline.py): why a charge cannot be made while offline
        "offline_not_set_up": QCoreApplication.translate(
            "Texts", "Offline: this terminal has no offline limits from the central server yet: charges are refused."),
        "offline_duration_over": QCoreApplication.translate(
            "Texts", "Offline too long: the shop's maximum offline time is over. Charges are refused until "
            "the central server is back."),
        "offline_card_blocked": QCoreApplication.translate(
            "Texts", "Offline: this card is on the block list (reported lost or stolen): not charged."),
        "offline_needs_supervisor": QCoreApplication.translate(
            "Texts", "Offline: a charge that needs a supervisor cannot be made offline."),
        "offline_needs_member_pin": QCoreApplication.translate(
            "Texts", "Offline: this amount needs the member's payment PIN, which cannot be checked offline."),
        "offline_balance_unknown": QCoreApplication.translate(
            "Texts", "Offline: this terminal has not seen the member's balance recently: not charged."),
        "offline_over_balance": QCoreApplication.translate(
            "Texts", "Offline: more than the balance this terminal last saw for the member: not charged."),
        "offline_member_limit": QCoreApplication.translate(
            "Texts", "Offline limit reached for this member at this terminal: not charged."),
        "offline_budget": QCoreApplication.translate(
            "Texts", "Offline budget of this terminal used up: charges are refused until the central server "
            "is back."),
        "offline_no_cashier": QCoreApplication.translate("Texts", "No cashier signed in: sign in again."),
    }.get(reason, QCoreApplication.translate("Texts", "Not started."))


def offline_words(used_minor: int, budget_minor: int, blocklist_as_of: str) -> str:
    """The status while the till sells offline: "offline: ¥X of ¥Y budget used"."""
    return (QCoreApplication.translate("Texts", "Offline: %1 of %2 budget used · block list of %3")
            .replace("%1", money.format_minor(used_minor)).replace("%2", money.format_minor(budget_minor))
            .replace("%3", blocklist_as_of))


def amount_error_words(reason: str) -> str:
    return {
        money.EMPTY: QCoreApplication.translate("Texts", "Amount: enter an amount, e.g. 12.50"),
        money.NOT_A_NUMBER: QCoreApplication.translate("Texts", "Amount: use digits and one decimal point, e.g. 12.50"),
        money.NEGATIVE: QCoreApplication.translate("Texts", "Amount: must not be negative"),
        money.TOO_MANY_DECIMALS: QCoreApplication.translate("Texts", "Amount: at most two decimals (fen)"),
        money.ZERO: QCoreApplication.translate("Texts", "Amount: must be more than zero"),
        money.TOO_LARGE: QCoreApplication.translate("Texts", "Amount: too large for one payment"),
    }.get(reason, QCoreApplication.translate("Texts", "Amount: not a valid amount"))


def id_error_words(field_label: str, reason: str) -> str:
    """An id (account, cashier, terminal) that core.validation refused."""
    if "empty" in reason:
        return QCoreApplication.translate("Texts", "%1: must not be empty").replace("%1", field_label)
    if "longer" in reason:
        return QCoreApplication.translate("Texts", "%1: at most 64 characters").replace("%1", field_label)
    return QCoreApplication.translate(
        "Texts", "%1: only letters, digits and . _ : - are allowed").replace("%1", field_label)


def connection_words(state: str) -> str:
    return {
        "connecting": QCoreApplication.translate("Texts", "Connecting to the central server…"),
        "online": QCoreApplication.translate("Texts", "Connected"),
        "offline": QCoreApplication.translate("Texts", "No connection to the central server: charges refused"),
        "reconnecting": QCoreApplication.translate("Texts", "Central server switching over: reconnecting…"),
        "not_initialized": QCoreApplication.translate("Texts", "Central server has no account data: call support"),
        "unsafe": QCoreApplication.translate("Texts", "Central server set up unsafely: call support"),
        "revoked": QCoreApplication.translate("Texts", "This terminal's credential is refused: call IT"),
    }.get(state, state)


def account_status_words(status: str) -> str:
    return {"active": QCoreApplication.translate("Texts", "Active"),
            "frozen": QCoreApplication.translate("Texts", "Frozen"),
            "closed": QCoreApplication.translate("Texts", "Closed (card returned)")}.get(status, status)


def signin_words(outcome: str, *, attempts_left: int = 0, locked_s: int = 0) -> str:
    if outcome == "wrong_pin" and attempts_left > 0:
        return QCoreApplication.translate(
            "Texts", "Cashier id or PIN is wrong (%1 tries left before a lock).").replace("%1", str(attempts_left))
    if outcome in ("wrong_pin", "unknown"):
        return QCoreApplication.translate("Texts", "Cashier id or PIN is wrong.")
    if outcome == "locked":
        minutes = max(1, -(-locked_s // 60))
        return QCoreApplication.translate(
            "Texts", "Too many wrong PINs: this cashier is locked for %1 min.").replace("%1", str(minutes))
    if outcome == "disabled":
        return QCoreApplication.translate("Texts", "This cashier is disabled: ask the back office.")
    if outcome == "not_supervisor":
        return QCoreApplication.translate("Texts", "This cashier is not a supervisor.")
    if outcome == "self_approval":
        return QCoreApplication.translate("Texts", "No one approves their own operation: ask another supervisor.")
    if outcome == "offline":
        return QCoreApplication.translate("Texts", "Cannot reach the central server: check the network and try again.")
    return QCoreApplication.translate("Texts", "Sign-in failed.")


def pin_error_words(reason: str) -> str:
    if "empty" in reason:
        return QCoreApplication.translate("Texts", "PIN: enter your PIN")
    return QCoreApplication.translate("Texts", "PIN: 4 to 12 digits")


def member_outcome_words(op) -> str:
    """What became of a member operation (open, card_replace, close), in full: what was
    done, or why not (never a bare 'not made')."""
    if op.pending:
        return QCoreApplication.translate("Texts", "Being checked: the central server has not answered yet. The terminal keeps trying.")
    return _MEMBER_OUTCOME_WORDS.get(op.kind, _closed_words)(op)


def _opened_words(op) -> str:
    card = op.card_no
    if op.applied:
        return (QCoreApplication.translate("Texts", "Member account %1 opened.").replace("%1", op.account_id) + "\n"
                + (QCoreApplication.translate("Texts", "Card %1 issued.").replace("%1", card) if card else QCoreApplication.translate("Texts", "No card issued yet.")))
    if op.status.startswith("CARD_"):
        return (QCoreApplication.translate("Texts", "Member account %1 opened, but the card was not issued:").replace("%1", op.account_id)
                + "\n" + status_words(op.status))
    return QCoreApplication.translate("Texts", "The account was not opened:") + "\n" + status_words(op.status)


def _card_replaced_words(op) -> str:
    card, old = op.card_no, op.details.get("old_card", "")
    if op.applied:
        lines = []
        if old:
            lines.append(QCoreApplication.translate("Texts", "Card %1 blocked: it can no longer be used.").replace("%1", old))
        if card:
            lines.append(QCoreApplication.translate("Texts", "New card %1 issued to account %2; the balance stays.")
                         .replace("%1", card).replace("%2", op.account_id))
        return "\n".join(lines)
    return QCoreApplication.translate("Texts", "The card was not changed:") + "\n" + status_words(op.status)


def _closed_words(op) -> str:
    fmt = lambda m: money.format_minor(m or 0, QLocale())  # noqa: E731
    if op.applied:
        return (QCoreApplication.translate("Texts", "Account %1 closed. Pay out %2 in cash to the customer.")
                .replace("%1", op.account_id).replace("%2", fmt(op.amount_minor)) + "\n"
                + QCoreApplication.translate("Texts", "Bonus forfeited: %1").replace("%1", fmt(-(op.bonus_delta_minor or 0))))
    return QCoreApplication.translate("Texts", "The account was not closed:") + "\n" + status_words(op.status)


# the words of each member operation (core.kinds.MEMBER_KINDS; a test checks they match)
_MEMBER_OUTCOME_WORDS = {"open": _opened_words, "card_replace": _card_replaced_words, "close": _closed_words}
