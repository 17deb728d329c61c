"""The back office's management routes (issue 29 items 1-3) served by the real Flask app
over a real Redis ledger and a real PostgreSQL book: roles decided on the server (a clerk
is refused every write with a 403 naming why; a manager is refused the owner's areas),
CSRF (a POST without or with a wrong token changes nothing), the same error words as the
CLI, idempotent forms (the same form sent twice does it once), and the audit trail: each
action is an `audit` entry in the hash-chained book, verify is clean, and an edited,
removed or forged audit record (or an edited chained row) is reported."""
from __future__ import annotations

import re
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select, text

from core.audit import AuditRecord as CoreRecord, record_action, txn_id_of
from reconcile_service import db as dbmod
from reconcile_service.models import AuditRecord, LedgerEntry
from reconcile_service.verify import verify
from reconcile_service.web.app import create_app
from reconcile_service.web.auth import set_password

PASSWORD = "correct horse battery"
ROLES = {"boss": "owner", "mgr": "manager", "clerk1": "clerk"}


@pytest.fixture
def engine(pg_url):
    eng = dbmod.make_engine(pg_url)
    dbmod.migrate(eng)
    for name, role in ROLES.items():
        set_password(eng, name, PASSWORD, role)
    yield eng
    eng.dispose()


@pytest.fixture
def app(engine, redis_url, ledger):
    ledger.init()
    return create_app(engine, ZoneInfo("Asia/Shanghai"), redis_url=redis_url)


def _csrf(page: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def _txn(page: str, action: str) -> str:
    return re.search(rf'name="txn" value="(bo-{action}-[0-9a-f]{{32}})"', page).group(1)


class Browser:
    """A signed-in test client: `post(area, action, **form)` sends a form as the page
    draws it (its CSRF token and server-made txn id)."""

    def __init__(self, app, user: str):
        self.c = app.test_client()
        page = self.c.get("/login").get_data(as_text=True)
        resp = self.c.post("/login", data={"csrf": _csrf(page), "username": user, "password": PASSWORD},
                           environ_base={"REMOTE_ADDR": "10.0.0.9"})
        assert resp.status_code == 302, resp.get_data(as_text=True)

    def page(self, area: str) -> str:
        return self.c.get(f"/manage/{area}").get_data(as_text=True)

    def post(self, area: str, action: str, *, csrf: str | None = None, txn: str | None = None, **form):
        page = self.c.get("/manage/members").get_data(as_text=True)
        data = {"csrf": _csrf(page) if csrf is None else csrf, "txn": txn or f"bo-{action}-{'ab' * 16}", **form}
        return self.c.post(f"/manage/{area}/{action}", data=data, environ_base={"REMOTE_ADDR": "10.0.0.9"})


def _records(engine):
    with engine.connect() as conn:
        return conn.execute(select(AuditRecord).order_by(AuditRecord.occurred_at)).all()


def _drain_and_verify(ledger, engine):
    report = verify(ledger, engine)
    return report


def test_clerk_is_refused_every_write_and_sees_why(app, ledger):
    clerk = Browser(app, "clerk1")
    resp = clerk.post("members", "open", account="M-1", holder="王芳")
    assert resp.status_code == 403
    body = resp.get_data(as_text=True)
    assert "your role (clerk) may not change members" in body
    with pytest.raises(Exception):
        ledger.account("M-1")
    # the page hides the forms a clerk may not use
    assert 'id="form-members-open"' not in clerk.page("members")
    assert clerk.c.get("/manage/cashiers").status_code == 403


def test_manager_may_manage_members_but_not_the_owners_areas(app, ledger, engine):
    mgr = Browser(app, "mgr")
    assert mgr.post("members", "open", account="M-2", holder="李雷", phone="13800138002").status_code == 302
    assert ledger.account("M-2").holder_name == "李雷"
    for area, action, form in (("settings", "set", dict(name="spend_order", value="bonus_first")),
                                ("users", "add", dict(username="x", password=PASSWORD, role="owner")),
                                ("terminals", "enroll", dict(terminal_id="T9"))):
        resp = mgr.post(area, action, **form)
        assert resp.status_code == 403, (area, resp.status_code)
        assert "your role (manager) may not change" in resp.get_data(as_text=True)
    assert ledger.shop_settings().spend_order == "principal_first"
    assert "x" not in [u for u, _ in __import__("reconcile_service.web.auth", fromlist=["users"]).users(engine)]


@pytest.mark.parametrize("token", ["", "not-the-token"])
def test_a_post_without_the_csrf_token_changes_nothing(app, ledger, engine, token):
    boss = Browser(app, "boss")
    resp = boss.post("members", "open", csrf=token, account="M-3")
    assert resp.status_code == 403
    assert "csrf:" in resp.get_data(as_text=True)
    with pytest.raises(Exception):
        ledger.account("M-3")
    verify(ledger, engine)
    assert _records(engine) == []


def test_bad_input_has_the_clis_words_and_changes_nothing(app, ledger, engine):
    boss = Browser(app, "boss")
    resp = boss.post("members", "open", account="bad id!")
    assert resp.status_code == 400
    body = resp.get_data(as_text=True)
    assert 'id="error-members-open"' in body and "account_id: only A-Z a-z 0-9 . _ : - are allowed" in body
    resp = boss.post("promotions", "add", min="100.001", bonus="20")
    assert resp.status_code == 400 and "min: has more than two decimals" in resp.get_data(as_text=True)
    assert ledger.promotions() == []
    verify(ledger, engine)
    assert _records(engine) == []


def test_a_form_sent_twice_is_done_once_and_audited_once(app, ledger, engine):
    boss = Browser(app, "boss")
    ledger.open_account("M-4", txn_id="open-M-4", initial_minor=10_000)
    txn = f"bo-issue-{'cd' * 16}"
    for _ in range(2):
        assert boss.post("cards", "issue", txn=txn, account="M-4", card_no="C-4").status_code == 302
    assert [c.card_no for c in ledger.cards("M-4")] == ["C-4"]
    report = verify(ledger, engine)
    assert report.ok, report.as_dict()
    rows = _records(engine)
    assert [(r.username, r.action, r.target, r.address) for r in rows] == [("boss", "cards.issue", "C-4", "10.0.0.9")]


def test_close_needs_confirmation_and_shows_the_payout(app, ledger, engine):
    boss = Browser(app, "boss")
    ledger.open_account("M-5", txn_id="open-M-5", initial_minor=12_345, bonus_minor=2_000)
    first = boss.post("members", "close", account="M-5")
    assert first.status_code == 200
    body = first.get_data(as_text=True)
    assert "pay out 123.45 in cash, bonus forfeited 20.00" in body and 'name="confirm" value="yes"' in body
    assert ledger.account("M-5").status == "active"            # nothing yet
    done = boss.post("members", "close", account="M-5", confirm="yes")
    assert done.status_code == 302
    assert ledger.account("M-5").status == "closed"
    page = boss.page("members")
    assert "close M-5: pay out 123.45 in cash, bonus forfeited 20.00" in page


def test_the_audit_trail_is_in_the_chain_and_tampering_is_reported(app, ledger, engine):
    boss = Browser(app, "boss")
    assert boss.post("members", "open", account="M-6", holder="韩梅梅").status_code == 302
    assert boss.post("promotions", "add", min="100", bonus="20").status_code == 302
    report = verify(ledger, engine)
    assert report.ok, report.as_dict()
    assert report.checked["audit_records"] == 2
    with engine.connect() as conn:
        chained = conn.execute(select(LedgerEntry.txn_id, LedgerEntry.cashier_id, LedgerEntry.terminal_id,
                                      LedgerEntry.row_hash).where(LedgerEntry.kind == "audit")).all()
    assert len(chained) == 2 and all(r.cashier_id == "boss" and r.terminal_id == "backoffice" and r.row_hash
                                     for r in chained)
    page = boss.c.get("/audit?user=boss").get_data(as_text=True)
    assert page.count('class="audit-row"') == 2 and "members.open" in page and "10.0.0.9" in page
    assert boss.c.get("/audit?user=mgr").get_data(as_text=True).count('class="audit-row"') == 0

    # an edited record no longer matches what its chained row commits to
    victim = _records(engine)[0].txn_id
    with engine.begin() as conn:
        conn.execute(text("UPDATE audit_records SET summary = 'nothing happened' WHERE txn_id = :t"), {"t": victim})
        conn.execute(text("UPDATE audit_records SET record_json = replace(record_json, 'opened', 'nothing') "
                          "WHERE txn_id = :t"), {"t": victim})
    kinds = [v.kind for v in verify(ledger, engine).violations]
    assert kinds == ["audit_record_mismatch"], kinds
    # a removed one is reported too
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM audit_records WHERE txn_id = :t"), {"t": victim})
    found = [v for v in verify(ledger, engine).violations if v.kind == "audit_record_mismatch"]
    assert len(found) == 1 and "has no record" in found[0].detail
    # and an edited chained row breaks the chain
    with engine.begin() as conn:
        conn.execute(text("ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only"))
        conn.execute(text("UPDATE ledger_entries SET cashier_id = 'someone' WHERE txn_id = :t"), {"t": victim})
        conn.execute(text("ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_append_only"))
    assert "chain_broken" in [v.kind for v in verify(ledger, engine).violations]


def test_an_audit_record_that_is_not_its_txn_ids_is_refused(ledger):
    record = CoreRecord(who="boss", action="members.open", target="M-7", summary="opened")
    assert record.txn_id == txn_id_of(record.text())
    assert record_action(ledger, record).applied
    again = record_action(ledger, record)
    assert again.applied and again.replayed
    # the script refuses a txn id that is not one of an audit record
    from core import InvalidRequest
    part = ledger.schema.partition_of("backoffice")
    reply = ledger.runner.scripts.call(ledger.client, "audit", [part.txn("bo-audit-x"), part.journal],
                                       ["bo-audit-x", "backoffice", ledger.retention_s, "boss", "{}"])
    assert reply[0] == "INVALID" and "txn_id" in reply[3]
    with pytest.raises(InvalidRequest, match="action"):
        record_action(ledger, CoreRecord(who="boss", action="Drop Table", target="x"))


def test_own_password_change_is_audited_and_an_owner_keeps_their_role(app, ledger, engine):
    boss = Browser(app, "boss")
    resp = boss.post("users", "role", username="boss", role="clerk")
    assert resp.status_code == 400 and "role: an owner cannot take their own owner role away" in \
        resp.get_data(as_text=True)
    page = boss.c.get("/account/password").get_data(as_text=True)
    resp = boss.c.post("/account/password", data={"csrf": _csrf(page), "txn": _txn(page, "password"),
                                                   "old": PASSWORD, "new": "short", "new2": "short"})
    assert resp.status_code == 400 and "password: at least 10 characters" in resp.get_data(as_text=True)
    resp = boss.c.post("/account/password", data={"csrf": _csrf(page), "txn": _txn(page, "password"),
                                                   "old": PASSWORD, "new": "brand new password",
                                                   "new2": "brand new password"})
    assert resp.status_code == 302 and resp.headers["Location"].endswith("/login")
    assert verify(ledger, engine).ok
    assert [(r.action, r.summary) for r in _records(engine)] == [("users.password", "changed their own password")]
    assert "brand new password" not in _records(engine)[0].record_json
