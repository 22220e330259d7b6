"""One strict fake-tracker server per test module, reset before each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.stacklens.integrations.fake_trackers import FakeTrackers


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeTrackers]:
    server = FakeTrackers().start()
    yield server
    server.stop()


@pytest.fixture
def fake(fake_server: FakeTrackers) -> Iterator[FakeTrackers]:
    fake_server.calls.clear()
    fake_server.violations.clear()
    fake_server.tickets.clear()
    fake_server.script.clear()
    fake_server.answers.clear()
    yield fake_server
    assert fake_server.violations == [], "requests that do not match the tracker's documented API"
