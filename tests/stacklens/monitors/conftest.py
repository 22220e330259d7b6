"""Fixtures of the monitors tests: the dashboards' migrated stores and organizations, and the same stores
with the control store on PostgreSQL (a fresh schema)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stacklens.settings import Settings, override_settings
from tests.conftest import postgres_schema_url


@pytest.fixture
def pg_stores(settings: Settings, postgres_url: str) -> Iterator[Settings]:
    from sqlalchemy import text

    from stacklens.control.db import dispose_engines, get_engine, migrate_control_store
    from stacklens.warehouse.migrations import apply_migrations

    url, schema = postgres_schema_url(postgres_url)
    current = settings.model_copy(update={"database_url": url})
    override_settings(current)
    migrate_control_store(current)
    apply_migrations(current)
    try:
        yield current
    finally:
        with get_engine(current).begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        dispose_engines()
