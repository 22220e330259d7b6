"""The shipper's delivery (shipper/delivery.py) under a failing service: down then back, flapping, a 429
storm, an answer after the timeout, a 413 or 409 split to the line; every line lands once."""

from __future__ import annotations

import time

import pytest

from tests.shipper.harness import (
    Workspace,
    append_lines,
    finish,
    new_ids,
    settle,
    wait_until,
)
from tests.shipper.ingest_server import IngestServer


def test_server_down_then_back(ws: Workspace, server: IngestServer) -> None:
    server.stop()
    ids = new_ids(300)
    append_lines(ws.day(), ids)
    proc = ws.start()
    wait_until(lambda: "parked after 3 retries" in proc.output(), 20, "the batch to be parked")
    out = proc.output()
    assert "Retry attempt 1/3" in out and "Retry attempt 3/3" in out and "Connection refused" in out
    time.sleep(1.5)  # a few park cycles while down
    server.start()
    settle(ws, proc, set(ids))
    finish(ws, proc, set(ids))


def test_flapping_server(ws: Workspace, server: IngestServer) -> None:
    server.behaviour.flap = True
    ids = new_ids(500)
    append_lines(ws.day(), ids)
    proc = ws.start()
    settle(ws, proc, set(ids))
    assert "Retry attempt 1/3" in proc.output()
    finish(ws, proc, set(ids))


@pytest.mark.parametrize("retry_after", ["1", None])
def test_429_storm(ws: Workspace, server: IngestServer, retry_after: str | None) -> None:
    server.behaviour.status, server.behaviour.retry_after = 429, retry_after
    ids = new_ids(200)
    append_lines(ws.day(), ids)
    proc = ws.start()
    time.sleep(2.5)
    storm_requests = server.landed.statuses[429]
    if retry_after:
        assert storm_requests <= 4, storm_requests  # Retry-After: 1 honoured (about one request a second)
    else:
        assert storm_requests >= 3
    assert "Retry attempt" in proc.output()
    server.behaviour.status = 200
    settle(ws, proc, set(ids))
    finish(ws, proc, set(ids))


def test_commit_then_answer_after_timeout(ws: Workspace, server: IngestServer) -> None:
    ws.settings["timeout"] = "500ms"
    ws.write_config()
    server.behaviour.commit_then_sleep = 1.0
    ids = new_ids(120)
    append_lines(ws.day(), ids)
    proc = ws.start()
    wait_until(lambda: server.landed.key_replays >= 1, 15, "a resend after the timeout")
    server.behaviour.commit_then_sleep = 0.0
    settle(ws, proc, set(ids))
    assert "Connection timeout" in proc.output()
    assert server.landed.duplicates == 0  # every resend matched its Idempotency-Key
    finish(ws, proc, set(ids))


def test_413_splits_the_batch(ws: Workspace, server: IngestServer) -> None:
    server.behaviour.max_lines = 7
    ids = new_ids(200)
    append_lines(ws.day(), ids)
    proc = ws.start()
    settle(ws, proc, set(ids))
    assert "splitting it" in proc.output() and server.landed.statuses[413] >= 1
    finish(ws, proc, set(ids))


def test_a_body_refused_with_409_is_split_to_the_line_and_never_parks(
    ws: Workspace, server: IngestServer
) -> None:
    """A 409 (the service has the batch's Idempotency-Key for other bytes) is about the body, not the moment:
    retrying it would park the file forever, so the batch is split and a line refused alone is a dead
    letter."""
    refused = new_ids(3)
    append_lines(ws.day(), refused)
    server.behaviour.status = 409
    proc = ws.start()
    dead = ws.logs / "deadletter.ndjson"
    wait_until(lambda: dead.exists() and len(dead.read_text().splitlines()) == 3, 30, "three dead letters")
    server.behaviour.status = 200
    later = new_ids(20)
    append_lines(ws.day(), later)
    settle(ws, proc, set(later))
    finish(ws, proc, set(later))
    assert all("refused by the service: Conflict" in d for d in dead.read_text().splitlines())
    assert "parked" not in proc.output() and server.landed.statuses[409] >= 3
