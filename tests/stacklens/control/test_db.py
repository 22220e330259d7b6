from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, inspect, text

from stacklens.control.db import (
    MIGRATIONS_DIR,
    current_revision,
    dispose_engines,
    get_engine,
    migrate_control_store,
    search_path_schema,
    session_scope,
)
from stacklens.control.models import Base, Organization
from stacklens.settings import Settings
from tests.control_template import runner_only


@pytest.fixture(autouse=True)
def _the_runner_itself() -> Iterator[None]:
    """These are the runner's tests: no store of theirs is a copy of the suite's template
    (tests/control_template.py)."""
    with runner_only():
        yield


def _head() -> str:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return ScriptDirectory.from_config(config).get_current_head()


def test_migration_reaches_head_and_is_idempotent(control_settings: Settings) -> None:
    assert current_revision(control_settings) == _head()
    migrate_control_store(control_settings)
    migrate_control_store(control_settings)
    assert current_revision(control_settings) == _head()
    tables = set(inspect(get_engine(control_settings)).get_table_names())
    assert {
        "organizations",
        "users",
        "memberships",
        "projects",
        "api_keys",
        "app_keys",
        "key_usage",
    } <= tables


def test_migrations_match_the_models(control_settings: Settings) -> None:
    """A model change without an Alembic revision fails here."""
    with get_engine(control_settings).connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": False})
        diff = [
            d
            for d in compare_metadata(context, Base.metadata)
            if d[0] != "remove_table" or d[1].name != "alembic_version"
        ]
    assert diff == []


def test_session_scope_commits_and_rolls_back(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        session.add(Organization(name="Kept", slug="kept"))
    try:
        with session_scope(control_settings) as session:
            session.add(Organization(name="Dropped", slug="dropped"))
            session.flush()
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    with session_scope(control_settings) as session:
        names = set(session.scalars(text("SELECT name FROM organizations")))
    assert names == {"Kept"}


def test_engine_is_cached_per_url(control_settings: Settings) -> None:
    assert get_engine(control_settings) is get_engine(control_settings)


def test_sqlite_runs_in_wal_mode(settings: Settings) -> None:
    migrate_control_store(settings)
    with get_engine(settings).connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA busy_timeout")).scalar() >= 5000


def test_search_path_schema_is_parsed() -> None:
    url = "postgresql+psycopg://u@h/db?options=-csearch_path%3Dt_abc"
    assert search_path_schema(url) == "t_abc"
    assert search_path_schema("postgresql+psycopg://u@h/db") is None
    assert search_path_schema("sqlite:///x.db") is None


def test_postgres_schema_is_created_and_used(control_settings: Settings) -> None:
    if get_engine(control_settings).dialect.name != "postgresql":
        return  # SQLite has no schemas; the PostgreSQL run of this test is the one that checks
    schema = search_path_schema(control_settings.resolved_database_url)
    with get_engine(control_settings).connect() as connection:
        found = (
            connection.execute(
                text("SELECT table_schema FROM information_schema.tables WHERE table_name = 'organizations'")
            )
            .scalars()
            .all()
        )
    assert schema in found


def test_the_sqlite_control_store_and_its_wal_files_are_the_services_alone(settings: Settings) -> None:
    """control.db holds password and key hashes: 0600, and so its WAL and shm files (SQLite gives them the
    database's mode), whatever the umask; a store created 0644 by an older version is made 0600 when
    opened."""
    old_umask = os.umask(0o022)
    try:
        migrate_control_store(settings)
        with session_scope(settings) as session:
            session.add(Organization(name="Modes", slug="modes"))
        database = settings.data_dir / "control.db"
        files = [database, database.with_name("control.db-wal"), database.with_name("control.db-shm")]
        assert all(f.exists() for f in files), files
        assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in files} == {f.name: 0o600 for f in files}
        dispose_engines()
        for f in files:
            if f.exists():
                f.chmod(0o644)
        migrate_control_store(settings)
        assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in files if f.exists()} == {
            f.name: 0o600 for f in files if f.exists()
        }
    finally:
        os.umask(old_umask)


def test_a_sqlite_store_with_people_upgrades_past_revisions_that_copy_their_tables(
    settings: Settings,
) -> None:
    """Revision 0012 alters `users` (SQLite copies the table and drops the original). With foreign keys on,
    the drop deletes every person first: an activity row naming one made it fail (no installation of before
    2026-11-26 upgraded), and without one it would have deleted the memberships with them (ON DELETE
    CASCADE). The migration runs with the keys off, checks them at its end, and leaves them on."""
    from alembic import command

    from stacklens.control.db import ALEMBIC_LOCK, _alembic_config

    engine = get_engine(settings)
    with ALEMBIC_LOCK, engine.begin() as connection:
        config = _alembic_config(connection)
        assert config.get_main_option("script_location") == str(MIGRATIONS_DIR)
        command.upgrade(config, "0011")
    with engine.begin() as connection:
        for statement in (
            "INSERT INTO users (id, email, name, password_hash, created_at, is_active) "
            "VALUES (1, 'owner@old.example', 'Owner', 'x', '2026-11-23 01:00:00', 1)",
            "INSERT INTO organizations (id, name, slug, created_at, events_per_minute, requests_per_second) "
            "VALUES (1, 'Old Co', 'old-co', '2026-11-23 01:00:00', 1000, 10)",
            "INSERT INTO memberships (id, org_id, user_id, role, created_at) "
            "VALUES (1, 1, 1, 'owner', '2026-11-23 01:00:00')",
            "INSERT INTO projects (id, org_id, name, slug, platform, created_at) "
            "VALUES (1, 1, 'Shop', 'shop', 'python', '2026-11-23 01:00:00')",
            "INSERT INTO activity_log (id, org_id, created_at, actor_user_id, action, target_kind, detail) "
            "VALUES (1, 1, '2026-11-23 01:00:00', 1, 'organization.created', 'organization', '{}')",
        ):
            connection.exec_driver_sql(statement)

    migrate_control_store(settings)

    assert current_revision(settings) == ScriptDirectory(str(MIGRATIONS_DIR)).get_current_head()
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("SELECT email, is_operator FROM users").fetchall() == [
            ("owner@old.example", 0)
        ]
        assert connection.exec_driver_sql("SELECT count(*) FROM memberships").scalar() == 1
        assert connection.exec_driver_sql("SELECT actor_user_id FROM activity_log").scalar() == 1


def test_a_sqlite_upgrade_that_fails_half_way_leaves_the_store_as_it_was(settings: Settings) -> None:
    """An upgrade of several revisions that fails in the last one changes nothing: the tables the earlier
    ones made are not there, the revision is the one before, and once the cause is gone the same command
    completes (before, SQLite's driver ran the DDL a migration starts with outside any transaction: it
    stayed, and every re-run stopped on "duplicate column")."""
    import pytest
    from alembic import command

    from stacklens.control.db import ALEMBIC_LOCK, ControlStoreError, _alembic_config

    engine = get_engine(settings)
    with ALEMBIC_LOCK, engine.begin() as connection:
        command.upgrade(_alembic_config(connection), "0014")
    with engine.begin() as connection:
        # What makes the last revision (0016, event caps) fail: its first column is there already.
        connection.exec_driver_sql("ALTER TABLE projects ADD COLUMN max_events_per_issue INTEGER")
    before = set(inspect(engine).get_table_names())
    assert "issue_merges" not in before  # made by 0015, the revision between

    with pytest.raises(ControlStoreError, match="duplicate column"):
        migrate_control_store(settings)

    engine = get_engine(settings)
    assert current_revision(settings) == "0014"
    assert set(inspect(engine).get_table_names()) == before
    with engine.begin() as connection:
        connection.exec_driver_sql("ALTER TABLE projects DROP COLUMN max_events_per_issue")
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    migrate_control_store(settings)
    assert current_revision(settings) == _head()
    assert "issue_merges" in set(inspect(get_engine(settings)).get_table_names())


def test_the_head_read_from_the_files_is_alembics(tmp_path: Path) -> None:
    from alembic.config import Config

    from stacklens.control.db import head_revisions

    assert head_revisions() == {_head()}
    # A merge names two parents (a tuple), and a branch left open is a head of its own.
    versions = tmp_path / "versions"
    versions.mkdir()
    for name, parent in [
        ("a", "None"),
        ("b", '"a"'),
        ("c", '"a"'),
        ("m", '("b", "c")  # the merge'),
        ("x", '"a"'),
    ]:
        (versions / f"{name}.py").write_text(f'revision = "{name}"\ndown_revision = {parent}\n')
    assert head_revisions(versions) == {"m", "x"}
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    assert head_revisions() == set(ScriptDirectory.from_config(config).get_heads())


def test_a_store_at_the_head_is_not_upgraded_again(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new store is upgraded; one already at the head skips Alembic (its import and script walk, ~0.3 s of
    a command's CPU)."""
    from stacklens.control import db

    upgrades: list[str] = []
    real = db._upgrade

    def upgrade(engine: Engine, connection: Connection) -> None:
        upgrades.append("up")
        real(engine, connection)

    monkeypatch.setattr(db, "_upgrade", upgrade)
    migrate_control_store(settings)
    assert upgrades == ["up"] and current_revision(settings) == _head()
    migrate_control_store(settings)
    assert upgrades == ["up"]
