"""A warehouse database with the raw layer and the issue tables (migrations 0001–0199) for each test;
``warehouse`` holds every table (the counter tests compare the issue list's daily tables too)."""

from __future__ import annotations

import pytest
from clickhouse_connect.driver.client import Client

from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.stacklens.issues.crashed_landing import warehouse

__all__ = ["client", "warehouse"]


@pytest.fixture
def client(settings: Settings) -> Client:
    # Only the raw layer and this area's migrations: a fault in another area's tables must not fail these.
    # Through the runner, so a copy of the process's template of these files (tests/warehouse_template.py).
    apply_migrations(settings, up_to=199)
    return get_warehouse(settings)
