"""Regenerating the API key while requests hammer the old one, through a real `stacklens serve`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from stacklens.control import accounts
from stacklens.control.db import dispose_engines, get_engine, session_scope
from stacklens.control.keys.lifecycle import regenerate_api_key
from stacklens.settings import Settings
from tests.conftest import TEST_SECRET, postgres_schema_url

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(data_dir: Path, database_url: str | None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(
        STACKLENS_DATA_DIR=str(data_dir), STACKLENS_SECRET_KEY=TEST_SECRET, STACKLENS_RUN_SCHEDULES="false"
    )
    if database_url:
        env["STACKLENS_DATABASE_URL"] = database_url
    # The server's log goes to a file: a pipe nobody reads could fill up and stall the server.
    log = data_dir.parent / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "stacklens.cli.main", "serve", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {log.read_text()}")
        try:
            if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise AssertionError("server did not answer within 90 s")


@pytest.fixture(params=["sqlite", "postgres"])
def server(request: pytest.FixtureRequest, tmp_path: Path):
    data_dir = tmp_path / "server"
    database_url, schema = None, None
    if request.param == "postgres":
        database_url, schema = postgres_schema_url(request.getfixturevalue("postgres_url"))
    process, url = start_server(data_dir, database_url)
    settings = Settings(data_dir=data_dir, secret_key=TEST_SECRET, database_url=database_url)
    try:
        yield url, settings
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        if schema:
            from sqlalchemy import text

            with get_engine(settings).begin() as connection:
                connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        dispose_engines()


def test_no_request_with_the_old_key_is_accepted_after_regeneration(server) -> None:
    url, settings = server
    with session_scope(settings) as session:
        org, old_key = accounts.create_organization(session, "Race", "race@example.test", "password-123")
        accounts.set_quota(session, org.id, requests_per_second=1_000_000)

    results: list[tuple[float, int]] = []
    stop = threading.Event()

    def hammer() -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {old_key}"}, timeout=10) as client:
            while not stop.is_set():
                sent = time.monotonic()
                status = client.get("/api/auth/verify").status_code
                results.append((sent, status))

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for thread in threads:
        thread.start()
    # Regenerate once the old key has been seen to work (a loaded machine may take longer than a fixed wait).
    deadline = time.monotonic() + 30
    while not any(status == 200 for _, status in list(results)) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    with session_scope(settings) as session:
        new_key = regenerate_api_key(session, org.id)
    committed = time.monotonic()
    # Let requests sent after the commit come back (a loaded machine may take more than a second for one).
    deadline = time.monotonic() + 30
    while sum(sent >= committed for sent, _ in list(results)) < 8 and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    for thread in threads:
        thread.join()

    before = [status for sent, status in results if sent < committed]
    after = [status for sent, status in results if sent >= committed]
    assert 200 in before, "the old key never worked: the test proves nothing"
    assert after and set(after) == {401}, f"accepted after regeneration: {after.count(200)} of {len(after)}"
    response = httpx.get(f"{url}/api/auth/verify", headers={"Authorization": f"Bearer {new_key}"})
    assert response.status_code == 200 and response.json()["organization"] == "Race"
