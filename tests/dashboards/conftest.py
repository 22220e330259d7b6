"""Dashboard fixtures: a test client of the whole app, and helpers to sign in and add members (the migrated
``stores`` and ``org_factory`` are in ``tests/conftest.py``)."""

from __future__ import annotations

import re
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient

from stacklens.settings import Settings
from tests.conftest import PASSWORD, org_factory, stores

# The migrated stores and the organization factory are shared by every folder: defined in tests/conftest.py,
# importable from here as before.
__all__ = ["PASSWORD", "org_factory", "stores"]  # `server` and `client` are defined below


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def server(stores: Settings) -> Iterator[str]:
    """A real uvicorn server of the whole app in a thread of this process, built as `stacklens serve` builds
    it (links on its port): its base URL."""
    from stacklens.cli.app import build_app
    from stacklens.public_url import serving

    port = _free_port()
    app = build_app(serving(stores, "127.0.0.1", port))  # as `stacklens serve` builds it: links on this port
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not instance.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert instance.started, "server did not start"
    yield f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def client(stores: Settings) -> Iterator[TestClient]:
    from stacklens.cli.app import build_app

    with TestClient(build_app(stores)) as test_client:
        yield test_client


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "page has no CSRF token"
    return match.group(1)


def sign_in(client: TestClient, email: str, password: str = PASSWORD) -> None:
    token = csrf_of(client.get("/login").text)
    response = client.post(
        "/login", data={"email": email, "password": password, "csrf_token": token}, follow_redirects=False
    )
    assert response.status_code == 303, response.text


def add_member(settings: Settings, org: dict[str, Any], role: str = "member") -> str:
    """A new person in ``org`` with ``role``; returns their e-mail (password :data:`PASSWORD`)."""
    from stacklens.control import accounts
    from stacklens.control.db import session_scope

    email = f"{role}-{uuid.uuid4().hex[:8]}@example.test"
    with session_scope(settings) as session:
        accounts.add_member(session, org["org_id"], email, PASSWORD, role)
    return email
