"""Control-store engine, sessions and schema migration.

One engine per database URL per process. SQLite runs in WAL mode with a busy timeout, so API workers
read while one writes; PostgreSQL URLs may carry ``options=-csearch_path%3D<schema>`` (one schema per
installation or per test), and the schema is created when missing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, unquote

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from stacklens.errors import Unavailable
from stacklens.settings import Settings

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# A writer waits this long for SQLite's lock before failing: longer than any control-store transaction.
SQLITE_BUSY_TIMEOUT_MS = 10_000
# Arbitrary constant naming the "control-store migration" advisory lock on PostgreSQL.
_PG_MIGRATION_LOCK_ID = 0x5717C1E5

# Key of the settings in ``Session.info``.
SETTINGS_INFO = "stacklens.settings"

_lock = threading.Lock()
_engines: dict[str, Engine] = {}
_sessionmakers: dict[str, sessionmaker[Session]] = {}


class ControlStoreError(Unavailable, RuntimeError):
    """The control store cannot be opened or migrated; the message says why."""


def _sqlite_pragmas(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")  # safe with WAL: a crash loses no committed transaction
    cursor.close()


def _build_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            pool_pre_ping=False,
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def get_engine(settings: Settings) -> Engine:
    """The engine of ``settings``' control store, built once per URL."""
    return engine_for_url(settings.resolved_database_url)


def engine_for_url(url: str) -> Engine:
    """The engine of the control store at ``url`` (SQLAlchemy URL), built once per URL and shared."""
    with _lock:
        engine = _engines.get(url)
        if engine is None:
            engine = _build_engine(url)
            _engines[url] = engine
            _sessionmakers[url] = sessionmaker(engine, expire_on_commit=False)
        return engine


def _sessionmaker(url: str) -> sessionmaker[Session]:
    engine_for_url(url)
    return _sessionmakers[url]


def session_settings(session: Session) -> Settings:
    """The settings ``session`` was opened with (:func:`session_scope` records them): code that needs the
    installation's secret, such as key encryption, takes it from the session it is handed."""
    settings = session.info.get(SETTINGS_INFO)
    if not isinstance(settings, Settings):
        raise ControlStoreError("this session was not opened through session_scope(settings)")
    return settings


@contextmanager
def session_scope(settings: Settings) -> Iterator[Session]:
    """A session of ``settings``' control store that commits when the block succeeds and rolls back when it
    raises. The session carries ``settings`` (:func:`session_settings`)."""
    with _scope(_sessionmaker(settings.resolved_database_url)(info={SETTINGS_INFO: settings})) as session:
        yield session


@contextmanager
def store_session(url: str) -> Iterator[Session]:
    """A session of the control store at ``url`` for readers that hold only its URL (the pipelines' control
    store resource). It carries no settings, so nothing under it can encrypt or reveal a key."""
    with _scope(_sessionmaker(url)()) as session:
        yield session


@contextmanager
def _scope(session: Session) -> Iterator[Session]:
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def dispose_engines() -> None:
    """Close every pooled connection and forget the engines (tests, forked workers)."""
    with _lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()
        _sessionmakers.clear()


def search_path_schema(url: str) -> str | None:
    """The first schema of ``options=-csearch_path=<schema>`` in a PostgreSQL URL, if any."""
    parsed = make_url(url)
    for option in parse_qs(f"options={parsed.query.get('options', '')}").get("options", []):
        for part in unquote(option).split():
            if part.startswith("-csearch_path="):
                return part.split("=", 1)[1].split(",")[0].strip() or None
    return None


def _alembic_config(connection: Connection) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


@contextmanager
def _sqlite_migration_lock(engine: Engine) -> Iterator[None]:
    """On SQLite, a file lock beside the database so a second migrator waits instead of racing on DDL."""
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:":
        yield
        return
    import fcntl

    with open(f"{database}.migrate-lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def migrate_control_store(settings: Settings) -> None:
    """Bring the control store to the newest Alembic revision. Safe to run again and from several processes."""
    from alembic import command
    from sqlalchemy.exc import SQLAlchemyError

    engine = get_engine(settings)
    try:
        with engine.begin() as connection:
            if engine.dialect.name == "postgresql":
                # Serialise concurrent migrators (several workers starting at once); released at commit.
                connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _PG_MIGRATION_LOCK_ID})
                schema = search_path_schema(str(engine.url))
                if schema:
                    quoted = engine.dialect.identifier_preparer.quote_identifier(schema)
                    connection.execute(text(f"CREATE SCHEMA IF NOT EXISTS {quoted}"))
            with _sqlite_migration_lock(engine):
                command.upgrade(_alembic_config(connection), "head")
    except SQLAlchemyError as exc:
        raise ControlStoreError(
            f"cannot migrate the control store at {engine.url.render_as_string(hide_password=True)}: "
            f"{str(getattr(exc, 'orig', None) or exc).splitlines()[0]}"
        ) from exc


def current_revision(settings: Settings) -> str | None:
    """The Alembic revision the control store is at (``None`` before the first migration)."""
    from alembic.runtime.migration import MigrationContext

    with get_engine(settings).connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
