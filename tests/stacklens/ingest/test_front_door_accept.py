"""The front door's acceptor (stacklens/ingest/front_door_accept.py): duplicates across concurrent requests
dropped by one look-up, and a replay answered with its first figures."""

from __future__ import annotations

import threading
import uuid

from clickhouse_connect.driver.client import Client

from stacklens.ingest.front_door import settle_front_doors
from stacklens.ingest.service import BatchResult
from stacklens.settings import Settings
from tests.stacklens.ingest.front_door_seed import (
    count,
    error_line,
    land,
)


def test_the_same_event_in_concurrent_requests_lands_once(settings: Settings, warehouse: Client) -> None:
    event_id = uuid.uuid4().hex
    results: list[BatchResult] = []
    barrier = threading.Barrier(12)

    def send() -> None:
        barrier.wait()
        results.append(land(settings, error_line(event_id)))

    threads = [threading.Thread(target=send) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted((r.accepted, r.duplicates) for r in results) == [(0, 1)] * 11 + [(1, 0)]
    assert settle_front_doors()
    assert count(warehouse, "events") == 1


def test_an_idempotency_key_answers_the_first_figures(settings: Settings, warehouse: Client) -> None:
    body = error_line() + b"\n" + error_line()
    first = land(settings, body, "batch-one")
    replay = land(settings, body, "batch-one")
    assert (first.accepted, first.replayed) == (2, False)
    assert (replay.accepted, replay.replayed) == (2, True)
    assert settle_front_doors()
    assert land(settings, body, "batch-one").replayed
    assert count(warehouse, "events") == 2
