"""Release-health sessions on the log-file road: sentry-python (through ``stacklens_sdk``'s file transport)
writes `sessions` and `session` lines, the real shipper (a subprocess) delivers them to the real service, and
each lands exactly once, even when a line reaches the file twice."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any
from wsgiref.util import setup_testing_defaults

import pytest
import sentry_sdk
from sentry_sdk.integrations.wsgi import SentryWsgiMiddleware

import stacklens_sdk
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.shipper.harness import Workspace, wait_until
from tests.shipper.test_real_service import stop


@pytest.fixture
def service(settings: Settings) -> Iterator[str]:
    apply_migrations(settings, up_to=99)
    with serve(settings) as url:
        yield url


@pytest.fixture
def ws(service: str, make_org) -> Iterator[tuple[Workspace, dict[str, Any]]]:
    org = make_org()
    workspace = Workspace(
        type("S", (), {"url": service})(), apiKey=org["api_key"], appKey=org["app_key"], timeout="30s"
    )
    yield workspace, org
    workspace.cleanup()


def _app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    if environ["PATH_INFO"] == "/crash":
        raise RuntimeError("the payment provider timed out")
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]


def _requests(paths: list[str]) -> None:
    wrapped = SentryWsgiMiddleware(_app)
    for path in paths:
        environ: dict[str, Any] = {}
        setup_testing_defaults(environ)
        environ["PATH_INFO"] = path
        with contextlib.suppress(RuntimeError):
            list(wrapped(environ, lambda *args: None))


def _sessions(settings: Settings, org_id: int) -> list[tuple[Any, ...]]:
    return (
        get_warehouse(settings)
        .query(
            "SELECT source, status, sum(quantity), any(release), any(environment), any(distinct_id) "
            "FROM sessions WHERE org_id = {org:UInt64} GROUP BY source, status ORDER BY source, status",
            parameters={"org": org_id},
        )
        .result_rows
    )


def test_sdk_sessions_travel_the_log_file_and_the_shipper_exactly_once(
    ws: tuple[Workspace, dict[str, Any]], settings: Settings
) -> None:
    workspace, org = ws
    stacklens_sdk.init(
        app_key=org["app_key"], storage_path=workspace.logs, release="worker@4.0.0", environment="production"
    )
    try:
        _requests(["/"] * 6 + ["/crash"] * 2)
        sentry_sdk.set_user({"id": "user-5"})
        sentry_sdk.start_session()
        sentry_sdk.end_session()
        sentry_sdk.flush(5)
    finally:
        stacklens_sdk.close()
    files = sorted(workspace.logs.glob("stacklens-*.log"))
    lines = [json.loads(x) for f in files for x in f.read_text().splitlines()]
    kinds = [line["type"] for line in lines]
    assert kinds.count("sessions") == 1 and kinds.count("session") == 1, kinds
    # The session line reaches the file a second time (an application that wrote it twice): one row.
    session_line = next(
        x for f in files for x in f.read_text().splitlines() if json.loads(x)["type"] == "session"
    )
    with files[-1].open("a") as handle:
        handle.write(session_line + "\n")

    proc = workspace.start()
    expected = [
        ("session", "exited", 1, "worker@4.0.0", "production", "user-5"),
        ("sessions", "crashed", 2, "worker@4.0.0", "production", ""),
        ("sessions", "exited", 6, "worker@4.0.0", "production", ""),
    ]
    wait_until(lambda: _sessions(settings, org["org_id"]) == expected, 90, "the sessions landed")
    time.sleep(1.0)  # the duplicate line, if it were to land, would be in the same or the next batch
    output = stop(proc)
    assert _sessions(settings, org["org_id"]) == expected, output[-2000:]
