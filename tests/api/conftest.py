"""Fixtures of the API tests: a real StackLens server for the Sentry-protocol tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from api.app import create_app
from stacklens.public_url import serving
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.sentry_live import AnsweredRows, _warehouse


@pytest.fixture
def dsn_server(settings: Settings) -> Iterator[str]:
    apply_migrations(settings)  # every table: the issue list reads the dashboards' daily tables
    _warehouse[:] = [AnsweredRows(get_warehouse(settings))]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    instance = uvicorn.Server(
        uvicorn.Config(
            create_app(serving(settings, "127.0.0.1", port)), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not instance.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert instance.started
    yield f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(timeout=15)
