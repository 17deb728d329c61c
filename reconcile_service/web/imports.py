"""The import page (issue 29 item 6 in the browser): moving a shop's members in from its
old system, through the same code as `cashierctl member import` (core/member_import.py).

Four steps, each a page: upload a CSV or .xlsx (kept on the server under a random token,
never under the browser's file name), map its columns to the fields (detected from
common Chinese and English headers, changeable), the dry run (what would be imported,
the refused rows with their line numbers, field and reason, the totals; nothing is
written), then apply: every member opened under `imp:<account>` and its card issued
under `impc:<account>`, so a second run (or a run after a crash part way) opens nobody
twice. The reconciliation sheet (counts and totals of the file = imported + refused) is
written for every dry run and apply and can be downloaded; the uploaded file is deleted
once imported, and whatever is older than a day at the next upload. The apply is one audit record
(who, from where, the file, the counts). Owners only (auth.ROLE_RIGHTS "import").
"""
from __future__ import annotations

import os
import re
import secrets
import tempfile
import time

from flask import Response, g, render_template, request

from core import InvalidRequest, LedgerError
from core import member_import as mi
from core.money import format_minor

from . import auth
from .manage import Context, Done, _words, audit, forbidden, ledger_of

_TOKEN_RE = re.compile(r"[0-9a-f]{32}")
MAX_UPLOAD_BYTES = 64 * 1024 * 1024
KEEP_UPLOADS_S = 24 * 3600          # members' names and phones: not kept on the server longer


def _tidy(folder: str, keep_s: float = KEEP_UPLOADS_S) -> None:
    """Remove uploads and sheets older than `keep_s` (the folder is the page's own, 0700)."""
    cutoff = time.time() - keep_s
    for entry in os.scandir(folder):
        try:
            if entry.is_file() and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
        except OSError:
            pass


def _folder(app) -> str:
    folder = app.extensions.get("backoffice_imports")
    if folder is None:
        folder = app.extensions["backoffice_imports"] = tempfile.mkdtemp(prefix="backoffice-import-")
    return folder


def _upload_path(app, token: str, *, report: bool = False) -> str:
    """The upload of `token` (or, `report`, its reconciliation sheet, which outlives it)."""
    if not _TOKEN_RE.fullmatch(token or ""):
        raise InvalidRequest("file", "the uploaded file is gone: upload it again")
    folder = _folder(app)
    for ext in (".csv", ".xlsx"):
        path = os.path.join(folder, token + ext)
        if os.path.isfile(path + ".report.csv" if report else path):
            return path
    raise InvalidRequest("file", "the uploaded file is gone: upload it again")


def _mapping_from(form) -> dict[str, str]:
    return {f: form[f"map_{f}"] for f in mi.FIELDS if form.get(f"map_{f}")}


def register(app, bp) -> None:
    app.config.setdefault("MAX_CONTENT_LENGTH", MAX_UPLOAD_BYTES)

    def page(step: str, status: int = 200, **kw):
        from .manage import TABS
        return render_template("import.html", step=step, fields=mi.FIELDS, headers_of=mi.TEMPLATE_HEADERS,
                               money=format_minor, areas=TABS, area="import", **kw), status

    @bp.get("/manage/import")
    def import_page():
        if not auth.may(g.role, "import"):
            return forbidden("import")
        return page("upload")

    @bp.get("/manage/import/template.<ext>")
    def import_template(ext):
        if ext not in ("csv", "xlsx"):
            return page("upload", 404, error="file: the template is .csv or .xlsx")
        path = mi.write_template(os.path.join(_folder(app), f"template-{secrets.token_hex(8)}.{ext}"))
        with open(path, "rb") as fh:
            data = fh.read()
        os.unlink(path)
        mime = "text/csv; charset=utf-8" if ext == "csv" else \
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
        return Response(data, mimetype=mime,
                        headers={"Content-Disposition": f"attachment; filename=member-import-template.{ext}"})

    @bp.post("/manage/import/<step>")
    def import_step(step):
        if not auth.may(g.role, "import"):
            return forbidden("import")
        try:
            if step == "upload":
                upload = request.files.get("file")
                name = (upload.filename or "") if upload else ""
                ext = os.path.splitext(name)[1].lower()
                if not upload or not name:
                    raise InvalidRequest("file", "choose the old system's export (.csv or .xlsx)")
                if ext not in (".csv", ".xlsx"):
                    raise InvalidRequest("file", f"{name}: a .csv or .xlsx file (an old .xls: save it as "
                                                 ".xlsx or CSV)")
                token = secrets.token_hex(16)
                _tidy(_folder(app))
                path = os.path.join(_folder(app), token + ext)
                upload.save(path)
                table = mi.read_table(path)
                try:
                    detected = {f: table.headers[i] for f, i in mi.resolve_mapping(table.headers).items()}
                except InvalidRequest:
                    detected = {}
                return page("map", token=token, name=name[:200], headers=table.headers, rows=len(table.rows),
                            mapping=detected)
            token, name = request.form.get("token", ""), request.form.get("name", "")[:200]
            path = _upload_path(app, token)
            table = mi.read_table(path)
            mapping = _mapping_from(request.form)
            ledger = ledger_of(app)
            plan = mi.plan_import(table, mapping, ledger)
            plan.source = name
            if step == "plan":
                mi.write_report(path + ".report.csv", plan, None)
                return page("plan", token=token, name=name, plan=plan, mapping=plan.mapping,
                            totals=plan.totals(), already=plan.totals(m for m in plan.members
                                                                      if m.account_id in plan.already))
            if step != "apply":
                return page("upload", 404, error="step: upload, plan or apply")
            outcome = mi.apply_import(plan, ledger, helper_process=False)
        except (InvalidRequest, LedgerError) as exc:
            return page("upload", 400 if isinstance(exc, InvalidRequest) else 503, error=_words(exc))
        mi.write_report(path + ".report.csv", plan, outcome)
        os.unlink(path)           # imported: the file is not needed again (a re-run uploads it anew)
        count, principal, bonus = plan.totals(outcome.imported)
        summary = (f"{name}: {len(outcome.created)} opened now, {len(outcome.replayed)} imported earlier, "
                   f"{len(plan.refused_lines)} rows refused, {len(outcome.declined)} declined; imported "
                   f"{count} members, principal {format_minor(principal)}, bonus {format_minor(bonus)}")
        c = Context(app.extensions["backoffice_engine"], request.form, token)
        try:
            audit(c, "import.apply", Done(summary, name or "import", summary))
        except LedgerError as exc:
            return page("upload", 503, error=f"{summary}; but the audit record was not written ({_words(exc)}): "
                                             "apply again (nothing is imported twice)")
        return page("done", token=token, name=name, plan=plan, outcome=outcome, summary=summary,
                    totals=(count, principal, bonus), balanced=(count, principal, bonus) == plan.totals())

    @bp.get("/manage/import/report/<token>.csv")
    def import_report(token):
        if not auth.may(g.role, "import"):
            return forbidden("import")
        try:
            path = _upload_path(app, token, report=True) + ".report.csv"
            with open(path, "rb") as fh:
                data = fh.read()
        except (InvalidRequest, OSError):
            return page("upload", 404, error="report: none for this upload (run the dry run first)")
        return Response(data, mimetype="text/csv; charset=utf-8",
                        headers={"Content-Disposition": "attachment; filename=import-report.csv"})
