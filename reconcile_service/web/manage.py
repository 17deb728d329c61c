"""The back office's management forms (issue 29 items 1-3): members, cards, promotions,
cashiers, shop settings, terminals, discrepancies, logins; and the Audit page.

Every form posts to `/manage/<area>/<action>`, one table (`ACTIONS`) says for each what
role area it needs, whether it is destructive (then a confirmation page comes first,
showing what will happen: the payout of a 退卡, the card that stops working) and the
function that does it. Those functions call the same core functions `cashierctl` calls
(`core.Ledger`, `core.cashiers.CashierRegistry`, `core.terminals.TerminalRegistry`,
`reports.book.resolve_discrepancy`), with the same input rules, so a refusal has the
CLI's words (`field: reason`, "declined: <status>") and changes nothing. Each change is
then journaled as an `audit` entry (core.audit: who, from which address, what, the txn
ids it made), which the drain chains into the book like every entry.

Txn ids are made by the server when the form is drawn (`bo-<action>-<32 hex>`, a hidden
field): a form sent twice (a double click, a retry after a time-out) replays the first
decision instead of doing it again; its audit record is the same record again too (its
nonce is the txn id's hex). The CSRF token and the session's role are checked by app.py
before any of this runs.
"""
from __future__ import annotations

import re
import secrets
from datetime import datetime, timedelta
from dataclasses import dataclass, field
from typing import Callable

from flask import Blueprint, abort, current_app, flash, g, redirect, render_template, request, url_for

from core import InvalidRequest, Ledger, LedgerError, LedgerNotInitialized, LedgerUnavailable, TxnConflict
from core.audit import AuditRecord, ledger_who, record_action, AUDIT_TERMINAL
from core.members import CARD_BLOCK_REASONS, SPEND_ORDERS, promo_id_of
from core.money import format_minor, parse_minor

from ..reports import book
from . import auth

TXN_RE = re.compile(r"bo-([a-z_]{1,20})-([0-9a-f]{32})")
AREAS = ("members", "cards", "promotions", "cashiers", "settings", "terminals", "discrepancies", "users")
# tabs of the management pages: the areas, then the import page (web/imports.py)
TABS = AREAS + ("import",)


class Declined(Exception):
    """The ledger said no (a status other than APPLIED): the CLI's words, nothing changed."""


@dataclass
class Done:
    message: str                       # shown on the page
    target: str                        # what the action was about (account, card, ...)
    summary: str                       # what changed, in words (no PIN, no password)
    refs: tuple[str, ...] = ()         # txn ids of the ledger operations
    secret: str = ""                   # shown once on the page, never recorded (a terminal's token)


@dataclass(frozen=True)
class Action:
    area: str
    run: Callable
    destructive: bool = False
    preview: Callable | None = None    # the confirmation page's words (destructive actions)
    fields: tuple[str, ...] = ()       # the form fields the confirmation page carries on


# ---------------------------------------------------------------- context

class Context:
    """What an action works with: the ledger (the reconcile service's Redis URL), the
    database, the acting login, its txn id and the form."""

    def __init__(self, engine, form, txn_hex: str):
        self.engine = engine
        self.form = form
        self.txn_hex = txn_hex
        self.who = ledger_who(g.user)

    @property
    def ledger(self) -> Ledger:
        return ledger_of(current_app)

    def txn(self, kind: str) -> str:
        return f"bo-{kind}-{self.txn_hex}"

    def ids(self) -> dict:
        return dict(terminal_id=AUDIT_TERMINAL, cashier_id=self.who)

    def text(self, name: str, required: bool = True) -> str:
        value = (self.form.get(name) or "").strip()
        if required and not value:
            raise InvalidRequest(name, "must not be empty")
        return value


def ledger_of(app) -> Ledger:
    ledger = app.extensions.get("backoffice_ledger")
    if ledger is None:
        url = app.config.get("LEDGER_REDIS_URL")
        if not url:
            raise InvalidRequest("redis_url", "the back office was started without the ledger's Redis URL")
        ledger = app.extensions["backoffice_ledger"] = Ledger.from_url(url, auto_init=False)
    return ledger


def _applied(result, what: str) -> None:
    if not result.applied:
        raise Declined(f"{what}: declined: {result.status.value}")


# ---------------------------------------------------------------- members and cards

def member_open(c: Context) -> Done:
    account = c.text("account")
    holder, phone = c.text("holder", False) or None, c.text("phone", False) or None
    result = c.ledger.open_account(account, txn_id=c.txn("open"), holder_name=holder, phone=phone, **c.ids())
    _applied(result, f"open {account}")
    summary = "opened" + (f", holder {holder}" if holder else "") + (f", phone {phone}" if phone else "")
    return Done(f"member {account} opened; txn {result.txn_id}", account, summary, (result.txn_id,))


def member_edit(c: Context) -> Done:
    account = c.text("account")
    holder, phone = c.text("holder", False) or None, c.text("phone", False) or None
    result = c.ledger.update_member(account, txn_id=c.txn("member_update"), holder_name=holder, phone=phone,
                                    **c.ids())
    _applied(result, f"update {account}")
    summary = ", ".join(x for x in (f"name {holder}" if holder else "", f"phone {phone}" if phone else "") if x)
    return Done(f"member {account}: {summary}; txn {result.txn_id}", account, summary, (result.txn_id,))


def _close_preview(c: Context) -> str:
    account = c.text("account")
    info = c.ledger.account(account)          # AccountNotFound: "account_id: no account 'X'"
    return (f"close {account} ({info.status}): pay out {format_minor(info.principal_minor)} in cash, "
            f"bonus forfeited {format_minor(info.bonus_minor)}")


def member_close(c: Context) -> Done:
    account = c.text("account")
    result = c.ledger.close_account(account, txn_id=c.txn("close"), **c.ids())
    _applied(result, f"close {account}")
    words = (f"pay out {format_minor(result.payout_minor)} in cash, bonus forfeited "
             f"{format_minor(result.bonus_forfeited_minor)}")
    return Done(f"close {account}: {words}; txn {result.txn_id}", account, f"closed (退卡): {words}",
                (result.txn_id,))


def card_issue(c: Context) -> Done:
    account, card = c.text("account"), c.text("card_no")
    result = c.ledger.issue_card(account, card, txn_id=c.txn("card_issue"), **c.ids())
    _applied(result, f"card {card} for {account}")
    return Done(f"card {card} for {account}: done; txn {result.txn_id}", card, f"issued to {account}",
                (result.txn_id,))


def _reason(c: Context) -> str:
    reason = c.text("reason")
    if reason not in CARD_BLOCK_REASONS:
        raise InvalidRequest("reason", f"must be one of {', '.join(CARD_BLOCK_REASONS)}")
    return reason


def _card_preview(c: Context) -> str:
    card = c.ledger.resolve_card(c.text("card_no"))
    owner = f" of {card.account_id}" if card.account_id else ""
    new = ""
    if "new_card_no" in c.form:
        from core.validation import check_id
        new = f"; new card {check_id(c.text('new_card_no'), 'new_card_no')}"
    return f"block card {card.card_no}{owner} ({card.status.value}) as {_reason(c)}: it stops working at once{new}"


def card_block(c: Context) -> Done:
    card, reason = c.text("card_no"), _reason(c)
    result = c.ledger.block_card(card, reason=reason, txn_id=c.txn("card_block"), **c.ids())
    _applied(result, f"block card {card} ({reason})")
    return Done(f"block card {card} ({reason}): done; txn {result.txn_id}", card,
                f"blocked ({reason}), account {result.account_id}", (result.txn_id,))


def card_replace(c: Context) -> Done:
    """Block the old card and issue the new one to the same account (two operations,
    each with its own txn id derived from the form's: a retry finishes what was not done)."""
    card, new, reason = c.text("card_no"), c.text("new_card_no"), _reason(c)
    from core.validation import check_id
    check_id(new, "new_card_no")
    owner = c.ledger.resolve_card(card).account_id
    if not owner:
        raise InvalidRequest("card_no", f"no card {card!r}")
    # the new number must be free before the old card is blocked (a retry of a replace
    # whose issue failed finds it free again, or already this account's)
    taken = c.ledger.resolve_card(new)
    if taken.status.value != "CARD_NOT_FOUND" and not (taken.active and taken.account_id == owner):
        raise InvalidRequest("new_card_no", f"card {new} is already in use ({taken.status.value})")
    blocked = c.ledger.block_card(card, reason=reason, txn_id=c.txn("card_block"), **c.ids())
    if not blocked.applied and blocked.status.value != "CARD_BLOCKED":
        _applied(blocked, f"block card {card} ({reason})")
    issued = c.ledger.issue_card(owner, new, txn_id=c.txn("card_issue"), **c.ids())
    _applied(issued, f"card {new} for {owner}")
    return Done(f"card {card} replaced by {new} for {owner}; txn {issued.txn_id}", card,
                f"replaced by {new} ({reason}), account {owner}", (blocked.txn_id, issued.txn_id))


# ---------------------------------------------------------------- promotions

def _day_ms(c: Context, name: str, *, next_day: bool = False) -> int:
    """A date field (YYYY-MM-DD, the shop's day) as epoch ms of its start (or of the next
    day's start: an end date counts in full); 0 when empty."""
    text = c.text(name, False)
    if not text:
        return 0
    day = book.parse_date(text, name) + timedelta(days=1 if next_day else 0)
    zone = current_app.config["BACKOFFICE_ZONE"]
    return int(datetime.combine(day, datetime.min.time(), tzinfo=zone).timestamp() * 1000)


def promo_add(c: Context) -> Done:
    min_minor, bonus_minor = parse_minor(c.form.get("min", ""), "min"), parse_minor(c.form.get("bonus", ""), "bonus")
    pid = c.text("promo_id", False) or None
    starts_ms, ends_ms = _day_ms(c, "start"), _day_ms(c, "end", next_day=True)
    if ends_ms and ends_ms <= starts_ms:
        raise InvalidRequest("end", "must not be before the start")
    result = c.ledger.add_promotion(min_minor, bonus_minor, promo_id=pid, txn_id=c.txn("promo_add"),
                                    starts_ms=starts_ms, ends_ms=ends_ms, **c.ids())
    pid = pid or promo_id_of(min_minor, bonus_minor)
    words = f"top up {format_minor(min_minor)}, get {format_minor(bonus_minor)}"
    if starts_ms or ends_ms:
        words += f" ({c.text('start', False) or '…'} to {c.text('end', False) or '…'})"
    _applied(result, f"promotion {pid}")
    return Done(f"promotion {pid}: {words}: done; txn {result.txn_id}", pid, words, (result.txn_id,))


def promo_remove(c: Context) -> Done:
    pid = c.text("promo_id")
    result = c.ledger.remove_promotion(pid, txn_id=c.txn("promo_remove"), **c.ids())
    _applied(result, f"remove promotion {pid}")
    return Done(f"remove promotion {pid}: done; txn {result.txn_id}", pid, "removed", (result.txn_id,))


# ---------------------------------------------------------------- cashiers

def _cashiers(c: Context):
    from core.cashiers import CashierRegistry
    return CashierRegistry(c.ledger.client)


def _pin(c: Context) -> str:
    from core.cashiers import check_pin
    pin = check_pin(c.form.get("pin", ""))
    if c.form.get("pin2", "") != pin:
        raise InvalidRequest("pin", "the two PINs differ")
    return pin


def cashier_add(c: Context) -> Done:
    cid, name = c.text("cashier_id"), c.text("name")
    sup, top = c.form.get("supervisor") == "on", c.form.get("can_top_up") == "on"
    from core.validation import check_id
    check_id(cid, "cashier_id")
    registry = _cashiers(c)
    pin = _pin(c)
    registry.add(cid, name, pin, supervisor=sup, can_top_up=top)
    rights = ", ".join(r for r, on in (("supervisor", sup), ("can-top-up", top)) if on) or "no rights"
    return Done(f"cashier added: {cid} {name} ({rights})", cid, f"added, name {name}, {rights}")


def _require_cashier(c: Context, cid: str):
    cashier = _cashiers(c).get(cid)
    if cashier is None:
        raise InvalidRequest("cashier_id", f"no cashier {cid!r}")
    return cashier


def cashier_reset_pin(c: Context) -> Done:
    cid = c.text("cashier_id")
    _require_cashier(c, cid)
    _cashiers(c).reset_pin(cid, _pin(c))
    return Done(f"PIN reset (and any lock lifted): {cid}", cid, "PIN reset, lock lifted")


def cashier_rights(c: Context) -> Done:
    cid = c.text("cashier_id")
    _require_cashier(c, cid)
    sup, top = c.form.get("supervisor") == "on", c.form.get("can_top_up") == "on"
    _cashiers(c).set_rights(cid, supervisor=sup, can_top_up=top)
    words = f"supervisor {'yes' if sup else 'no'}, can top up {'yes' if top else 'no'}"
    return Done(f"cashier {cid}: {words}", cid, words)


def _disable_preview(c: Context) -> str:
    cashier = _require_cashier(c, c.text("cashier_id"))
    return f"disable cashier {cashier.cashier_id} ({cashier.name}): they can no longer sign in at any till"


def cashier_disable(c: Context) -> Done:
    cid = c.text("cashier_id")
    _require_cashier(c, cid)
    _cashiers(c).set_disabled(cid, True)
    return Done(f"cashier disabled: {cid}", cid, "disabled")


def cashier_enable(c: Context) -> Done:
    cid = c.text("cashier_id")
    _require_cashier(c, cid)
    _cashiers(c).set_disabled(cid, False)
    return Done(f"cashier enabled: {cid}", cid, "enabled")


# ---------------------------------------------------------------- settings

def settings_set(c: Context) -> Done:
    name, value = c.text("name"), c.text("value")
    led, ids = c.ledger, c.ids()
    if name == "spend_order":
        if value not in SPEND_ORDERS:
            raise InvalidRequest("spend_order", f"must be one of {', '.join(SPEND_ORDERS)}")
        result, words = led.set_spend_order(value, txn_id=c.txn("spend_order"), **ids), f"spend order {value}"
    elif name == "balance_cap":
        cap = None if value.lower() == "off" else parse_minor(value, "balance_cap")
        result = led.set_balance_cap(cap, txn_id=c.txn("balance_cap"), **ids)
        words = f"balance cap {'off' if cap is None else format_minor(cap)}"
    elif name == "member_pin_above":
        above = parse_minor(value, "member_pin_above", allow_zero=True)
        result = led.set_member_pin_threshold(above, txn_id=c.txn("pin_above"), **ids)
        words = f"member PIN needed above {format_minor(above)}"
    else:
        raise InvalidRequest("name", "one of spend_order, balance_cap, member_pin_above")
    _applied(result, words)
    return Done(f"{words}: done; txn {result.txn_id}", name, words, (result.txn_id,))


# ---------------------------------------------------------------- terminals

def _terminals(c: Context):
    from core.terminals import TerminalRegistry
    return TerminalRegistry(c.ledger.client)


def terminal_enroll(c: Context) -> Done:
    tid = c.text("terminal_id")
    token = _terminals(c).enroll(tid)
    return Done(f"terminal {tid} enrolled. Its token (shown once; put it in the till's settings):", tid,
                "enrolled (token issued; any earlier token replaced)", secret=token)


def _revoke_preview(c: Context) -> str:
    tid = c.text("terminal_id")
    if _terminals(c).get(tid) is None:
        raise InvalidRequest("terminal_id", f"no terminal {tid!r}")
    return f"revoke terminal {tid}: every gateway refuses it within 5 s"


def terminal_revoke(c: Context) -> Done:
    tid = c.text("terminal_id")
    _terminals(c).revoke(tid)
    return Done(f"terminal {tid} revoked: every gateway refuses it within 5 s", tid, "revoked")


# ---------------------------------------------------------------- discrepancies and logins

def discrepancy_resolve(c: Context) -> Done:
    raw = c.text("id")
    if not raw.isdigit():
        raise InvalidRequest("id", f"{raw!r} is not a discrepancy number")
    out = book.resolve_discrepancy(c.engine, int(raw), c.form.get("note", ""), g.user)
    return Done(f"discrepancy #{out['id']} resolved by {out['resolved_by']}: {out['note']}", f"#{out['id']}",
                f"resolved: {out['note'][:300]}")


def user_add(c: Context) -> Done:
    name, role = c.text("username"), c.text("role")
    created = auth.set_password(c.engine, name, c.form.get("password", ""), role, password_hint="")
    verb = "created" if created else "password changed"
    return Done(f"back-office user {name} ({role}) {verb}", name, f"{verb}, role {role}")


def user_role(c: Context) -> Done:
    name, role = c.text("username"), c.text("role")
    if name == g.user and role != "owner":
        raise InvalidRequest("role", "an owner cannot take their own owner role away (ask another owner)")
    auth.set_role(c.engine, name, role)
    return Done(f"back-office user {name}: role {role}", name, f"role {role}")


ACTIONS: dict[str, Action] = {
    "members/open": Action("members", member_open),
    "members/edit": Action("members", member_edit),
    "members/close": Action("members", member_close, True, _close_preview, ("account",)),
    "cards/issue": Action("cards", card_issue),
    "cards/block": Action("cards", card_block, True, _card_preview, ("card_no", "reason")),
    "cards/replace": Action("cards", card_replace, True, _card_preview, ("card_no", "new_card_no", "reason")),
    "promotions/add": Action("promotions", promo_add),
    "promotions/remove": Action("promotions", promo_remove, True,
                                lambda c: f"remove promotion {c.text('promo_id')}", ("promo_id",)),
    "cashiers/add": Action("cashiers", cashier_add),
    "cashiers/reset_pin": Action("cashiers", cashier_reset_pin),
    "cashiers/rights": Action("cashiers", cashier_rights),
    "cashiers/disable": Action("cashiers", cashier_disable, True, _disable_preview, ("cashier_id",)),
    "cashiers/enable": Action("cashiers", cashier_enable),
    "settings/set": Action("settings", settings_set),
    "terminals/enroll": Action("terminals", terminal_enroll),
    "terminals/revoke": Action("terminals", terminal_revoke, True, _revoke_preview, ("terminal_id",)),
    "discrepancies/resolve": Action("discrepancies", discrepancy_resolve),
    "users/add": Action("users", user_add),
    "users/role": Action("users", user_role),
}


# ---------------------------------------------------------------- pages

def new_txn_hex() -> str:
    return secrets.token_hex(16)


def forbidden(area: str):
    reason = (f"your role ({g.role}) may not change {area}: "
              f"{', '.join(sorted(auth.ROLE_RIGHTS.get(g.role, ()))) or 'look-ups and reports only'}")
    return render_template("error.html", message=f"403 forbidden: {reason}", forbidden=True), 403


def area_data(area: str, engine) -> dict:
    """What an area's page lists beside its forms (read from Redis or the book)."""
    led = ledger_of(current_app)
    if area == "promotions":
        zone = current_app.config["BACKOFFICE_ZONE"]
        day = lambda ms, back=0: (datetime.fromtimestamp(ms / 1000, zone).date() - timedelta(days=back)).isoformat()
        return dict(promotions=[(p, day(p.starts_ms) if p.starts_ms else "", day(p.ends_ms, 1) if p.ends_ms else "",
                                 p.in_force(int(datetime.now().timestamp() * 1000))) for p in led.promotions()])
    if area == "cashiers":
        from core.cashiers import CashierRegistry
        return dict(cashiers=CashierRegistry(led.client).list())
    if area == "settings":
        return dict(settings=led.shop_settings(), spend_orders=SPEND_ORDERS)
    if area == "terminals":
        from core.terminals import TerminalRegistry
        return dict(terminals=TerminalRegistry(led.client).list())
    if area == "discrepancies":
        return dict(discrepancies=book.discrepancies(engine, limit=200))
    if area == "users":
        return dict(users=auth.users(engine), roles=auth.ROLES)
    if area == "cards" and request.args.get("account"):
        return dict(cards=led.cards(request.args["account"]))
    return {}


def render_area(area: str, engine, *, error: str | None = None, action: str | None = None,
                status: int = 200, secret: str = ""):
    try:
        data = area_data(area, engine)
    except LedgerError as exc:
        data, error = {}, error or _words(exc)
    return render_template("manage.html", area=area, areas=TABS, data=data, error=error, failed=action,
                           txn=new_txn_hex(), reasons=CARD_BLOCK_REASONS, secret=secret,
                           may=lambda a: auth.may(g.role, a), form=request.form if error else {}), status


def _words(exc: Exception) -> str:
    if isinstance(exc, LedgerUnavailable) and not isinstance(exc, LedgerNotInitialized):
        return f"Redis did not answer: the outcome is unknown; send the form again (it replays): {exc}"
    return str(exc)


def register(app, engine) -> None:
    """The management and audit routes on `app` (a blueprint per app: tests make many)."""
    bp = Blueprint("manage", __name__)

    @bp.get("/manage/")
    @bp.get("/manage/<area>")
    def area_page(area="members"):
        if area not in AREAS:
            abort(404)
        if not auth.may(g.role, area) and area not in ("members", "cards"):
            return forbidden(area)
        return render_area(area, engine)

    @bp.post("/manage/<area>/<name>")
    def act(area, name):
        action = ACTIONS.get(f"{area}/{name}")
        if action is None:
            abort(404)
        if not auth.may(g.role, action.area):
            return forbidden(action.area)
        match = TXN_RE.fullmatch(request.form.get("txn", ""))
        if match is None:
            return render_area(area, engine, error="txn: the form is incomplete (reload the page)", action=name,
                               status=400)
        c = Context(engine, request.form, match.group(2))
        try:
            if action.destructive and request.form.get("confirm") != "yes":
                return render_template("confirm.html", area=area, name=name, preview=action.preview(c),
                                       carry={k: request.form.get(k, "") for k in action.fields},
                                       txn=request.form["txn"])
            done = action.run(c)
        except (InvalidRequest, book.ReportError) as exc:
            return render_area(area, engine, error=str(exc), action=name, status=400)
        except (Declined, TxnConflict) as exc:
            return render_area(area, engine, error=str(exc), action=name, status=409)
        except LedgerUnavailable as exc:
            return render_area(area, engine, error=_words(exc), action=name, status=503)
        try:
            audit(c, f"{area}.{name}", done)
        except LedgerError as exc:
            # done, but not yet in the audit trail: the same form again replays the change
            # (or, for a registry change, says it exists) and journals the record
            return render_area(area, engine, error=f"{done.message}; but the audit record was not written "
                               f"({_words(exc)}): send the form again", action=name, status=503)
        if done.secret:
            return render_template("secret.html", message=done.message, secret=done.secret, area=area)
        flash(done.message)
        return redirect(url_for("manage.area_page", area=area))

    @bp.route("/account/password", methods=["GET", "POST"])
    def own_password():
        error = None
        if request.method == "POST":
            if not auth.check_login(engine, g.user, request.form.get("old", "")):
                error = "old_password: wrong password"
            elif request.form.get("new", "") != request.form.get("new2", ""):
                error = "password: the two passwords differ"
            else:
                try:
                    auth.set_password(engine, g.user, request.form.get("new", ""), password_hint="")
                except book.ReportError as exc:
                    error = str(exc)
                else:
                    match = TXN_RE.fullmatch(request.form.get("txn", "")) or TXN_RE.fullmatch(
                        f"bo-password-{new_txn_hex()}")
                    note = ""
                    try:
                        audit(Context(engine, request.form, match.group(2)), "users.password",
                              Done("", g.user, "changed their own password"))
                    except LedgerError as exc:       # changed all the same; say the trail missed it
                        note = f" (the audit record was not written: {_words(exc)})"
                    # the change ended every session of this login, this one too
                    flash("password changed: sign in with the new password" + note)
                    return redirect(url_for("login"))
        return render_template("password.html", error=error, txn=new_txn_hex()), 400 if error else 200

    @bp.get("/audit")
    def audit_page():
        from ..audit import audit_trail
        from .app import _bounds
        who = request.args.get("user", "").strip() or None
        try:
            start, end = _bounds(request.args.get("from"), request.args.get("to"), app.config["BACKOFFICE_ZONE"])
        except book.ReportError as exc:
            return render_template("error.html", message=str(exc)), 400
        rows = audit_trail(engine, username=who, start=start, end=end)
        return render_template("audit.html", rows=rows, who=who or "", date_from=request.args.get("from", ""),
                               date_to=request.args.get("to", ""))

    from . import imports
    app.extensions["backoffice_engine"] = engine
    imports.register(app, bp)
    app.register_blueprint(bp)


def audit(c: Context, action: str, done: Done) -> None:
    """Journal the action's audit record; its nonce is the form's txn hex, so the same
    form sent again journals the same record (a replay), never a second one."""
    record = AuditRecord(who=g.user, action=action, target=done.target[:500], summary=done.summary[:500],
                         address=(request.remote_addr or "?")[:64], refs=done.refs, nonce=c.txn_hex)
    record_action(c.ledger, record)
