"""Logins of the back-office page: argon2id hashes (argon2-cffi) in `backoffice_users`,
set with `reconcile-service backoffice-user NAME` (password on stdin). A wrong user and
a wrong password take the same time and give the same answer. Sessions live on the server
(`backoffice_sessions`): the cookie carries a random token whose SHA-256 is the row's key,
so signing out, a password change or deleting the login ends every copy of the cookie."""
from __future__ import annotations

import hashlib
import re
import secrets
from datetime import timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import delete, select
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


def set_password(engine: Engine, username: str, password: str) -> bool:
    """Create the login or change its password; answers True when created."""
    if not USERNAME_RE.fullmatch(username or ""):
        raise ReportError("username", "1-64 characters of A-Z a-z 0-9 . _ @ -")
    if len(password) < MIN_PASSWORD_LEN:
        raise ReportError("password", f"at least {MIN_PASSWORD_LEN} characters (read from stdin)")
    now = utcnow()
    with engine.begin() as conn:
        exists = conn.execute(select(BackofficeUser.username).where(BackofficeUser.username == username)).first()
        ins = insert_for(conn, BackofficeUser).values(username=username, password_hash=_hasher.hash(password),
                                                      created_at=now, updated_at=now)
        conn.execute(ins.on_conflict_do_update(index_elements=["username"], set_=dict(
            password_hash=ins.excluded.password_hash, updated_at=ins.excluded.updated_at)))
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
    if not token or len(token) > 128:
        return None
    with engine.connect() as conn:
        return conn.execute(
            select(BackofficeSession.username)
            .join(BackofficeUser, BackofficeUser.username == BackofficeSession.username)
            .where(BackofficeSession.token_hash == _token_hash(token),
                   BackofficeSession.expires_at > utcnow())).scalar()


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
