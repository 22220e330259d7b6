"""Release-health sessions through a real uvicorn server, the real control store and the real embedded
warehouse: `session` and `sessions` lines and envelope items land in `sessions` exactly once, and a bad one
is rejected alone with its reason."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from clickhouse_connect.driver.exceptions import OperationalError

from stacklens.ingest import writer
from stacklens.ingest.front_door import settle_front_doors
from stacklens.ingest.timeparse import format_ms
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.api.sentry_live import envelope

DAY = 86_400.0


@pytest.fixture
def server(settings: Settings) -> Iterator[str]:
    apply_migrations(settings, up_to=99)  # the raw layer: what ingest writes
    with serve(settings) as url:
        yield url


def iso(seconds: float) -> str:
    return format_ms(seconds).replace(" ", "T") + "Z"


def line(item_type: str, payload: Any, app_key: str, ts: str = "2026-11-25T10:00:00.000Z") -> bytes:
    return json.dumps({"v": 1, "type": item_type, "app_key": app_key, "ts": ts, "payload": payload}).encode()


def browser_session(
    sid: str, status: str, at: float, *, init: bool, errors: int = 0, started: float | None = None
) -> dict[str, Any]:
    """A session update as @sentry/browser sends it (no seq; init on the first update only)."""
    return {
        "sid": sid,
        "init": init,
        "started": iso(at - 30 if started is None else started),
        "timestamp": iso(at),
        "status": status,
        "errors": errors,
        "did": "user-7",
        "duration": 30.0,
        "attrs": {
            "release": "web@2.0.0",
            "environment": "production",
            "user_agent": "Mozilla/5.0 Chrome/140",
        },
    }


def server_aggregate(minutes: list[float], release: str = "api@1.1.0") -> dict[str, Any]:
    """Request-mode session aggregates as sentry-python flushes them: one bucket per minute."""
    return {
        "attrs": {"release": release, "environment": "production"},
        "aggregates": [{"started": iso(m), "exited": 5, "errored": 2, "crashed": 1} for m in minutes],
    }


def post(base: str, api_key: str, body: bytes, key: str) -> httpx.Response:
    return httpx.post(
        base + "/api/ingest",
        content=body,
        headers={"Authorization": f"Bearer {api_key}", "Idempotency-Key": key},
        timeout=60,
    )


def rows(settings: Settings, org_id: int) -> list[tuple[Any, ...]]:
    assert settle_front_doors()  # read directly: after every row answered before
    return (
        get_warehouse(settings)
        .query(
            "SELECT source, toString(session_id), status, quantity, init, errors, distinct_id, release, "
            "environment, toString(started) FROM sessions WHERE org_id = {org:UInt64} "
            "ORDER BY source, started, timestamp, status",
            parameters={"org": org_id},
        )
        .result_rows
    )


def test_session_lines_land_once_and_a_bad_one_is_rejected_alone(
    server: str, settings: Settings, make_org
) -> None:
    org = make_org()
    key, now, sid = org["app_key"], time.time(), str(uuid.uuid4())
    body = b"\n".join(
        [
            line("session", browser_session(sid, "ok", now - 20, init=True, started=now - 30), key),
            line(
                "session",
                browser_session(sid, "crashed", now - 10, init=False, errors=1, started=now - 30),
                key,
            ),
            line("sessions", server_aggregate([now - 120, now - 60]), key),
            line("session", {"sid": str(uuid.uuid4()), "started": iso(now), "status": "ok"}, key),
            line(
                "session", {**browser_session(str(uuid.uuid4()), "ok", now, init=True), "status": "done"}, key
            ),
            line("event", {"event_id": uuid.uuid4().hex, "message": "boom", "timestamp": now}, key),
            line("client_report", {"discarded_events": []}, key),
        ]
    )
    first = post(server, org["api_key"], body, "sessions-1")
    assert first.status_code == 200, first.text
    answer = first.json()
    assert (answer["accepted"], answer["duplicates"], answer["skipped"]) == (4, 0, 1), answer
    assert answer["rejected"] == [
        {"line": 4, "error": "session: `attrs.release` is required (the release the session ran)"},
        {
            "line": 5,
            "error": 'session: `status` must be one of ok, exited, errored, crashed, abnormal, unhandled, not "done"',
        },
    ]
    landed = rows(settings, org["org_id"])
    updates = [r for r in landed if r[0] == "session"]
    assert [(r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]) for r in updates] == [
        (sid, "ok", 1, 1, 0, "user-7", "web@2.0.0", "production"),
        (sid, "crashed", 1, 0, 1, "user-7", "web@2.0.0", "production"),
    ]
    buckets = [(r[1], r[2], r[3], r[4], r[7]) for r in landed if r[0] == "sessions"]
    nil = "00000000-0000-0000-0000-000000000000"
    assert sorted(buckets) == sorted(
        [(nil, status, n, 1, "api@1.1.0") for status, n in (("crashed", 1), ("errored", 2), ("exited", 5))]
        * 2
    )

    # The same batch again: its first answer, nothing lands.
    again = post(server, org["api_key"], body, "sessions-1")
    assert again.json() == answer and rows(settings, org["org_id"]) == landed
    # The same lines in another batch (the shipper lost its tracker): every session line is a duplicate.
    other = post(server, org["api_key"], body, "sessions-2")
    assert (other.json()["accepted"], other.json()["duplicates"]) == (0, 4), other.text
    assert rows(settings, org["org_id"]) == landed
    # A later flush of the same minute with the same counts is another line time: it counts.
    later = line("sessions", server_aggregate([now - 60]), key, ts="2026-11-25T10:01:00.000Z")
    assert post(server, org["api_key"], later, "sessions-3").json()["accepted"] == 1
    assert len(rows(settings, org["org_id"])) == len(landed) + 3


def test_a_drain_failed_half_way_counts_every_session_once(
    server: str, settings: Settings, make_org, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine fails the second partition's insert of `sessions` (buckets of three months) in the front
    door's drain: the request is answered 200 (spooled), the drain is tried again and lands exactly the
    missing rows; a resend under the same key lands nothing."""
    org = make_org()
    now = time.time()
    months = [now - 64 * DAY, now - 32 * DAY, now - 60]  # 32 days apart: three different months
    body = b"\n".join(
        [
            line("sessions", server_aggregate(months), org["app_key"]),
            *(
                line("session", browser_session(str(uuid.uuid4()), "exited", m, init=True), org["app_key"])
                for m in months
            ),
        ]
    )
    real_insert = writer.insert_encoded
    calls = {"n": 0}

    def flaky(client: Any, table: str, columns: list[str], block: list[bytes], token: str) -> None:
        if table == "sessions":
            calls["n"] += 1
            if calls["n"] == 2:
                raise OperationalError("the engine refused the insert")
        real_insert(client, table, columns, block, token)

    monkeypatch.setattr(writer, "insert_encoded", flaky)
    first = post(server, org["api_key"], body, "flaky-sessions")
    assert first.status_code == 200, first.text
    assert first.json()["accepted"] == 4
    assert settle_front_doors(timeout=30)
    assert calls["n"] >= 4, "the drain failed at the second partition and was tried again whole"
    monkeypatch.setattr(writer, "insert_encoded", real_insert)
    second = post(server, org["api_key"], body, "flaky-sessions")
    assert second.json() == first.json()
    landed = rows(settings, org["org_id"])
    assert len(landed) == 9 + 3, landed  # 3 buckets x 3 statuses, 3 updates: each once
    sums = (
        get_warehouse(settings)
        .query(
            "SELECT sum(quantity), sumIf(quantity, status = 'crashed') FROM sessions WHERE org_id = {org:UInt64}",
            parameters={"org": org["org_id"]},
        )
        .result_rows[0]
    )
    assert tuple(sums) == (3 * 8 + 3, 3)
    third = post(server, org["api_key"], body, "flaky-sessions")
    assert third.json() == second.json() and rows(settings, org["org_id"]) == landed


def test_envelopes_with_sessions_land_once(server: str, settings: Settings, make_org) -> None:
    org = make_org()
    url = f"{server}/api/{org['project_id']}/envelope/"
    key = {"sentry_key": org["app_key"]}
    now, sid = time.time(), str(uuid.uuid4())
    sent_at = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    items = [
        ({"type": "session"}, json.dumps(browser_session(sid, "exited", now, init=True)).encode()),
        ({"type": "sessions"}, json.dumps(server_aggregate([now - 60], "api@9.0.0")).encode()),
        ({"type": "session"}, json.dumps({"started": iso(now), "attrs": {"release": ""}}).encode()),
    ]
    body = envelope(items, {"sent_at": sent_at})
    first = httpx.post(url, params=key, content=body, timeout=60)
    assert first.status_code == 200 and len(first.json()["id"]) == 32, first.text
    landed = rows(settings, org["org_id"])
    assert sorted((r[0], r[2], r[3], r[7]) for r in landed) == [
        ("session", "exited", 1, "web@2.0.0"),
        ("sessions", "crashed", 1, "api@9.0.0"),
        ("sessions", "errored", 2, "api@9.0.0"),
        ("sessions", "exited", 5, "api@9.0.0"),
    ]
    # The SDK sends the same envelope again (its offline queue): nothing lands twice.
    assert httpx.post(url, params=key, content=body, timeout=60).status_code == 200
    assert rows(settings, org["org_id"]) == landed
    # An envelope of only a bad session says why (nothing of it was kept).
    bad = envelope([({"type": "session"}, json.dumps({"started": iso(now), "status": "ok"}).encode())])
    refused = httpx.post(url, params=key, content=bad, timeout=60)
    assert refused.status_code == 400 and "`attrs.release` is required" in refused.json()["detail"], (
        refused.text
    )
    assert rows(settings, org["org_id"]) == landed
