"""Fixtures of the ingest tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from clickhouse_connect.driver.client import Client

from stacklens.ingest.front_door import close_front_doors
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations


# The front door's tests (test_front_door*.py): a migrated warehouse, and the process's doors closed after.
@pytest.fixture
def warehouse(settings: Settings) -> Iterator[Client]:
    apply_migrations(settings)
    yield get_warehouse(settings)
    close_front_doors()
