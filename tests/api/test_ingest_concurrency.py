"""Concurrent `POST /api/ingest` requests on a real uvicorn server: the same events land once, whether the
requests share a batch id or not."""

from __future__ import annotations

import gzip
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from api.app import create_app
from stacklens.ingest.front_door import settle_front_doors
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.routers.test_ingest import count, error_payload, line


@pytest.fixture
def live_server(settings: Settings) -> Iterator[str]:
    """The app on a real uvicorn server in this process (its own port), sharing this test's warehouse."""
    apply_migrations(settings, up_to=99)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=15)


@pytest.mark.parametrize("same_batch_id", [False, True], ids=["two-batch-ids", "one-batch-id"])
def test_concurrent_requests_with_the_same_events_land_them_once(
    live_server: str, settings: Settings, make_org, same_batch_id: bool
) -> None:
    org = make_org()
    payload = error_payload(7)
    events = []
    for _ in range(150):
        payload = {**payload, "event_id": uuid.uuid4().hex}
        events.append(line(payload, org["app_key"]))
    body = gzip.compress(b"\n".join(events))
    barrier = threading.Barrier(2)
    answers: list[dict[str, Any]] = []

    def send(index: int) -> None:
        batch_id = "same-batch" if same_batch_id else f"batch-{index}"
        headers = {
            "Authorization": f"Bearer {org['api_key']}",
            "Content-Encoding": "gzip",
            "Idempotency-Key": batch_id,
        }
        with httpx.Client(base_url=live_server, timeout=60) as http:
            barrier.wait(timeout=30)
            response = http.post("/api/ingest", content=body, headers=headers)
        assert response.status_code == 200, response.text
        answers.append(response.json())

    threads = [threading.Thread(target=send, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)
    assert len(answers) == 2
    # Answered together, the two were answered once spooled: read here, outside the server's readers, the
    # rows are waited for as those readers wait (docs/decisions.md, the front door).
    assert settle_front_doors(timeout=30)
    assert count(settings, "events", org["org_id"]) == 150
    rows = (
        get_warehouse(settings)
        .query("SELECT count() FROM events WHERE org_id = {org:UInt64}", parameters={"org": org["org_id"]})
        .result_rows[0][0]
    )
    assert rows == 150, "no event row was inserted twice"
    if same_batch_id:
        assert [a["accepted"] for a in answers] == [150, 150], "the second answers with the first's figures"
    else:
        assert sorted((a["accepted"], a["duplicates"]) for a in answers) == [(0, 150), (150, 0)]
