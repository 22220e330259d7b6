from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from stacklens.control.db import (
    MIGRATIONS_DIR,
    current_revision,
    get_engine,
    migrate_control_store,
    search_path_schema,
    session_scope,
)
from stacklens.control.models import Base, Organization
from stacklens.settings import Settings


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
