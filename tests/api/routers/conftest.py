"""Fixtures of the API router tests: the dashboards' migrated stores and organizations (an owner, an API
key and a project each), and a test client of the API app alone. A module that defines its own ``client``
keeps it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.settings import Settings
from tests.pipelines.pipeline_seed import defs, instance


@pytest.fixture
def client(stores: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(stores)) as test_client:
        yield test_client


# The seeded pipeline (tests/pipelines/pipeline_seed.py) for the Explore operator's tests, asked for by name.
__all__ = ["defs", "instance"]
