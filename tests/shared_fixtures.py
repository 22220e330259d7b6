"""Fixtures any folder's tests ask for by name, registered for the whole suite by ``tests/conftest.py``
(``pytest_plugins``): a real server of the whole app, a test client of it, a real server for the
Sentry-protocol tests, and the @sentry/browser bundle. A test names the fixture; it never imports it."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from fastapi.testclient import TestClient

from stacklens.settings import Settings
from tests.stacklens_sdk.helpers import BROWSER_DIR


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _run(app: object, port: int, wait: float) -> tuple[uvicorn.Server, threading.Thread]:
    instance = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + wait
    while not instance.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert instance.started, "server did not start"
    return instance, thread


@pytest.fixture
def server(stores: Settings) -> Iterator[str]:
    """A real uvicorn server of the whole app in a thread of this process, built as `stacklens serve` builds
    it (links on its port): its base URL."""
    from stacklens.cli.app import build_app
    from stacklens.public_url import serving

    port = _free_port()
    instance, thread = _run(build_app(serving(stores, "127.0.0.1", port)), port, 20)
    yield f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def app_client(stores: Settings) -> Iterator[TestClient]:
    """A test client of the whole app (API and pages), its lifespan run."""
    from stacklens.cli.app import build_app

    with TestClient(build_app(stores)) as test_client:
        yield test_client


@pytest.fixture
def client(app_client: TestClient) -> TestClient:
    """The whole app's test client, under the name most tests use (tests/api/routers/ names the API's alone
    so; a module there that reads pages too asks for ``app_client``)."""
    return app_client


@pytest.fixture
def dsn_server(settings: Settings) -> Iterator[str]:
    """A real server of the API for the Sentry-protocol tests (every warehouse table migrated: the issue list
    reads the dashboards' daily tables): its base URL."""
    from api.app import create_app
    from stacklens.public_url import serving
    from stacklens.warehouse.client import get_warehouse
    from stacklens.warehouse.migrations import apply_migrations
    from tests.api.sentry_live import AnsweredRows, _warehouse

    apply_migrations(settings)
    _warehouse[:] = [AnsweredRows(get_warehouse(settings))]
    port = _free_port()
    instance, thread = _run(create_app(serving(settings, "127.0.0.1", port)), port, 30)
    yield f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(timeout=15)


@pytest.fixture(scope="session")
def sentry_browser_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """@sentry/browser from the npm registry (``npm ci`` when node_modules is missing), bundled by esbuild."""
    npm = shutil.which("npm")
    assert npm, "npm is required for the browser test (Node 20 + npm)"
    if not (BROWSER_DIR / "node_modules" / "@sentry" / "browser").is_dir():
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=BROWSER_DIR,
            check=True,
            capture_output=True,
            timeout=300,
        )
    out = tmp_path_factory.mktemp("bundle") / "sentry.bundle.js"
    esbuild = BROWSER_DIR / "node_modules" / ".bin" / "esbuild"
    subprocess.run(
        [str(esbuild), "entry.js", "--bundle", "--format=iife", "--target=es2020", f"--outfile={out}"],
        cwd=BROWSER_DIR,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out
