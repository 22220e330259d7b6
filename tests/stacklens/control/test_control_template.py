"""The suite's copies of a migrated SQLite control store (tests/control_template.py) are the store the runner
builds: the same tables, indexes and triggers with the same definitions, the same revision, no rows of
their own, and the runner finds nothing left to do on them."""

from __future__ import annotations

from pathlib import Path

from alembic.script import ScriptDirectory
from sqlalchemy import func, select, table, text

from stacklens.control.db import MIGRATIONS_DIR, current_revision, get_engine, migrate_control_store
from stacklens.control.models import Organization
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
