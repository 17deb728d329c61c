"""The members and balances of the database of record (issue 29 item 7), for the
accountant's export (`cashierctl member export --from-book`, and the back-office page
later): one `core.member_import.ExportRow` per account with its cards and their states,
read from `accounts` and `cards` in one snapshot. Read-only."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Engine

from core.member_import import ExportRow

from ..models import Account, Card


def members_from_book(engine: Engine) -> list[ExportRow]:
    """Every account the reconcile service has booked (as of its last drain), by id."""
    with engine.connect() as conn:
        cards: dict[str, list[str]] = {}
        for card_no, account_id, status in conn.execute(select(Card.card_no, Card.account_id, Card.status)):
            cards.setdefault(account_id, []).append(f"{card_no}:{status}")
        rows = conn.execute(select(Account.account_id, Account.holder_name, Account.phone, Account.principal_minor,
                                   Account.bonus_minor, Account.status).order_by(Account.account_id)).all()
    return [ExportRow(a, ";".join(sorted(cards.get(a, []))), name or "", phone or "", int(p), int(b), st)
            for a, name, phone, p, b, st in rows]
