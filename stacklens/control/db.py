"""Control-store engine, sessions and schema migration.

One engine per database URL per process. SQLite runs in WAL mode with a busy timeout, so API workers
read while one writes; its file (and so its WAL and shared-memory files, which SQLite creates with the
database's mode) is the service's alone, 0600: it holds password hashes, key hashes and integration tokens;
PostgreSQL URLs may carry ``options=-csearch_path%3D<schema>`` (one schema per installation or per test),
and the schema is created when missing."""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import ConnectionPoolEntry

from stacklens.blocking import may_block
from stacklens.control.store_errors import as_unavailable, store_unavailable
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
# Alembic's `context` and `op` are proxies installed module-wide, not per thread: two migrations at once in
# one process read each other's configuration, so one ran its revisions on the other's connection (seen as a
# PostgreSQL control store migrated through a SQLite connection of another thread, when the schedules thread
# opened its Dagster instance, whose SQLite storages Dagster stamps through Alembic, during a migration).
# Every Alembic run of this process holds this lock: the control store's here, Dagster's instance opening
# in pipelines/embedded.py. Taken before any database or file lock, so the order is always the same.
ALEMBIC_LOCK = threading.RLock()
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


def _private_sqlite_file(path: Path) -> None:
    """Create the database file 0600 before SQLite opens it, and make an existing one (and its WAL and shm
    files) 0600: SQLite creates a file 0644 under the usual umask, and gives the WAL and shm files the
    database's mode. An empty file is a valid empty database."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if file.exists() and file.stat().st_mode & 0o077:
            file.chmod(0o600)


# Statements this process has sent that may change the store (anything but a read): caches of what the
# store says (stacklens.control.keys.dsn_callers) are valid while this count stands.
_writes = 0


def writes_sent() -> int:
    """How many statements other than reads this process has sent to any control store."""
    return _writes


def _count_write(conn: Connection, cursor: Any, statement: str, *args: Any) -> None:
    global _writes
    head = statement.lstrip()[:6].upper()
    if head != "SELECT" and not head.startswith("PRAGMA"):
        _writes += 1


def _build_engine(url: str) -> Engine:
    engine = _new_engine(url)
    event.listen(engine, "before_cursor_execute", _count_write)
    return engine


def _new_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            _private_sqlite_file(Path(parsed.database).expanduser())
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
    may_block("a control-store session")
    try:
        yield session
        session.commit()
    except BaseException as exc:
        session.rollback()
        # A locked or read-only store is a retryable refusal (503), not a crash: every entrance answers it so.
        if store_unavailable(exc):
            raise as_unavailable(exc) from exc
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


def head_revisions(versions: Path | None = None) -> frozenset[str]:
    """The migrations' newest revisions (no other revision names them as its parent), read from the files in
    ``versions`` (the control store's) as Alembic reads them, without importing Alembic."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (versions or MIGRATIONS_DIR / "versions").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        revision = re.search(r"^revision\s*=\s*[\"']([^\"']+)[\"']", source, re.MULTILINE)
        parent = re.search(r"^down_revision\s*=\s*([^#\n]*)", source, re.MULTILINE)
        if revision:
            revisions.add(revision.group(1))
        if parent:
            parents.update(re.findall(r"[\"']([^\"']+)[\"']", parent.group(1)))
    return frozenset(revisions - parents)


def _at_head(engine: Engine) -> bool:
    """Whether the store is already at the migrations' head: then a command or a server start skips Alembic,
    whose import (Mako, and through it Pygments' lexers) and walk of the scripts cost ~0.3 s of CPU each
    time. A store without Alembic's table, or at another revision, is upgraded (or refused) by Alembic."""
    from sqlalchemy.exc import SQLAlchemyError

    try:
        with engine.connect() as connection:
            stored = {row[0] for row in connection.execute(text("SELECT version_num FROM alembic_version"))}
    except SQLAlchemyError:
        return False  # no table yet: a new store
    return bool(stored) and stored == _shipped_heads()


@functools.cache
def _shipped_heads() -> frozenset[str]:
    """The head of the migrations this installation ships, read once per process (every test's store and
    every request-free command asks)."""
    return head_revisions()


def migrate_control_store(settings: Settings) -> None:
    """Bring the control store to the newest Alembic revision. Safe to run again and from several
    processes."""
    from sqlalchemy.exc import SQLAlchemyError

    engine = get_engine(settings)
    if _at_head(engine):
        return
    sqlite = engine.dialect.name == "sqlite"
    try:
        with engine.connect() as connection:
            raw: Any = connection.connection.dbapi_connection
            legacy = raw.isolation_level if sqlite else None
            if sqlite:
                # Python's sqlite3 driver opens a transaction only before a data change, so the DDL a
                # migration starts with ran outside any and stayed when a later statement failed (a re-run
                # then stopped on "duplicate column"). With the driver's own transactions off and an explicit
                # BEGIN, the whole upgrade is one transaction: a failure anywhere leaves the store as it was.
                raw.isolation_level = None
                # Batch mode alters a SQLite table by copying it and dropping the original; with foreign keys
                # on, dropping a table other rows point at fails (revision 0012 alters `users`: every
                # installation with a person in it stopped there). SQLite's documented way: keys off for the
                # migration (a no-op inside a transaction, so before it), checked before its commit.
                connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
                connection.commit()
            try:
                with connection.begin():
                    if sqlite:
                        connection.exec_driver_sql("BEGIN")
                    _upgrade(engine, connection)
            finally:
                if sqlite:
                    connection.exec_driver_sql("PRAGMA foreign_keys=ON")
                    connection.commit()
                    raw.isolation_level = legacy
    except SQLAlchemyError as exc:
        raise ControlStoreError(
            f"cannot migrate the control store at {engine.url.render_as_string(hide_password=True)}: "
            f"{str(getattr(exc, 'orig', None) or exc).splitlines()[0]}"
        ) from exc


def _upgrade(engine: Engine, connection: Connection) -> None:
    """Alembic's upgrade to head in ``connection``'s transaction, one migrator at a time; on SQLite, refused
    (rolled back) when a row is left pointing at nothing."""
    with ALEMBIC_LOCK:
        _upgrade_alone(engine, connection)


def _upgrade_alone(engine: Engine, connection: Connection) -> None:
    from alembic import command

    if engine.dialect.name == "postgresql":
        # Serialise concurrent migrators (several workers starting at once); released at commit.
        connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _PG_MIGRATION_LOCK_ID})
        schema = search_path_schema(str(engine.url))
        if schema:
            quoted = engine.dialect.identifier_preparer.quote_identifier(schema)
            connection.execute(text(f"CREATE SCHEMA IF NOT EXISTS {quoted}"))
    with _sqlite_migration_lock(engine):
        command.upgrade(_alembic_config(connection), "head")
        if engine.dialect.name == "sqlite":
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if broken:
                table, rowid, parent, _ = broken[0]
                raise ControlStoreError(
                    f"a migration left {len(broken)} row(s) pointing at nothing (the first: {table} row "
                    f"{rowid} -> {parent}); nothing was changed"
                )


def current_revision(settings: Settings) -> str | None:
    """The Alembic revision the control store is at (``None`` before the first migration)."""
    from alembic.runtime.migration import MigrationContext

    with get_engine(settings).connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
