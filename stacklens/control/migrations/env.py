"""Alembic environment of the control store, configured in code (no alembic.ini).

:func:`stacklens.control.db.migrate_control_store` passes an open connection in
``config.attributes["connection"]``; without one (``alembic`` run by hand) the settings' URL is used.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from stacklens.control.models import Base

target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    # Alembic's own CLI (`alembic upgrade`) has no caller to hand it settings: the environment's are the
    # settings of that one command, so this is the composition root of that process.
    from stacklens.control.db import get_engine
    from stacklens.settings import Settings

    with get_engine(Settings()).connect() as own:
        _run(own)
        own.commit()


if context.is_offline_mode():
    raise SystemExit("offline (SQL script) migrations are not supported; run `stacklens migrate`")
run_migrations_online()
