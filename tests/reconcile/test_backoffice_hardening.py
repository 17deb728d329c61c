"""The back-office page against an adversary with a browser (issue 25 items 10, 11, 13):
no open redirect after sign-in, wrong passwords throttled per user and per address (even
the right password is refused while locked), and out-of-range dates or control characters
in a query answered 400 with the reason instead of a 500. Served by the real Flask app on a
real PostgreSQL database of record."""
from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from reconcile_service import db as dbmod
from reconcile_service.web import throttle as throttle_mod
from reconcile_service.web.app import create_app
from reconcile_service.web.auth import set_password
from reconcile_service.web.throttle import LoginThrottle

PASSWORD = "correct horse battery"


class Clock:
    """The throttle's clock, moved by the test instead of waiting minutes."""

    def __init__(self):
        self.now_s = 1000.0

    def __call__(self) -> float:
        return self.now_s


@pytest.fixture
def engine(pg_url):
    eng = dbmod.make_engine(pg_url)
    dbmod.migrate(eng)
    set_password(eng, "owner", PASSWORD)
    yield eng
    eng.dispose()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def client(engine, clock):
    app = create_app(engine, ZoneInfo("Asia/Shanghai"), throttle=LoginThrottle(clock=clock))
    return app.test_client()


def _csrf(client) -> str:
    page = client.get("/login").get_data(as_text=True)
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def login(client, password: str, *, user: str = "owner", next_: str | None = None, address: str = "10.0.0.7"):
    url = "/login" + (f"?next={next_}" if next_ is not None else "")
    return client.post(url, data={"csrf": _csrf(client), "username": user, "password": password},
                       environ_base={"REMOTE_ADDR": address})


@pytest.mark.parametrize("next_", ["/%09/evil.example/x", "//evil.example/x", "/%5Cevil.example",
                                   "/%0a/evil.example", "https://evil.example/", "%2F%2Fevil.example"])
def test_sign_in_never_redirects_off_site(client, next_):
    resp = login(client, PASSWORD, next_=next_)
    location = resp.headers.get("Location", "")
    assert resp.status_code in (302, 400)
    if resp.status_code == 302:
        assert location == "/", location
    assert "evil" not in location


def test_sign_in_goes_back_to_the_page_asked_for(client):
    resp = login(client, PASSWORD, next_="/search%3Fq%3DA-1")
    assert resp.status_code == 302 and resp.headers["Location"] == "/search?q=A-1"


def test_wrong_passwords_lock_the_user_even_for_the_right_one(client, clock):
    for i in range(throttle_mod.FREE_FAILURES):
        assert login(client, f"wrong {i}").status_code == 401
    assert login(client, "wrong again").status_code == 401          # the one that locks
    for i in range(45):                                            # the 50 in a row
        clock.now_s += 0.2
        resp = login(client, f"guess {i}")
        assert resp.status_code == 429
    resp = login(client, PASSWORD)
    assert resp.status_code == 429, "the right password got in while the user was locked"
    assert "try again in" in resp.get_data(as_text=True)
    # locked from another address too (per user) ...
    assert login(client, PASSWORD, address="10.0.0.8").status_code == 429
    # ... and the lock ends: the right password then signs in
    clock.now_s += throttle_mod.MAX_LOCK_S + 1
    assert login(client, PASSWORD).status_code == 302


def test_lock_grows_with_each_failure(clock):
    t = LoginThrottle(clock=clock)
    waits = []
    for _ in range(throttle_mod.FREE_FAILURES + 4):
        t.failed("owner", "10.0.0.7")
        waits.append(round(t.wait_s("owner", "10.0.0.7")))
    assert waits[:throttle_mod.FREE_FAILURES] == [0] * throttle_mod.FREE_FAILURES
    assert waits[throttle_mod.FREE_FAILURES:] == [30, 60, 120, 240]


def test_one_address_guessing_many_users_is_locked(client):
    for i in range(throttle_mod.FREE_FAILURES + 1):
        login(client, "wrong", user=f"user{i}", address="10.0.0.9")
    assert login(client, PASSWORD, address="10.0.0.9").status_code == 429
    assert login(client, PASSWORD, address="10.0.0.10").status_code == 302


def test_success_clears_the_count(client):
    for i in range(throttle_mod.FREE_FAILURES):
        login(client, "wrong")
    assert login(client, PASSWORD).status_code == 302
    client.post("/logout", data={"csrf": "x"})
    for i in range(throttle_mod.FREE_FAILURES):
        assert login(client, "wrong").status_code == 401


@pytest.fixture
def signed_in(client):
    assert login(client, PASSWORD).status_code == 302
    return client


@pytest.mark.parametrize("query", ["from=0001-01-01", "to=9999-12-31", "from=9999-12-31&to=9999-12-31",
                                   "from=1969-12-31"])
def test_out_of_range_dates_are_bad_input(signed_in, query):
    resp = signed_in.get(f"/statement/A-1?{query}")
    assert resp.status_code == 400
    body = resp.get_data(as_text=True)
    assert "outside" in body and ("from" in body or "to" in body)


@pytest.mark.parametrize("url", ["/search?q=A%00B", "/statement/A%00B", "/download/statement.csv?account=A%00",
                                 "/search?q=" + "x" * 500])
def test_control_characters_and_huge_values_are_bad_input(signed_in, url):
    resp = signed_in.get(url)
    assert resp.status_code == 400
    assert "Traceback" not in resp.get_data(as_text=True)


def test_download_with_out_of_range_date_is_bad_input(signed_in):
    assert signed_in.get("/download/liability.csv?date=9999-12-31").status_code == 400
    assert signed_in.get(f"/download/liability.csv?date={datetime.now().date()}").status_code == 200


# ---------------------------------------------------------------- sessions (item 12)

def _copy_cookie(client) -> str:
    cookie = client.get_cookie("backoffice")
    assert cookie is not None
    return cookie.value


def _with_cookie(engine, clock, value: str):
    other = create_app(engine, ZoneInfo("Asia/Shanghai"), throttle=LoginThrottle(clock=clock)).test_client()
    other.set_cookie("backoffice", value)
    return other


def test_a_cookie_copied_before_sign_out_is_refused_after(engine, clock, signed_in):
    copied = _copy_cookie(signed_in)
    thief = _with_cookie(engine, clock, copied)
    assert thief.get("/").status_code == 200               # the copy works while signed in
    page = signed_in.get("/").get_data(as_text=True)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    signed_in.post("/logout", data={"csrf": csrf})
    assert thief.get("/").status_code == 302
    assert "/login" in thief.get("/").headers["Location"]
    assert signed_in.get("/").status_code == 302


def test_a_password_change_ends_every_session(engine, clock, signed_in):
    thief = _with_cookie(engine, clock, _copy_cookie(signed_in))
    set_password(engine, "owner", "a brand new password")
    assert thief.get("/").status_code == 302
    assert signed_in.get("/").status_code == 302


def test_deleting_the_login_ends_its_sessions(engine, clock, signed_in):
    from sqlalchemy import delete
    from reconcile_service.models import BackofficeUser
    thief = _with_cookie(engine, clock, _copy_cookie(signed_in))
    with engine.begin() as conn:
        conn.execute(delete(BackofficeUser).where(BackofficeUser.username == "owner"))
    assert thief.get("/").status_code == 302


def test_the_lifetime_is_absolute_and_not_renewed(engine, signed_in):
    from sqlalchemy import update
    from reconcile_service.dialect import utcnow
    from reconcile_service.models import BackofficeSession
    resp = signed_in.get("/")
    assert resp.status_code == 200
    assert "backoffice=" not in resp.headers.get("Set-Cookie", ""), "the cookie is renewed on every request"
    with engine.begin() as conn:
        row = conn.execute(BackofficeSession.__table__.select()).one()
        assert (row.expires_at - row.created_at).total_seconds() == 8 * 3600
        conn.execute(update(BackofficeSession).values(expires_at=utcnow()))      # 8 h later
    assert signed_in.get("/").status_code == 302


def test_the_cookie_is_secure_over_tls(engine, clock):
    client = create_app(engine, ZoneInfo("Asia/Shanghai"), throttle=LoginThrottle(clock=clock)).test_client()
    page = client.get("/login", base_url="https://backoffice.example").get_data(as_text=True)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    resp = client.post("/login", base_url="https://backoffice.example",
                       data={"csrf": csrf, "username": "owner", "password": PASSWORD})
    assert resp.status_code == 302
    assert "Secure" in resp.headers["Set-Cookie"]
    plain = create_app(engine, ZoneInfo("Asia/Shanghai")).test_client().get("/login")
    assert "Secure" not in plain.headers["Set-Cookie"]


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.10", "::"])
def test_serving_beyond_loopback_without_tls_is_refused(engine, host):
    from types import SimpleNamespace
    from core.errors import ConfigError
    from reconcile_service.web.server import start_backoffice
    settings = SimpleNamespace(backoffice_host=host, backoffice_port=0, shop_timezone="Asia/Shanghai",
                               insecure_http=False)
    with pytest.raises(ConfigError) as refused:
        start_backoffice(engine, settings)
    assert "backoffice_host" in str(refused.value) and "--insecure-http" in str(refused.value)
    if host == "192.0.2.10":      # an address of no interface here: with the flag, only binding fails
        with pytest.raises(ConfigError) as unbound:
            start_backoffice(engine, SimpleNamespace(**{**vars(settings), "insecure_http": True}))
        assert "backoffice_port: cannot listen" in str(unbound.value)


def test_loopback_needs_no_flag(engine):
    from types import SimpleNamespace
    from reconcile_service.web.server import start_backoffice
    server = start_backoffice(engine, SimpleNamespace(backoffice_host="127.0.0.1", backoffice_port=0,
                                                      shop_timezone="Asia/Shanghai", insecure_http=False))
    server.close()
