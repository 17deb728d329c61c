"""Logins of the back-office page: argon2id hashes (argon2-cffi) in `backoffice_users`,
set with `reconcile-service backoffice-user NAME` (password on stdin). A wrong user and
a wrong password take the same time and give the same answer. Sessions live on the server
(`backoffice_sessions`): the cookie carries a random token whose SHA-256 is the row's key,
so signing out, a password change or deleting the login ends every copy of the cookie.

Roles (issue 29): `owner` may do everything (logins and their roles too), `manager`
members, cards, promotions, cashiers and reports, `clerk` look-ups and reports only.
`ROLE_RIGHTS` is the one table the pages and every write route read."""
from __future__ import annotations

import hashlib
import re
import secrets
from datetime import timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import delete, select, update
from sqlalchemy.engine import Engine

from ..models import BackofficeSession, BackofficeUser, LedgerSetting
from ..reports.book import ReportError
from ..dialect import insert_for, utcnow

_hasher = PasswordHasher()
_DUMMY_HASH = _hasher.hash("not a password of anyone")
USERNAME_RE = re.compile(r"[A-Za-z0-9._@-]{1,64}")
MIN_PASSWORD_LEN = 10
SESSION_KEY_SETTING = "backoffice_session_key"
SESSION_LIFETIME = timedelta(hours=8)     # absolute: from sign-in, never renewed
ROLES = ("owner", "manager", "clerk")
# what each role may change (areas of the management pages); everyone may look things
# up, read reports and change their own password
ROLE_RIGHTS: dict[str, frozenset[str]] = {
    "owner": frozenset({"members", "cards", "promotions", "cashiers", "terminals", "settings",
                        "discrepancies", "users", "import"}),
    "manager": frozenset({"members", "cards", "promotions", "cashiers"}),
    "clerk": frozenset(),
}


def may(role: str | None, area: str) -> bool:
    return area in ROLE_RIGHTS.get(role or "", frozenset())


def check_role(role: str) -> str:
    if role not in ROLES:
        raise ReportError("role", f"one of {', '.join(ROLES)}")
    return role


def set_password(engine: Engine, username: str, password: str, role: str | None = None, *,
                 password_hint: str = " (read from stdin)") -> bool:
    """Create the login or change its password (and its role, when given; a new login
    without one is an owner); answers True when created."""
    if not USERNAME_RE.fullmatch(username or ""):
        raise ReportError("username", "1-64 characters of A-Z a-z 0-9 . _ @ -")
    if role is not None:
        check_role(role)
    if len(password) < MIN_PASSWORD_LEN:
        raise ReportError("password", f"at least {MIN_PASSWORD_LEN} characters{password_hint}")
    now = utcnow()
    with engine.begin() as conn:
        exists = conn.execute(select(BackofficeUser.username).where(BackofficeUser.username == username)).first()
        ins = insert_for(conn, BackofficeUser).values(username=username, password_hash=_hasher.hash(password),
                                                      role=role or "owner", created_at=now, updated_at=now)
        changes = dict(password_hash=ins.excluded.password_hash, updated_at=ins.excluded.updated_at)
        if role is not None:
            changes["role"] = ins.excluded.role
        conn.execute(ins.on_conflict_do_update(index_elements=["username"], set_=changes))
        # a new password ends every session signed in with the old one
        conn.execute(delete(BackofficeSession).where(BackofficeSession.username == username))
    return exists is None


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start_session(engine: Engine, username: str, address: str) -> str:
    """A new session of `username`; answers the token the cookie carries."""
    token = secrets.token_urlsafe(32)
    now = utcnow()
    with engine.begin() as conn:
        conn.execute(delete(BackofficeSession).where(BackofficeSession.expires_at <= now))   # tidy as we go
        conn.execute(insert_for(conn, BackofficeSession).values(
            token_hash=_token_hash(token), username=username, address=(address or "?")[:64],
            created_at=now, expires_at=now + SESSION_LIFETIME))
    return token


def session_user(engine: Engine, token: str | None) -> str | None:
    """The login a session token belongs to, or None: unknown, ended, expired, or its
    login deleted."""
    found = session_login(engine, token)
    return found[0] if found else None


def session_login(engine: Engine, token: str | None) -> tuple[str, str] | None:
    """(login, role) of a session token, or None (see session_user). The role is read
    on every request, so a changed role applies at once."""
    if not token or len(token) > 128:
        return None
    with engine.connect() as conn:
        row = conn.execute(
            select(BackofficeSession.username, BackofficeUser.role)
            .join(BackofficeUser, BackofficeUser.username == BackofficeSession.username)
            .where(BackofficeSession.token_hash == _token_hash(token),
                   BackofficeSession.expires_at > utcnow())).first()
    return (row[0], row[1]) if row else None


def users(engine: Engine) -> list[tuple[str, str]]:
    """Every login and its role, by name."""
    with engine.connect() as conn:
        return [(r[0], r[1]) for r in conn.execute(
            select(BackofficeUser.username, BackofficeUser.role).order_by(BackofficeUser.username))]


def set_role(engine: Engine, username: str, role: str) -> None:
    check_role(role)
    with engine.begin() as conn:
        done = conn.execute(update(BackofficeUser).where(BackofficeUser.username == username)
                            .values(role=role, updated_at=utcnow())).rowcount
    if not done:
        raise ReportError("username", f"no login {username!r}")


def end_session(engine: Engine, token: str | None) -> None:
    if token:
        with engine.begin() as conn:
            conn.execute(delete(BackofficeSession).where(BackofficeSession.token_hash == _token_hash(token)))


def check_login(engine: Engine, username: str, password: str) -> bool:
    with engine.connect() as conn:
        stored = conn.execute(select(BackofficeUser.password_hash)
                              .where(BackofficeUser.username == (username or "")[:64])).scalar()
    try:
        return _hasher.verify(stored or _DUMMY_HASH, password or "") and stored is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def session_key(engine: Engine) -> str:
    """The key that signs session cookies: made once, kept in ledger_settings, so every
    daemon of the shop accepts the same sessions and a restart logs nobody out."""
    with engine.begin() as conn:
        ins = insert_for(conn, LedgerSetting).values(name=SESSION_KEY_SETTING, value=secrets.token_hex(32))
        conn.execute(ins.on_conflict_do_nothing(index_elements=["name"]))
        return conn.execute(select(LedgerSetting.value).where(LedgerSetting.name == SESSION_KEY_SETTING)).scalar_one()
