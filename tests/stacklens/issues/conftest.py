"""A warehouse database with the raw layer and the issue tables (migrations 0001–0199) for each test;
``warehouse`` holds every table (the counter tests compare the issue list's daily tables too)."""

from __future__ import annotations

import pytest
from clickhouse_connect.driver.client import Client

from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, get_warehouse
from stacklens.warehouse.migrations import discover
from tests.stacklens.issues.crashed_landing import warehouse

__all__ = ["client", "warehouse"]


@pytest.fixture
def client(settings: Settings) -> Client:
    # Only the raw layer and this area's migrations: a fault in another area's tables must not fail these.
    ensure_database(settings)
    warehouse = get_warehouse(settings)
    for migration in discover():
        if int(migration.name[:4]) < 200:
            for statement in migration.statements(settings.retention_days):
                warehouse.command(statement)
    return warehouse
