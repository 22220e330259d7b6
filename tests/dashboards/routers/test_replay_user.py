"""A replay's header names its user as the issue page does (issue 71 point 5): the e-mail (else the name) with
the id beside it, taken from the project's events of that id when the replay's own events carry the id alone
(as the browser SDK's often do); the id alone when nothing else is known; "anonymous user" without one."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from typing import Any

from fastapi.testclient import TestClient

from stacklens.settings import Settings
from tests.api.sentry_live import envelope
from tests.dashboards.conftest import sign_in
from tests.dashboards.landing import land, sdk_event
from tests.dashboards.routers.test_replays import _land
from tests.stacklens.replay.recordings import activity, new_replay_id, recording_item, replay_event, snapshot


def _declined() -> None:
    raise RuntimeError("card declined")


def _replay_of(settings: Settings, org: dict[str, Any], user: dict[str, str] | None) -> str:
    replay_id = new_replay_id()
    start = int(time.time() * 1000) - 120_000
    events = snapshot(start) + activity(start + 5, 8)
    at = max(e["timestamp"] for e in events) / 1000
    event = replay_event(replay_id, 0, start / 1000, at, user=user or {})
    items = [
        ({"type": "replay_event"}, json.dumps(event).encode()),
        recording_item(replay_id, 0, events, "zlib"),
    ]
    _land(settings, org, envelope(items, {"event_id": replay_id, "sent_at": datetime.now(UTC).isoformat()}))
    return replay_id


def _header_user(client: TestClient, base: str, replay_id: str) -> str:
    page = client.get(f"{base}/{replay_id}")
    assert page.status_code == 200, page.text
    found = re.search(r'<span id="replay-user">(.*?)</span> ·', page.text, re.S)
    assert found is not None
    return re.sub(r"<[^>]+>", "", found.group(1)).strip()


def test_the_replay_header_names_its_user(client: TestClient, stores: Settings, org_factory) -> None:
    org = org_factory()
    # The browser's errors carry who the user is (Sentry.setUser); its replay events the id alone.
    land(
        org["org_id"],
        org["project_id"],
        [sdk_event(_declined, user={"id": "u-7", "email": "bo@example.test"})],
    )
    by_id = _replay_of(stores, org, {"id": "u-7"})
    own = _replay_of(stores, org, {"id": "u-8", "email": "cy@example.test"})
    bare = _replay_of(stores, org, {"id": "u-9"})
    anonymous = _replay_of(stores, org, None)
    sign_in(client, org["email"])
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}/replays"
    assert _header_user(client, base, by_id) == "bo@example.test (id u-7)"
    assert _header_user(client, base, own) == "cy@example.test (id u-8)"
    assert _header_user(client, base, bare) == "u-9"
    assert _header_user(client, base, anonymous) == "anonymous user"
