"""An event stored under its receive time (its own was past the retention or ahead of the clock) shows a
note with the time it was sent, on the issue page and on a shared page (issue #13, point 2)."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from fastapi.testclient import TestClient

from stacklens.cli.app import build_app
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir
from tests.dashboards.conftest import sign_in

SHOTS = shots_dir("event_time_note")


def _ingest(client: TestClient, org: dict, when: object) -> str:
    event_id = uuid.uuid4().hex
    payload = {"event_id": event_id, "timestamp": when, "level": "error", "message": "clock <b>trouble</b>"}
    line = json.dumps({"v": 1, "type": "event", "app_key": org["app_key"], "payload": payload}).encode()
    answer = client.post("/api/ingest", content=line, headers={"Authorization": f"Bearer {org['api_key']}"})
    assert answer.status_code == 200 and answer.json()["accepted"] == 1, answer.text
    return event_id


def _issue_of(settings: Settings, event_id: str) -> int:
    return int(
        get_warehouse(settings)
        .query(
            "SELECT issue_id FROM events WHERE replaceAll(toString(event_id), '-', '') = {id:String}",
            parameters={"id": event_id},
        )
        .result_rows[0][0]
    )


def test_the_event_page_notes_a_replaced_time(client: TestClient, stores: Settings, org_factory) -> None:
    org = org_factory()
    sent = "2019-03-04T05:06:07Z"  # years past the 90-day retention
    event_id = _ingest(client, org, sent)
    sign_in(client, org["email"])
    path = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues/{_issue_of(stores, event_id)}"
    page = client.get(path)
    assert page.status_code == 200
    # The sent time in the page's one time format (payload_view._when), the original kept in the data.
    assert "This event was sent with the time <code>2019-03-04 05:06:07.000</code>" in page.text
    assert "older than this service keeps events" in page.text
    assert "clock <b>" not in page.text, "event data stays escaped"
    # An event sent with an ordinary time has no note.
    fresh_id = _ingest(client, org, time.time())
    fresh = client.get(path, params={"event": fresh_id})
    assert (
        fresh.status_code == 200 and str(uuid.UUID(fresh_id)) in fresh.text and "time-note" not in fresh.text
    )


@pytest.mark.browser
def test_the_note_as_seen_in_a_browser(chromium, stores: Settings, org_factory) -> None:
    from tests.api.live import serve

    org = org_factory()
    with serve(stores) as base, TestClient(build_app(stores)) as client:
        event_id = _ingest(client, org, time.time() + 7 * 86_400)  # a clock a week ahead
        path = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues/{_issue_of(stores, event_id)}"
        page = chromium.new_page(viewport={"width": 1280, "height": 900})
        page.goto(base + "/login")
        page.fill("input[name=email]", str(org["email"]))
        page.fill("input[name=password]", "password-123")
        page.click("button[type=submit]")
        page.goto(base + path)
        note = page.locator(".time-note")
        assert note.is_visible()
        assert "more than a minute ahead of the service's clock" in note.inner_text()
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "event-time-note.png"), full_page=False)
