"""Replay items through the real envelope endpoint into the replay tables: every compression, exactly once,
and bad segments rejected one by one while the rest of the envelope lands."""

from __future__ import annotations

import base64
import json
import time
import zlib
from typing import Any

import httpx

from stacklens.control.db import session_scope
from stacklens.control.projects_settings import set_replay_enabled
from stacklens.settings import Settings
from tests.api.sentry_live import _warehouse, envelope, event_item, fresh_event, stored
from tests.stacklens.replay.recordings import (
    activity,
    new_replay_id,
    recording_item,
    replay_envelope,
    snapshot,
)


def _segments(org_id: int, replay_id: str) -> list[tuple[Any, ...]]:
    return (
        _warehouse[0]
        .query(
            "SELECT segment_id, encoding, event_count, has_full_snapshot, payload FROM replay_segments FINAL "
            "WHERE org_id = {org:UInt64} AND replay_id = {id:UUID} ORDER BY segment_id",
            parameters={"org": org_id, "id": replay_id},
        )
        .result_rows
    )


def _replay_rows(org_id: int, replay_id: str) -> list[tuple[Any, ...]]:
    return (
        _warehouse[0]
        .query(
            "SELECT segment_id, browser_name, user_email, urls FROM replays FINAL "
            "WHERE org_id = {org:UInt64} AND replay_id = {id:UUID} ORDER BY segment_id",
            parameters={"org": org_id, "id": replay_id},
        )
        .result_rows
    )


def test_segments_of_every_compression_land_once_and_keep_their_bytes(dsn_server: str, make_org) -> None:
    org = make_org()
    url = f"{dsn_server}/api/{org['project_id']}/envelope/"
    key = {"sentry_key": org["app_key"]}
    replay_id = new_replay_id()
    start = int(time.time() * 1000) - 60_000
    bodies = [
        replay_envelope(
            replay_id, 0, snapshot(start) + activity(start + 10, 5), start / 1000, compress="zlib"
        ),
        replay_envelope(replay_id, 1, activity(start + 5_000, 5), start / 1000, compress="gzip"),
        replay_envelope(replay_id, 2, activity(start + 10_000, 5), start / 1000, compress="none"),
    ]
    for body in bodies:
        answer = httpx.post(url, params=key, content=body, timeout=60)
        assert answer.status_code == 200 and answer.json() == {"id": replay_id}, answer.text
    # The same segment again, inside another envelope (another batch): nothing lands twice.
    again = replay_envelope(replay_id, 1, activity(start + 5_000, 5), start / 1000, compress="gzip")
    assert httpx.post(url, params=key, content=again + b"\n").status_code == 200

    rows = _segments(org["org_id"], replay_id)
    assert [(r[0], r[1]) for r in rows] == [(0, "zlib"), (1, "gzip"), (2, "zlib")]
    assert rows[0][3] == 1 and rows[1][3] == 0, "the first segment starts with a full snapshot"
    # Kept compressed as received: the stored zlib bytes are the SDK's own.
    sent = recording_item(replay_id, 0, snapshot(start) + activity(start + 10, 5))[1].partition(b"\n")[2]
    assert base64.b64decode(rows[0][4]) == sent, "the zlib segment is stored as the SDK sent it"
    events = json.loads(zlib.decompress(base64.b64decode(rows[2][4])))
    assert events[0]["type"] == 3 and rows[2][2] == len(events), "a plain-JSON segment is compressed once"
    meta = _replay_rows(org["org_id"], replay_id)
    assert [m[0] for m in meta] == [0, 1, 2]
    assert meta[0][1] == "Chrome" and meta[0][2] == "ada@example.test"


def test_bad_segments_are_rejected_alone_and_out_of_order_segments_land(dsn_server: str, make_org) -> None:
    org = make_org()
    url = f"{dsn_server}/api/{org['project_id']}/envelope/"
    key = {"sentry_key": org["app_key"]}
    replay_id = new_replay_id()
    start = int(time.time() * 1000) - 30_000
    _, good_body = recording_item(replay_id, 1, activity(start + 5_000, 2))
    truncated = good_body[: len(good_body) // 2]
    for bad in (truncated, b'{"segment_id": 3}\n\x78\x9c garbage'):  # cut in the zlib stream; not zlib
        event = fresh_event()
        body = envelope([event_item(event), ({"type": "replay_recording"}, bad)], {"event_id": replay_id})
        answer = httpx.post(url, params=key, content=body, timeout=60)
        assert answer.status_code == 200, answer.text
        assert stored(org["org_id"], event["event_id"]) == 1, "the error next to the bad segment landed"
    assert _segments(org["org_id"], replay_id) == []

    # Segment 1 before segment 0, each without its replay event: both land, in segment order.
    for segment, events in ((1, activity(start + 5_000, 2)), (0, snapshot(start))):
        item = recording_item(replay_id, segment, events)
        assert (
            httpx.post(url, params=key, content=envelope([item], {"event_id": replay_id})).status_code == 200
        )
    assert [r[0] for r in _segments(org["org_id"], replay_id)] == [0, 1]
    assert _replay_rows(org["org_id"], replay_id) == []

    # Only a bad segment: the answer says why, naming the item.
    only_bad = httpx.post(
        url,
        params=key,
        content=envelope([({"type": "replay_recording"}, truncated)], {"event_id": replay_id}),
    )
    assert only_bad.status_code == 400 and "truncated" in only_bad.json()["detail"], only_bad.text


def test_a_project_can_turn_replay_ingest_off(dsn_server: str, settings: Settings, make_org) -> None:
    org = make_org()
    with session_scope(settings) as session:
        assert set_replay_enabled(session, org["org_id"], org["project_id"], False)
    replay_id = new_replay_id()
    start = int(time.time() * 1000) - 10_000
    event = fresh_event()
    body = envelope(
        [event_item(event), recording_item(replay_id, 0, snapshot(start))], {"event_id": event["event_id"]}
    )
    answer = httpx.post(
        f"{dsn_server}/api/{org['project_id']}/envelope/", params={"sentry_key": org["app_key"]}, content=body
    )
    assert answer.status_code == 200
    assert stored(org["org_id"], event["event_id"]) == 1
    assert _segments(org["org_id"], replay_id) == [], "replays of a project that turned them off are skipped"
    only_replay = httpx.post(
        f"{dsn_server}/api/{org['project_id']}/envelope/",
        params={"sentry_key": org["app_key"]},
        content=envelope([recording_item(replay_id, 1, snapshot(start))], {"event_id": replay_id}),
    )
    assert only_replay.status_code == 200 and only_replay.json() == {"id": replay_id}, only_replay.text
    assert _segments(org["org_id"], replay_id) == []
