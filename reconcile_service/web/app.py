"""The back-office Flask application: `create_app(engine, zone, redis_url=...)`. Every page
but /login needs a session. The pages read the book; the management forms (web/manage.py,
issue 29) change the shop through the ledger's own operations, by role (web/auth.py
ROLE_RIGHTS), each journaled in the audit trail. Every POST carries the session's CSRF
token, checked here before any route runs (a missing or wrong one: 403, nothing done). Sign-ins
are throttled (web/throttle.py); after a sign-in the browser goes back only to a path of
this site; a query or path carrying control characters is refused with a 400 naming it."""
from __future__ import annotations

import re
import secrets
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from flask import Flask, Response, abort, g, redirect, render_template, request, session, url_for
from flask.sessions import SecureCookieSessionInterface
from markupsafe import Markup, escape
from zoneinfo import ZoneInfo

from ..reports import book, render
from ..reports.commands import build
from . import auth, manage, views
from .throttle import LoginThrottle

TEMPLATES = Path(__file__).with_name("templates")
STATEMENT_PAGE_ROWS = 1000
REPORT_KINDS = ("liability", "statement", "shifts", "discrepancies")
# where a sign-in may send the browser on: a path of this site. Browsers drop tabs and
# newlines and read "\\" as "/", so "/\t/evil.example" or "/\\evil.example" would leave it.
_SAFE_NEXT = re.compile(r"/(?![/\\])[A-Za-z0-9\-._~%!$&'()*+,;=:@/?]*")
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
MAX_ARG_LEN = 200


def safe_next(target: str | None) -> str:
    """`target` if it is a path of this site, else "/"."""
    return target if target and _SAFE_NEXT.fullmatch(target) else "/"


def create_app(engine, zone: ZoneInfo, *, secret_key: str | None = None,
               throttle: LoginThrottle | None = None, redis_url: str | None = None) -> Flask:
    """`redis_url`: the ledger's Redis (the reconcile service's), for the management
    forms; without it they answer that the back office has no ledger URL."""
    app = Flask("reconcile_service.web", template_folder=str(TEMPLATES))
    app.config.update(LEDGER_REDIS_URL=redis_url, BACKOFFICE_ZONE=zone)
    throttle = throttle or LoginThrottle()
    # the signing key comes from the database on the first request (the daemon may start
    # before the database is reachable)
    app.session_interface = _LazyKeySessions(engine)
    app.config.update(SECRET_KEY=secret_key, SESSION_COOKIE_HTTPONLY=True,
                      SESSION_COOKIE_SAMESITE="Strict", SESSION_COOKIE_NAME="backoffice",
                      # the server's session row expires at sign-in + 8 h; the cookie is not renewed
                      PERMANENT_SESSION_LIFETIME=auth.SESSION_LIFETIME, SESSION_REFRESH_EACH_REQUEST=False)

    def lang() -> str:
        chosen = request.args.get("lang") or session.get("lang") or "en"
        return chosen if chosen in render.LANGS else "en"

    @app.context_processor
    def helpers():
        L = lang()
        return dict(t=lambda key: render.label(L, key), yuan=render.yuan, lang=L,
                    local=lambda ts: render.local(ts, zone), kind_label=lambda k: render.kind_label(L, k),
                    zone=zone.key, user=g.get("user"), csrf=session.get("csrf", ""), role=g.get("role"),
                    may=lambda area: auth.may(g.get("role"), area), tr=lambda en, zh: en if L == "en" else zh)

    @app.before_request
    def refuse_control_characters():
        """A NUL or other control character, or an over-long value, in the path or a query
        argument is bad input, answered before any of it reaches the database."""
        for name, value in [("path", request.path), *request.args.items(multi=True)]:
            if _CONTROL_CHARS.search(value) or len(value) > MAX_ARG_LEN:
                reason = (f"longer than {MAX_ARG_LEN} characters" if len(value) > MAX_ARG_LEN
                          else "contains a control character")
                return render_template("error.html", message=f"{name}: {reason}"), 400
        return None

    @app.before_request
    def require_login():
        found = auth.session_login(engine, session.get("sid")) if session.get("sid") else None
        g.user, g.role = found if found else (None, None)
        if request.endpoint in ("login", "static") or g.user:
            if "lang" in request.args and request.args["lang"] in render.LANGS:
                session["lang"] = request.args["lang"]
            return None
        if session.get("sid"):        # signed out elsewhere, expired, password changed, login gone
            session.clear()
        return redirect(url_for("login", next=request.full_path if request.method == "GET" else "/"))

    @app.before_request
    def check_csrf():
        """Every POST but the sign-in (which checks its own) carries the session's token.
        Our own check rather than Flask-WTF: the session already keeps a per-session token
        (made at sign-in), the forms are plain HTML rather than WTForms, and one check
        here, before any route, also covers every POST route added later."""
        if request.method != "POST" or request.endpoint == "login" or not g.get("user"):
            return None
        if not secrets.compare_digest(request.form.get("csrf", ""), session.get("csrf") or "-"):
            return render_template("error.html", message="csrf: the form expired or did not come from this "
                                   "site (reload the page and send it again): nothing was changed"), 403
        return None

    @app.after_request
    def no_store(resp):
        resp.headers["Cache-Control"] = "no-store"
        resp.headers["X-Frame-Options"] = "DENY"
        resp.headers["X-Content-Type-Options"] = "nosniff"
        return resp

    @app.route("/login", methods=["GET", "POST"])
    def login():
        error = None
        if request.method == "POST":
            username, address = request.form.get("username", ""), request.remote_addr or "?"
            status = 401
            if not secrets.compare_digest(request.form.get("csrf", ""), session.get("csrf", "-")):
                error = "form expired, try again"
            elif (wait_s := throttle.wait_s(username, address)) > 0:
                # locked: not even the right password is checked, so guessing gains nothing
                error = f"too many wrong passwords: sign-in locked, try again in {int(wait_s) + 1} s"
                status = 429
            elif auth.check_login(engine, username, request.form.get("password", "")):
                throttle.succeeded(username, address)
                auth.end_session(engine, session.get("sid"))
                session.clear()
                session.permanent = True
                session.update(user=username, sid=auth.start_session(engine, username, address),
                               csrf=secrets.token_urlsafe(16))
                return redirect(safe_next(request.args.get("next")))
            else:
                throttle.failed(username, address)
                error = "wrong user name or password"
        session["csrf"] = session.get("csrf") or secrets.token_urlsafe(16)
        resp = render_template("login.html", error=error, csrf=session["csrf"])
        return (resp, status) if error else resp

    @app.post("/logout")
    def logout():
        if secrets.compare_digest(request.form.get("csrf", ""), session.get("csrf", "-")):
            auth.end_session(engine, session.get("sid"))       # every copy of the cookie ends here
            session.clear()
        return redirect(url_for("login"))

    @app.get("/")
    def index():
        today = datetime.now(zone).date()
        rep = book.liability(engine, *book.day_bounds(today, today, zone))
        header, rows, footer = render.liability_table(rep, lang(), zone)
        recent = book.discrepancies(engine, limit=10)
        return render_template("index.html", today=today, header=header, rows=rows, footer=footer,
                               balanced=rep.balanced, discrepancies=recent)

    # the report functions' memo (grouped_series, breakdown_series, top_members): sums of UTC
    # days, kept while their daily totals stay the same; one per app, so per database
    memo: dict = {}

    def warm() -> None:
        """Fill the memo for today's dashboard and every chart's first view (by day), so the
        first person to open them does not wait while a month of entries is read."""
        today = datetime.now(zone).date()
        views.dashboard(engine, zone, today, memo)
        for name in views.CHARTS:
            views.chart_page(name, engine, zone, "en", "day", today, memo)

    app.extensions["backoffice_warm"] = warm

    @app.get("/dashboard")
    def dashboard():
        today = datetime.now(zone).date()
        return render_template("dashboard.html", today=today, money=render.money,
                               **views.dashboard(engine, zone, today, memo))

    @app.get("/charts/")
    @app.get("/charts/<name>")
    def chart(name="sales"):
        granularity = request.args.get("by", "day")
        if name not in views.CHARTS:
            abort(404)
        try:
            if granularity not in views.GRANULARITIES:
                raise book.ReportError("by", f"one of {', '.join(views.GRANULARITIES)}")
            last = (book.parse_date(request.args["to"], "to") if request.args.get("to")
                    else datetime.now(zone).date())
            page = views.chart_page(name, engine, zone, lang(), granularity, last, memo)
        except book.ReportError as exc:
            return render_template("error.html", message=str(exc)), 400
        return render_template("chart.html", page=page, charts=views.CHARTS, granularities=views.GRANULARITIES,
                               money=render.money, to=request.args.get("to", ""))

    @app.get("/search")
    def search():
        q = request.args.get("q", "").strip()
        found = book.search_accounts(engine, q) if q else []
        return render_template("search.html", q=q, found=found)

    @app.get("/statement/<account>")
    def statement(account):
        try:
            start, end = _bounds(request.args.get("from"), request.args.get("to"), zone)
            st = book.statement(engine, account, start, end, limit=STATEMENT_PAGE_ROWS)
        except book.ReportError as exc:
            return render_template("error.html", message=str(exc)), 404 if exc.field == "account" else 400
        header, rows, footer = render.statement_table(st, lang(), zone)
        return render_template("statement.html", st=st, header=header, body=_rows_html(rows, NUMERIC_STATEMENT_COLS),
                               footer=footer,
                               limit=STATEMENT_PAGE_ROWS, date_from=request.args.get("from", ""),
                               date_to=request.args.get("to", ""), quoted=quote(account, safe=""))

    @app.get("/download/<kind>.<fmt>")
    def download(kind, fmt):
        if kind not in REPORT_KINDS or fmt not in ("csv", "pdf"):
            abort(404)
        args = request.args
        today = datetime.now(zone).date().isoformat()
        try:
            payload, _ = build(kind, engine, zone, lang(), fmt,
                               date=args.get("date") or (today if kind in ("liability", "shifts") and not
                                                         args.get("from") else None),
                               date_from=args.get("from"), date_to=args.get("to"), account=args.get("account"))
        except book.ReportError as exc:
            return render_template("error.html", message=str(exc)), 400
        name = f"{kind}-{args.get('account') or args.get('date') or args.get('from') or today}.{fmt}"
        mime = "text/csv; charset=utf-8" if fmt == "csv" else "application/pdf"
        return Response(payload, mimetype=mime,
                        headers={"Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}"})

    manage.register(app, engine)
    return app


NUMERIC_STATEMENT_COLS = frozenset(range(4, 8))


def _rows_html(rows: list[list[str]], numeric: frozenset[int]) -> Markup:
    """Table rows as HTML, every cell escaped: a 1,000-entry statement built here costs a
    few milliseconds where a Jinja loop over its 10,000 cells cost a few hundred."""
    td = ('<td class="num">', "<td>")
    return Markup("".join("<tr>" + "".join(f"{td[i not in numeric]}{escape(c)}</td>" for i, c in enumerate(r))
                          + "</tr>\n" for r in rows))


class _LazyKeySessions(SecureCookieSessionInterface):
    """Flask's signed-cookie sessions (itsdangerous), the key read from the database
    when the first request needs it."""

    def __init__(self, engine):
        self.engine = engine

    def get_cookie_secure(self, app) -> bool:
        # Secure whenever the page is reached over TLS (a TLS proxy in front says so)
        return bool(app.config["SESSION_COOKIE_SECURE"] or request.is_secure)

    def get_signing_serializer(self, app):
        if not app.secret_key:
            app.secret_key = auth.session_key(self.engine)
        return super().get_signing_serializer(app)


def _bounds(date_from: str | None, date_to: str | None, zone) -> tuple:
    start = end = None
    if date_from:
        d = book.parse_date(date_from, "from")
        start = book.day_bounds(d, d, zone)[0]
    if date_to:
        d = book.parse_date(date_to, "to")
        end = book.day_bounds(d, d, zone)[1]
    return start, end
