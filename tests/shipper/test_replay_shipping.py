"""Replay items on the log-file road: the browser tunnel writes them as log lines, the real shipper (a
subprocess) delivers them to the real service like every other line, and each segment lands exactly once,
even when the same envelope reaches the file twice."""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

import httpx
import pytest

import stacklens_sdk
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from stacklens_sdk.tunnel import TunnelMiddleware, browser_dsn
from tests.api.live import serve
from tests.api.sentry_live import envelope
from tests.shipper.harness import Workspace, wait_until
from tests.shipper.test_real_service import stop
from tests.stacklens.replay.recordings import activity, recording_item, replay_event, snapshot


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def service(settings: Settings) -> Iterator[str]:
    apply_migrations(settings)
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


@pytest.fixture
def tunnel(ws: tuple[Workspace, dict[str, Any]]) -> Iterator[str]:
    workspace, org = ws
    stacklens_sdk.init(app_key=org["app_key"], storage_path=workspace.logs)

    def application(environ: dict[str, object], start_response: Any) -> list[bytes]:
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b""]

    server = make_server("127.0.0.1", 0, TunnelMiddleware(application), handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/stacklens/tunnel"
    server.shutdown()
    server.server_close()
    stacklens_sdk.close()


def _segments(settings: Settings, org_id: int, replay_id: str) -> list[tuple[Any, ...]]:
    return (
        get_warehouse(settings)
        .query(
            "SELECT segment_id, encoding, payload FROM replay_segments WHERE org_id = {org:UInt64} "
            "AND replay_id = {id:UUID} ORDER BY segment_id",
            parameters={"org": org_id, "id": replay_id},
        )
        .result_rows
    )


def test_replays_travel_the_log_file_and_the_shipper_exactly_once(
    ws: tuple[Workspace, dict[str, Any]], tunnel: str, settings: Settings
) -> None:
    workspace, org = ws
    replay_id = uuid.uuid4().hex
    start = int(time.time() * 1000) - 20_000
    dsn = browser_dsn(org["app_key"])
    bodies = []
    for segment, events in ((0, snapshot(start) + activity(start + 5, 4)), (1, activity(start + 5_000, 4))):
        at = max(e["timestamp"] for e in events) / 1000
        bodies.append(
            envelope(
                [
                    (
                        {"type": "replay_event"},
                        json.dumps(replay_event(replay_id, segment, start / 1000, at)).encode(),
                    ),
                    recording_item(replay_id, segment, events),
                ],
                {"event_id": replay_id, "dsn": dsn},
            )
        )
    error = {
        "event_id": uuid.uuid4().hex,
        "platform": "javascript",
        "message": "boom",
        "tags": {"replayId": replay_id},
    }
    bodies.append(
        envelope(
            [({"type": "event"}, json.dumps(error).encode())], {"event_id": error["event_id"], "dsn": dsn}
        )
    )
    for body in [*bodies, bodies[1]]:  # segment 1 twice: the browser retried it
        assert httpx.post(tunnel, content=body).status_code == 200

    lines = [
        json.loads(x)
        for f in sorted(workspace.logs.glob("stacklens-*.log"))
        for x in f.read_text().splitlines()
    ]
    recordings = [line for line in lines if line["type"] == "replay_recording"]
    assert len(recordings) == 3 and all(r["payload"]["replay_id"] == replay_id for r in recordings)

    proc = workspace.start()
    wait_until(lambda: len(_segments(settings, org["org_id"], replay_id)) >= 2, 90, "both segments landed")
    time.sleep(1.0)  # the duplicate line, if it were to land, would be in the same or the next batch
    stop(proc)
    rows = _segments(settings, org["org_id"], replay_id)
    assert [r[0] for r in rows] == [0, 1], "each segment exactly once"
    sent = recordings[0]["payload"]["recording_base64"]
    assert base64.b64decode(rows[0][2]) == base64.b64decode(sent), "stored as the SDK compressed it"
    replays = (
        get_warehouse(settings)
        .query("SELECT count() FROM replays WHERE org_id = {org:UInt64}", parameters={"org": org["org_id"]})
        .result_rows[0][0]
    )
    assert replays == 2
