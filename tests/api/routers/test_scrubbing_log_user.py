"""Data scrubbing of log records over real HTTP, with sentry-python's logs API: the user a log record names
(sentry-python sends it as the attributes `user.id`, `user.email`, `user.ip_address`) follows a project's
rules written for an event's user — a `user.email` hash rule gives the record the same hash as the event, an
IP rule on `user.ip_address` leaves no address — and the product's own agent token pasted into an error
message, a breadcrumb and a log body is filtered; neither the address, the IP nor the token reaches the
warehouse's rows, the API, a page, an export (event CSV/JSON, logs CSV) or an agent's MCP tool answer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from stacklens.settings import Settings, override_settings
from tests.api.agents.test_door import run_calls, text_of
from tests.api.live import serve
from tests.conftest import make_settings
from tests.dashboards.conftest import PASSWORD, sign_in

SDK_SCRIPT = """
import sys, sentry_sdk
from sentry_sdk import logger as sentry_logger
dsn, token = sys.argv[1], sys.argv[2]
sentry_sdk.init(dsn=dsn, release="shop@2.0.0", enable_logs=True, send_default_pii=True)
sentry_sdk.set_user({"id": "u-5150", "email": "mia.log@example.com", "ip_address": "198.51.100.7"})
sentry_sdk.add_breadcrumb(category="agent", message="agent connected with " + token)
try:
    raise PermissionError("agent token refused: " + token)
except PermissionError:
    print(sentry_sdk.capture_exception())
sentry_logger.warning("nightly export called the agent API with " + token)
sentry_sdk.flush(30)
"""
EMAIL, IP = "mia.log@example.com", "198.51.100.7"
RULES = [
    {"method": "hash", "type": "email", "applies_to": "user.email"},
    {"method": "remove", "type": "ip", "applies_to": "user.ip_address"},
]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str) -> Iterator[dict[str, Any]]:
    from stacklens.control import accounts
    from stacklens.control.db import migrate_control_store, session_scope
    from stacklens.control.projects import create_project
    from stacklens.ingest.front_door import close_front_doors
    from stacklens.warehouse.client import reset_clients
    from stacklens.warehouse.migrations import apply_migrations

    settings: Settings = make_settings(tmp_path_factory.mktemp("log-scrubbing") / "data", warehouse_url)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    override_settings(settings)
    migrate_control_store(settings)
    apply_migrations(settings)
    with session_scope(settings) as session:
        org, api_key = accounts.create_organization(session, "Log Shop", "owner@logshop.test", PASSWORD)
        project, app_key = create_project(session, org.id, "Exports")
        shop: dict[str, Any] = {
            "org_slug": org.slug,
            "email": "owner@logshop.test",
            "api_key": api_key,
            "slug": project.slug,
        }
        shop |= {"project_id": project.id, "app_key": app_key}
    try:
        with serve(settings) as url:
            yield {"url": url, "org": shop, "settings": settings}
    finally:
        close_front_doors()
        reset_clients()
        override_settings(None)


def _wait_json(client: httpx.Client, path: str, ready: Any) -> Any:
    deadline = time.monotonic() + 60
    while True:
        answer = client.get(path)
        if answer.status_code == 200 and ready(answer.json()):
            return answer.json()
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.3)


def _warehouse_rows(live: dict[str, Any], table: str) -> str:
    from stacklens.warehouse.client import get_warehouse

    rows = (
        get_warehouse(live["settings"])
        .query(
            f"SELECT * FROM {table} WHERE project_id = {{project:UInt64}}",  # noqa: S608 (a fixed name)
            parameters={"project": live["org"]["project_id"]},
        )
        .result_rows
    )
    assert rows, table
    return str(rows)


def test_a_log_records_user_is_hashed_as_the_events_and_an_agent_token_is_filtered(
    live: dict[str, Any],
) -> None:
    org, url = live["org"], live["url"]
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {org['api_key']}"}, timeout=60) as api:
        api.put(f"/api/projects/{org['slug']}/scrubbing", json={"rules": RULES}).raise_for_status()
        # A real personal token of the owner: planted in the telemetry, then used by the agent below.
        made = api.post(
            "/api/tokens",
            json={"name": "exports", "scopes": ["read"], "expires_in_days": 1, "member": org["email"]},
        )
        assert made.status_code == 201, made.text
        token = made.json()["token"]
        assert token.startswith("stacklens_pat_")
        dsn = url.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("SENTRY_")}
        sent = subprocess.run(
            [sys.executable, "-c", SDK_SCRIPT, dsn, token],
            capture_output=True,
            text=True,
            timeout=90,
            env=env,
        )
        assert sent.returncode == 0, sent.stderr
        event_id = sent.stdout.split()[0]
        event = _wait_json(api, f"/api/events/{event_id}", lambda body: True)
        logs_path = f"/api/projects/{org['slug']}/logs"
        logs = _wait_json(api, logs_path, lambda body: body["rows"])
        texts = {
            "event": api.get(f"/api/events/{event_id}").text,
            "issues": api.get(f"/api/projects/{org['slug']}/issues").text,
            "logs": str(logs),
            "logs.csv": api.get(logs_path, params={"format": "csv"}).text,
            "events rows": _warehouse_rows(live, "events"),
            "logs rows": _warehouse_rows(live, "logs"),
        }
    # The event's user e-mail and the log record's are the same hash; the address is gone from both.
    user = event["payload"]["user"]
    assert re.fullmatch(r"[0-9a-f]{16}", user["email"]) and "ip_address" not in user
    [record] = logs["rows"]
    assert record["attributes"]["user.email"] == user["email"] and record["attributes"]["user.id"] == "u-5150"
    assert "user.ip_address" not in record["attributes"]
    assert record["body"] == "nightly export called the agent API with [FILTERED]"
    assert user["email"] in texts["logs.csv"] and user["email"] in texts["logs rows"]

    with httpx.Client(base_url=url, timeout=60) as browser:
        sign_in(browser, org["email"])
        issue = f"/orgs/{org['org_slug']}/projects/{org['slug']}/issues/{event['issue_id']}"
        texts["issue page"] = browser.get(issue).text
        texts["event page"] = browser.get(issue, params={"event": event_id}).text
        texts["event.csv"] = browser.get(f"{issue}/events/{event_id}.csv").text
        texts["event.json"] = browser.get(f"{issue}/events/{event_id}.json").text
        texts["logs page"] = browser.get(f"/orgs/{org['org_slug']}/projects/{org['slug']}/logs").text
    calls = [
        ("get_issue", {"issue_id": event["issue_id"]}),
        ("get_event", {"event_id": event_id}),
        ("search_logs", {"project": org["slug"]}),
    ]
    for (name, _), answer in zip(calls, run_calls(url, token, calls)[1:], strict=True):
        assert not answer.is_error, text_of(answer)
        texts[f"mcp {name}"] = text_of(answer)
    assert "agent token refused" in texts["event page"] and "agent connected with" in texts["event.json"]
    assert (
        "nightly export called" in texts["logs page"] and "nightly export called" in texts["mcp search_logs"]
    )
    assert "[FILTERED]" in texts["event.json"] and user["email"] in texts["mcp search_logs"]
    assert "shop@2.0.0" in texts["mcp get_event"]
    leaks = [
        (where, secret)
        for where, text in texts.items()
        for secret in (EMAIL, "mia.log", IP, token)
        if secret in text
    ]
    assert leaks == []
