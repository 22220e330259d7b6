"""Fixtures of the SDK tests: keys, a clean sentry-sdk per test, real servers in subprocesses, log reading."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.stacklens_sdk.helpers import Server, make_app_key


@pytest.fixture
def app_key() -> str:
    return make_app_key()


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(app_dir: Path, app: str, env: dict[str, str]) -> Server:
        server = Server(app_dir, app, env, tmp_path / f"server-{len(servers)}.log")
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
