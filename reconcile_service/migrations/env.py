"""Alembic environment of the reconcile service's schema.

The service runs migrations in code (`reconcile_service.db.migrate`) and hands over an
open connection in ``config.attributes["connection"]``; a developer running the alembic
CLI passes ``-x url=...`` (or sets CASHIER_DATABASE_URL) instead.
"""
from __future__ import annotations

import os

from alembic import context
from sqlalchemy import create_engine

from reconcile_service.models import Base

config = context.config
target_metadata = Base.metadata


def _run(connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    url = context.get_x_argument(as_dictionary=True).get("url") or os.environ.get("CASHIER_DATABASE_URL")
    if not url:
        raise SystemExit("give the database: alembic -x url=postgresql+psycopg://... or CASHIER_DATABASE_URL")
    engine = create_engine(url)
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()
