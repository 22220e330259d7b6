"""Fixtures of the SDK tests: keys, a clean sentry-sdk per test, real servers in subprocesses, log reading."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.stacklens_sdk.helpers import BROWSER_DIR, Server, make_app_key


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
