"""Logins of the back-office page: argon2id hashes (argon2-cffi) in `backoffice_users`,
set with `reconcile-service backoffice-user NAME` (password on stdin). A wrong user and
a wrong password take the same time and give the same answer."""
from __future__ import annotations

import re
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import select
from sqlalchemy.engine import Engine

from ..models import BackofficeUser, LedgerSetting
from ..reports.book import ReportError
from ..dialect import insert_for, utcnow

_hasher = PasswordHasher()
_DUMMY_HASH = _hasher.hash("not a password of anyone")
USERNAME_RE = re.compile(r"[A-Za-z0-9._@-]{1,64}")
MIN_PASSWORD_LEN = 10
SESSION_KEY_SETTING = "backoffice_session_key"


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
    return exists is None


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
