"""The replay pages through the app: list filters, the player page and its recording, organization
isolation, bad input in words, and the project setting that turns replay ingest off."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import Any

from fastapi.testclient import TestClient

from stacklens.control.db import session_scope
from stacklens.control.models import Project
from stacklens.ingest.envelope import parse_envelope
from stacklens.ingest.envelope_lines import envelope_lines
from stacklens.ingest.service import ingest_batch
from stacklens.ingest.workers import AppKeyResolver
from stacklens.settings import Settings
from tests.dashboards.conftest import add_member, csrf_of, sign_in
from tests.stacklens.replay.recordings import activity, new_replay_id, replay_envelope, snapshot


def _land(settings: Settings, org: dict[str, Any], body: bytes) -> None:
    lines = envelope_lines(parse_envelope(body), org["app_key"], datetime.now(UTC))
    ingest_batch(
        settings,
        org["org_id"],
        lines.lines,
        header_app_key=None,
        idempotency_key=lines.idempotency_key,
        resolve=AppKeyResolver(settings, org["org_id"]),
        take_events=lambda n: None,
    )


def _replay(settings: Settings, org: dict[str, Any]) -> str:
    replay_id = new_replay_id()
    start = int(time.time() * 1000) - 120_000
    _land(
        settings, org, replay_envelope(replay_id, 0, snapshot(start) + activity(start + 5, 8), start / 1000)
    )
    _land(settings, org, replay_envelope(replay_id, 1, activity(start + 10_000, 12), start / 1000))
    return replay_id


def test_list_player_and_recording(client: TestClient, stores: Settings, org_factory) -> None:
    org, other = org_factory(), org_factory("Other")
    replay_id = _replay(stores, org)
    foreign = _replay(stores, other)
    sign_in(client, org["email"])
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}/replays"

    listing = client.get(base)
    assert listing.status_code == 200 and f"{base}/{replay_id}" in listing.text
    assert foreign not in listing.text
    assert "0:21" in listing.text and "Chrome 130" in listing.text and "ada@example.test" in listing.text
    assert replay_id not in client.get(base, params={"browser": "Firefox"}).text
    assert replay_id in client.get(base, params={"user": "ADA@"}).text
    assert replay_id in client.get(base, params={"url": "checkout", "min_duration": "20"}).text
    assert replay_id not in client.get(base, params={"min_duration": "60"}).text
    assert replay_id not in client.get(base, params={"errors": "1"}).text
    assert replay_id not in client.get(base, params={"release": "shop@1.3.0"}).text  # it names no release
    bad = client.get(base, params={"min_duration": "soon"})
    assert bad.status_code == 400 and "min_duration must be a whole number of seconds" in bad.text
    assert "range must be one of" in client.get(base, params={"range": "1y"}).text

    page = client.get(f"{base}/{replay_id}", params={"t": "3"})
    assert page.status_code == 200
    assert 'data-start="3.000"' in page.text and "rrweb-player.umd.min.js" in page.text
    assert page.text.count('class="replay-mark mark-click"') >= 3
    assert "body &gt; button#pay" in page.text, "breadcrumbs beside the player, escaped"
    recording = client.get(f"{base}/{replay_id}/recording.json")
    events = json.loads(recording.content)
    assert recording.status_code == 200 and events[1]["type"] == 2 and len(events) > 200

    for path in (f"{base}/{foreign}", f"{base}/{foreign}/recording.json", f"{base}/not-a-replay"):
        assert client.get(path).status_code == 404, path


def test_owner_turns_replay_ingest_off(client: TestClient, stores: Settings, org_factory) -> None:
    org = org_factory()
    member = add_member(stores, org)
    settings_path = f"/orgs/{org['org_slug']}/projects/{org['project']}/settings"
    sign_in(client, member)
    token = csrf_of(client.get(f"/orgs/{org['org_slug']}/projects/{org['project']}/issues").text)
    refused = client.post(settings_path + "/replays", data={"enabled": "0", "csrf_token": token})
    assert refused.status_code == 403
    client.cookies.clear()
    sign_in(client, org["email"])
    page = client.get(settings_path)
    assert "Replay ingest is <strong>on</strong>" in page.text
    done = client.post(
        settings_path + "/replays",
        data={"enabled": "0", "csrf_token": csrf_of(page.text)},
        follow_redirects=False,
    )
    assert done.status_code == 303
    with session_scope(stores) as session:
        assert session.get(Project, org["project_id"]).replay_enabled is False
    assert "Replay ingest is <strong>off</strong>" in client.get(settings_path).text
    replay_id = _replay(stores, org)
    listing = client.get(f"/orgs/{org['org_slug']}/projects/{org['project']}/replays")
    assert replay_id not in listing.text and "No replays match" in listing.text


def test_view_replay_only_when_a_playable_segment_covers_the_error(stores: Settings, org_factory) -> None:
    from datetime import timedelta

    from stacklens.replay.reads import replay_offset_for
    from stacklens.warehouse.client import get_warehouse

    org = org_factory()
    replay_id = _replay(stores, org)  # segment 0 (snapshot) from start, activity until start + 22 s
    client = get_warehouse(stores)
    span = client.query(
        "SELECT min(timestamp), max(end_timestamp) FROM replay_segments WHERE replay_id = {r:UUID}",
        parameters={"r": replay_id},
    ).result_rows[0]
    started, ended = span
    at = started + timedelta(seconds=12)
    offset = replay_offset_for(client, org["org_id"], org["project_id"], replay_id, at)
    assert offset is not None and abs(offset - 7.0) < 0.01, "opens five seconds before the error"
    assert (
        replay_offset_for(client, org["org_id"], org["project_id"], replay_id, started + timedelta(seconds=2))
        == 0
    )
    assert (
        replay_offset_for(client, org["org_id"], org["project_id"], replay_id, ended + timedelta(minutes=5))
        is None
    )
    assert (
        replay_offset_for(client, org["org_id"], org["project_id"], replay_id, started - timedelta(minutes=1))
        is None
    )
    assert replay_offset_for(client, org["org_id"], org["project_id"], new_replay_id(), at) is None
    assert replay_offset_for(client, org["org_id"] + 1, org["project_id"], replay_id, at) is None, "isolation"
    # Only later segments arrived (no page snapshot): nothing playable yet, so no View Replay.
    later = new_replay_id()
    start = int(time.time() * 1000) - 30_000
    _land(stores, org, replay_envelope(later, 1, activity(start + 5_000, 5), start / 1000))
    assert replay_offset_for(client, org["org_id"], org["project_id"], later, at) is None
