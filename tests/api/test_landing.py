"""Requests await their landing on the event loop (api/landing.py): through a real server, concurrent
one-event envelopes are all answered 200, the project's issue list never counts an event whose request was
not yet sent and always counts every event answered before the list was asked for, and each event is stored
once."""

from __future__ import annotations

import gzip
import json
import threading
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from stacklens.ingest.front_door import settle_front_doors
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.api.live import serve
from tests.api.routers.test_ingest import error_payload

CLIENTS = 6
EACH = 25


@pytest.fixture
def server(settings: Settings) -> Iterator[str]:
    from stacklens.control.db import migrate_control_store
    from stacklens.warehouse.migrations import apply_migrations

    migrate_control_store(settings)
    apply_migrations(settings)
    with serve(settings) as url:
        yield url


def _envelope(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    header = json.dumps({"event_id": payload["event_id"]}).encode()
    item = json.dumps({"type": "event", "length": len(body)}).encode()
    return gzip.compress(b"\n".join([header, item, body]) + b"\n")


def test_concurrent_envelopes_are_visible_at_their_answer_and_stored_once(
    server: str, settings: Settings, make_org
) -> None:
    org = make_org("Door")
    template = error_payload(3)
    sent: list[float] = []  # when each request was begun
    answered: list[float] = []  # when each 200 arrived
    statuses: list[int] = []
    polls: list[tuple[float, float, int]] = []  # (asked, answered, events the issue list counts)
    guard = threading.Lock()
    done = threading.Event()
    headers = {
        "Content-Encoding": "gzip",
        "Content-Type": "application/x-sentry-envelope",
        "X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={org['app_key']}",
    }

    def client() -> None:
        with httpx.Client(base_url=server, timeout=60) as http:
            for _ in range(EACH):
                body = _envelope({**template, "event_id": uuid.uuid4().hex})
                with guard:
                    sent.append(time.monotonic())
                answer = http.post(f"/api/{org['project_id']}/envelope/", content=body, headers=headers)
                with guard:
                    statuses.append(answer.status_code)
                    answered.append(time.monotonic())

    def poll(http: httpx.Client) -> None:
        asked = time.monotonic()
        page = http.get(
            f"/api/projects/{org['project']}/issues",
            params={"status": "all", "range": "24h", "limit": 100},
            headers={"Authorization": f"Bearer {org['api_key']}"},
        ).json()
        polls.append((asked, time.monotonic(), sum(issue["events"] for issue in page["issues"])))

    def poller() -> None:
        with httpx.Client(base_url=server, timeout=60) as http:
            while not done.is_set():
                poll(http)

    watcher = threading.Thread(target=poller)
    watcher.start()
    senders = [threading.Thread(target=client) for _ in range(CLIENTS)]
    for thread in senders:
        thread.start()
    for thread in senders:
        thread.join()
    done.set()
    watcher.join()
    # One more read asked after every answer arrived: a read begun while the watcher's last one was in
    # flight may have been asked before the last answers and so, rightly, count fewer.
    with httpx.Client(base_url=server, timeout=60) as http:
        poll(http)

    assert statuses == [200] * (CLIENTS * EACH)
    assert len(polls) >= 2
    for asked, got, visible in polls:
        # Never an event not yet sent; always every event answered before the list was asked for (a reader
        # in the serving process waits for the rows answered before it).
        assert visible <= sum(1 for t in sent if t <= got)
        assert visible >= sum(1 for t in answered if t <= asked)
    assert polls[-1][2] == CLIENTS * EACH
    assert settle_front_doors(timeout=30)
    stored = (
        get_warehouse(settings)
        .query(
            "SELECT count(), uniqExact(event_id) FROM events WHERE org_id = {org:UInt64}",
            parameters={"org": org["org_id"]},
        )
        .result_rows[0]
    )
    assert stored == (CLIENTS * EACH, CLIENTS * EACH)
