"""The suite's copies of a migrated SQLite control store (tests/control_template.py) are the store the runner
builds: the same tables, indexes and triggers with the same definitions, the same revision, no rows of
their own, and the runner finds nothing left to do on them."""

from __future__ import annotations

from pathlib import Path

from alembic.script import ScriptDirectory
from sqlalchemy import func, select, table, text

from stacklens.control.db import MIGRATIONS_DIR, current_revision, get_engine, migrate_control_store
from stacklens.control.models import Organization, Project
from stacklens.settings import Settings
from tests.conftest import make_settings
from tests.control_template import runner_only


def _schema(settings: Settings) -> dict[tuple[str, str], object]:
    """Every table, index and trigger: its definition's lines (a table's constraints in any order: Alembic's
    batch mode writes a re-created table's constraints in an order that differs from run to run) and, for a
    table, its columns in order as SQLite reports them."""
    with get_engine(settings).connect() as connection:
        rows = connection.execute(text("SELECT type, name, sql FROM sqlite_master")).fetchall()
        columns = {
            name: connection.execute(text(f"PRAGMA table_info('{name}')")).fetchall()
            for kind, name, _ in rows
            if kind == "table"
        }
    return {
        (kind, name): (
            sorted(line.strip().rstrip(",") for line in (sql or "").splitlines()),
            columns.get(name),
        )
        for kind, name, sql in rows
    }


def _rows(settings: Settings) -> dict[str, int]:
    with get_engine(settings).connect() as connection:
        tables = connection.execute(text("SELECT name FROM sqlite_master WHERE type = 'table'")).scalars()
        return {
            name: connection.execute(select(func.count()).select_from(table(name))).scalar_one()
            for name in tables
        }


def test_a_copy_is_the_store_the_runner_builds(settings: Settings, tmp_path: Path) -> None:
    copied = settings
    migrate_control_store(copied)
    migrated = make_settings(tmp_path / "migrated", settings.warehouse_url)
    with runner_only():
        migrate_control_store(migrated)

    assert _schema(copied) == _schema(migrated)
    assert len([kind for kind, _ in _schema(copied) if kind == "table"]) > 30
    head = ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()
    assert current_revision(copied) == current_revision(migrated) == head
    assert _rows(copied) == _rows(migrated) == {**dict.fromkeys(_rows(migrated), 0), "alembic_version": 1}
    with runner_only():
        migrate_control_store(copied)  # the runner's own view: nothing to do, nothing changed
    assert _schema(copied) == _schema(migrated)


def test_a_copy_is_a_working_private_store(settings: Settings) -> None:
    from stacklens.control.db import session_scope

    migrate_control_store(settings)
    with get_engine(settings).connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
    with session_scope(settings) as session:
        session.add(Organization(name="Copied", slug="copied"))
    with session_scope(settings) as session:
        assert [o.slug for o in session.query(Organization)] == ["copied"]
    assert (settings.data_dir / "control.db").stat().st_mode & 0o077 == 0


def test_a_store_with_tables_is_migrated_by_the_runner(settings: Settings) -> None:
    """Not overwritten: the store's own table stays beside the migrated ones."""
    with get_engine(settings).begin() as connection:
        connection.execute(text("CREATE TABLE kept (x INTEGER)"))
        connection.execute(text("INSERT INTO kept VALUES (7)"))
    migrate_control_store(settings)
    assert current_revision(settings) == ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()
    with get_engine(settings).connect() as connection:
        assert connection.execute(text("SELECT x FROM kept")).scalar() == 7


def test_a_store_at_the_newest_revision_is_left_as_it_is(settings: Settings) -> None:
    from stacklens.control.db import session_scope

    migrate_control_store(settings)
    with session_scope(settings) as session:
        session.add(Organization(name="Kept", slug="kept"))
    before = _schema(settings)
    migrate_control_store(settings)
    assert _schema(settings) == before
    assert current_revision(settings) == ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()
    with session_scope(settings) as session:
        assert [o.slug for o in session.query(Organization)] == ["kept"]


def _schemas(settings: Settings) -> set[str]:
    with get_engine(settings).connect() as connection:
        return set(connection.execute(text("SELECT nspname FROM pg_namespace")).scalars())


def test_a_pooled_postgres_schema_is_the_store_the_runner_builds(
    settings: Settings, postgres_url: str, monkeypatch
) -> None:
    """A PostgreSQL schema the copying runner migrated is emptied into a pool at its test's end, and the next
    empty schema is that one renamed: the runner's objects, Alembic's revision, no rows (rows that refer to
    others too), identities from the start. One whose objects changed is dropped instead."""
    from stacklens.control.db import dispose_engines, session_scope
    from tests import control_template
    from tests.conftest import postgres_schema_url

    monkeypatch.setattr(control_template, "PG_POOL_SIZE", 100)  # room whatever the tests before left there

    def store() -> tuple[Settings, str]:
        url, schema = postgres_schema_url(postgres_url)
        return settings.model_copy(update={"database_url": url}), schema

    def catalog(store: Settings, schema: str) -> frozenset[tuple[str, str, str, str]]:
        with get_engine(store).begin() as connection:
            return control_template._catalog(connection, schema)

    used, used_schema = store()
    migrate_control_store(used)
    with session_scope(used) as session:
        one = Organization(name="One", slug="one")
        session.add_all([one, Organization(name="Two", slug="two")])
        session.flush()
        # A row that refers to another: the emptying deletes the filled tables in any order.
        session.add(Project(org_id=one.id, name="Web", slug="web"))
    before = {name for names in control_template._pg_pools.values() for name in names}
    control_template.release_schema(used, used_schema)
    assert used_schema not in _schemas(used), "emptied and renamed into the pool"
    (emptied,) = {name for names in control_template._pg_pools.values() for name in names} - before
    with get_engine(used).begin() as connection:
        tables = control_template._tables(connection, emptied)
        assert control_template._filled(connection, emptied, tables) == ["alembic_version"]

    taken, taken_schema = store()
    pooled = sum(len(names) for names in control_template._pg_pools.values())
    migrate_control_store(taken)
    assert sum(len(names) for names in control_template._pg_pools.values()) == pooled - 1, (
        "taken from the pool"
    )
    migrated, migrated_schema = store()
    try:
        with runner_only():
            migrate_control_store(migrated)
        assert catalog(taken, taken_schema) == catalog(migrated, migrated_schema)
        assert len([kind for kind, *_ in catalog(taken, taken_schema) if kind == "class"]) > 30
        assert current_revision(taken) == current_revision(migrated)
        with session_scope(taken) as session:
            assert session.query(Organization).count() == 0 and session.query(Project).count() == 0
            session.add(Organization(name="First", slug="first"))
        with session_scope(taken) as session:
            assert [o.id for o in session.query(Organization)] == [1], "identities start again"

        # Altered: dropped, not pooled.
        with get_engine(taken).begin() as connection:
            connection.execute(text("ALTER TABLE organizations ADD COLUMN extra INTEGER"))
        control_template.release_schema(taken, taken_schema)
        assert sum(len(names) for names in control_template._pg_pools.values()) == pooled - 1
        assert taken_schema not in _schemas(taken)
    finally:
        with get_engine(migrated).begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{migrated_schema}" CASCADE'))
        dispose_engines()
