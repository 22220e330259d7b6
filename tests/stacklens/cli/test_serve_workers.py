"""Two `stacklens serve --no-migrate` workers over one PostgreSQL control store and one Redis, as behind a
load balancer: what one worker changes, the other sees at once — a regenerated API key, the rate-limit bucket
of a key, the sign-in throttle, a dashboard session and its end.

Each worker has a data directory of its own (nothing shared on disk). The warehouse URL names a ClickHouse
server that is not running: an embedded warehouse belongs to one process and cannot serve two workers (in
production they share a ClickHouse server), and nothing checked here touches the warehouse.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text

from stacklens.settings import Settings
from tests.conftest import TEST_SECRET, emptied_once, postgres_schema_url, worker_redis_url

ROOT = Path(__file__).resolve().parents[3]
PASSWORD = "password-123"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, dict[str, object]]]:
    """A migrated control store in a fresh PostgreSQL schema with one organization."""
    from stacklens.control import accounts
    from stacklens.control.db import dispose_engines, get_engine, migrate_control_store, session_scope

    base = os.environ.get("STACKLENS_TEST_POSTGRES_URL") or pytest.fail(
        "STACKLENS_TEST_POSTGRES_URL is not set"
    )
    redis_url = emptied_once(
        worker_redis_url(
            os.environ.get("STACKLENS_TEST_REDIS_URL") or pytest.fail("STACKLENS_TEST_REDIS_URL is not set")
        )
    )
    url, schema = postgres_schema_url(base)
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("stores"),
        database_url=url,
        redis_url=redis_url,
        secret_key=TEST_SECRET,
        warehouse_url=f"http://127.0.0.1:{_free_port()}",
    )
    migrate_control_store(settings)
    with session_scope(settings) as session:
        org, api_key = accounts.create_organization(session, "Two Workers", "ops@workers.test", PASSWORD)
        accounts.set_quota(session, org.id, requests_per_second=1)
        org_id = org.id
    try:
        yield settings, {"org_id": org_id, "api_key": api_key, "email": "ops@workers.test"}
    finally:
        with get_engine(settings).begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        dispose_engines()


@pytest.fixture(scope="module")
def workers(stores, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    settings, _ = stores
    procs, urls = [], []
    for n in range(2):
        port = _free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
        env.update(
            {
                "PYTHONPATH": str(ROOT),
                "STACKLENS_DATA_DIR": str(tmp_path_factory.mktemp(f"worker{n}")),
                "STACKLENS_DATABASE_URL": str(settings.database_url),
                "STACKLENS_REDIS_URL": str(settings.redis_url),
                "STACKLENS_WAREHOUSE_URL": str(settings.warehouse_url),
                "STACKLENS_SECRET_KEY": TEST_SECRET,
                "STACKLENS_RUN_SCHEDULES": "false",
                "STACKLENS_INGEST_WORKERS": "0",
                "STACKLENS_LOGIN_THROTTLE_AFTER": "2",
                "STACKLENS_LOGIN_THROTTLE_BASE_SECONDS": "60",
            }
        )
        command = [
            "-m",
            "stacklens.cli.main",
            "serve",
            "--no-migrate",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ]
        procs.append(
            subprocess.Popen(
                [sys.executable, *command],
                env=env,
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        )
        urls.append(f"http://127.0.0.1:{port}")
    try:
        for proc, url in zip(procs, urls, strict=True):
            deadline = time.monotonic() + 90
            while True:
                assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
                try:
                    httpx.get(f"{url}/login", timeout=2)
                    break
                except httpx.HTTPError:
                    assert time.monotonic() < deadline, f"{url} did not answer within 90 s"
                    time.sleep(0.3)
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.communicate(timeout=30)


def _api(url: str, key: str, method: str = "GET", path: str = "/api/keys/api") -> httpx.Response:
    return httpx.request(method, f"{url}{path}", headers={"Authorization": f"Bearer {key}"}, timeout=10)


def _csrf(page: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert match, "page has no CSRF token"
    return match.group(1)


def _sign_in(client: httpx.Client, email: str, password: str) -> httpx.Response:
    token = _csrf(client.get("/login").text)
    return client.post("/login", data={"email": email, "password": password, "csrf_token": token})


def test_a_key_regenerated_on_one_worker_is_the_key_on_the_other(workers, stores) -> None:
    a, b = workers
    old = str(stores[1]["api_key"])
    time.sleep(1.1)  # a full bucket (one request per second)
    assert _api(b, old).status_code == 200
    time.sleep(1.1)
    answer = _api(a, old, "POST", "/api/keys/api/regenerate")
    assert answer.status_code == 200, answer.text
    new = answer.json()["api_key"]
    assert _api(b, old).status_code == 401  # the old key stops on the other worker at once
    assert _api(b, new).status_code == 200
    stores[1]["api_key"] = new


def test_workers_spend_one_rate_limit_bucket(workers, stores) -> None:
    """One request per second for the key: once worker A refuses, worker B refuses too (its own bucket would
    still be full), and both say when to come back."""
    key = str(stores[1]["api_key"])
    a, b = workers
    time.sleep(1.1)  # the bucket is full again
    first = [_api(a, key) for _ in range(3)]
    assert [r.status_code for r in first][:1] == [200] and first[-1].status_code == 429
    other = _api(b, key)
    assert other.status_code == 429, "worker B kept a bucket of its own"
    assert int(first[-1].headers["Retry-After"]) >= 1 and int(other.headers["Retry-After"]) >= 1
    time.sleep(1.1)
    assert _api(b, key).status_code == 200  # refilled, for both


def test_sign_in_failures_on_one_worker_lock_the_account_on_the_other(workers, stores) -> None:
    email = f"locked-{time.monotonic_ns()}@workers.test"
    with httpx.Client(base_url=workers[0], timeout=10) as first:
        assert _sign_in(first, email, "wrong password").status_code == 401
        assert _sign_in(first, email, "wrong password").status_code == 429  # the second failure locks
    with httpx.Client(base_url=workers[1], timeout=10) as second:
        assert _sign_in(second, email, "wrong password").status_code == 429


def test_a_session_begun_on_one_worker_works_and_ends_on_the_other(workers, stores) -> None:
    a, b = workers
    email = str(stores[1]["email"])
    with httpx.Client(base_url=a, timeout=10) as first:
        assert _sign_in(first, email, PASSWORD).status_code == 303
        cookie = first.cookies.get("stacklens_session")
        assert cookie
    with httpx.Client(base_url=b, timeout=10, cookies={"stacklens_session": cookie}) as second:
        account = second.get("/account")
        assert account.status_code == 200 and email in account.text
        assert second.post("/logout", data={"csrf_token": _csrf(account.text)}).status_code == 303
    with httpx.Client(base_url=a, timeout=10, cookies={"stacklens_session": cookie}) as replay:
        after = replay.get("/account")
        assert after.status_code == 303 and after.headers["location"].startswith("/login")
