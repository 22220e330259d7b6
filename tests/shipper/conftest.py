"""Fixtures for the shipper's tests: a local ingest server and a workspace (log dir + config)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.shipper.harness import Workspace
from tests.shipper.ingest_server import IngestServer


@pytest.fixture
def server() -> Iterator[IngestServer]:
    srv = IngestServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def ws(server: IngestServer) -> Iterator[Workspace]:
    workspace = Workspace(server)
    yield workspace
    workspace.cleanup()
