"""The front door: concurrent requests landed together, answers after the spool, duplicates across requests,
the spool completed after a crash, read-your-writes, and the queue on /api/health."""

from __future__ import annotations

import gzip
import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from clickhouse_connect.driver.client import Client

from stacklens.ingest import front_door as front_door_module
from stacklens.ingest import writer
from stacklens.ingest.front_door import FrontDoor, close_front_doors, front_door, settle_front_doors
from stacklens.ingest.service import Attribution, BatchResult, ingest_batch
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve

ORG, PROJECT, APP_KEY = 7, 70, "stacklens_app_frontdoor"


@pytest.fixture
def warehouse(settings: Settings) -> Iterator[Client]:
    apply_migrations(settings)
    yield get_warehouse(settings)
    close_front_doors()


def error_line(event_id: str | None = None, *, title: str = "Boom") -> bytes:
    payload = {
        "event_id": event_id or uuid.uuid4().hex,
        "level": "error",
        "exception": {"values": [{"type": "ValueError", "value": title}]},
    }
    return json.dumps({"v": 1, "type": "event", "ts": "2026-01-01T00:00:00Z", "payload": payload}).encode()


def transaction_line(spans: int = 3) -> bytes:
    start = 1_760_000_000.0
    payload = {
        "event_id": uuid.uuid4().hex,
        "type": "transaction",
        "transaction": "/checkout",
        "start_timestamp": start,
        "timestamp": start + 1.0,
        "contexts": {"trace": {"op": "http.server", "trace_id": uuid.uuid4().hex, "span_id": "a" * 16}},
        "spans": [
            {"span_id": f"{n:016x}", "op": "db", "start_timestamp": start, "timestamp": start + 0.1}
            for n in range(1, spans + 1)
        ],
    }
    return json.dumps(
        {"v": 1, "type": "transaction", "ts": "2026-01-01T00:00:00Z", "payload": payload}
    ).encode()


def land(settings: Settings, body: bytes, key: str | None = None, *, figures: bool = True) -> BatchResult:
    return ingest_batch(
        settings,
        ORG,
        body,
        header_app_key=APP_KEY,
        idempotency_key=key,
        resolve=lambda raw: Attribution(PROJECT, None, 1) if raw == APP_KEY else None,
        take_events=lambda _n: None,
        figures_answered=figures,
    )


def count(client: Client, table: str) -> int:
    return int(client.query(f"SELECT count() FROM {table} WHERE org_id = {ORG}").result_rows[0][0])  # noqa: S608


def test_an_answered_event_is_stored_once_and_a_resend_is_a_duplicate(
    settings: Settings, warehouse: Client
) -> None:
    line = error_line()
    first = land(settings, line)
    again = land(settings, line)
    assert (first.accepted, first.duplicates) == (1, 0)
    assert (again.accepted, again.duplicates) == (
        0,
        1,
    )  # found among rows spooled, not yet drained, or stored
    assert settle_front_doors()
    assert count(warehouse, "events") == 1
    assert (land(settings, line).accepted, land(settings, line).duplicates) == (
        0,
        1,
    )  # found in the warehouse


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


def test_envelope_rows_are_checked_by_the_drain(settings: Settings, warehouse: Client) -> None:
    """An envelope's rows skip the warehouse look-up at answer time; the drain drops those already stored."""
    line = error_line()
    assert land(settings, line).accepted == 1
    assert settle_front_doors()
    resent = land(settings, line, figures=False)  # its answer is its event id: no look-up before it
    assert resent.accepted == 1
    assert settle_front_doors()
    assert count(warehouse, "events") == 1


def test_the_spool_is_completed_by_the_next_start(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answered rows whose process stopped before draining them land at the next start, exactly once; a drain
    cut off between its inserts is completed from its journal without doubling what it had inserted."""
    stopped = FrontDoor(settings)
    monkeypatch.setattr(stopped, "drain", lambda groups: (_ for _ in ()).throw(RuntimeError("killed")))
    monkeypatch.setitem(front_door_module._doors, front_door_module._door_key(settings), stopped)
    lines = [transaction_line(), error_line(), transaction_line(spans=5)]
    answered = land(settings, b"\n".join(lines))
    assert answered.accepted == 3
    journals = list((settings.data_dir / "front_door").glob("*.flush"))
    assert len(journals) == 1
    assert count(warehouse, "events") == 0
    stopped.close(timeout=0)

    # A second process state finds the journal; its drain is cut off after its first insert (the spans).
    restarted = FrontDoor(settings)
    inserted: list[str] = []
    real_insert = writer.insert_encoded

    def cut_off(client: Client, table: str, columns: list[str], rows: list[bytes], token: str) -> None:
        if inserted:
            raise RuntimeError("killed between two inserts")
        inserted.append(table)
        real_insert(client, table, columns, rows, token)

    monkeypatch.setattr(writer, "insert_encoded", cut_off)
    with pytest.raises(RuntimeError):
        restarted.recover()
    monkeypatch.setattr(writer, "insert_encoded", real_insert)
    assert inserted == ["spans"]
    assert count(warehouse, "spans") == 8 and count(warehouse, "transactions") == 0

    FrontDoor(settings).recover()
    assert (count(warehouse, "spans"), count(warehouse, "transactions"), count(warehouse, "events")) == (
        8,
        2,
        1,
    )
    assert list((settings.data_dir / "front_door").glob("*.flush")) == []
    FrontDoor(settings).recover()  # nothing left: nothing lands twice
    assert (count(warehouse, "spans"), count(warehouse, "transactions")) == (8, 2)


def test_fifty_concurrent_envelopes_land_in_a_handful_of_inserts(
    settings: Settings, warehouse: Client, make_org: Any
) -> None:
    """The coalescing itself, read from the engine: with merges stopped, each insert leaves a part of its own."""
    org = make_org("Coalesce")
    warehouse.command("SYSTEM STOP MERGES events")
    try:
        with serve(settings) as base:
            url = f"{base}/api/{org['project_id']}/envelope/"
            headers = {
                "Content-Encoding": "gzip",
                "X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={org['app_key']}",
            }
            barrier = threading.Barrier(50)
            answers: list[int] = []

            def send(n: int) -> None:
                event_id = uuid.uuid4().hex
                payload = {"event_id": event_id, "message": f"coalesced {n}", "level": "error"}
                body = b"\n".join(
                    [
                        json.dumps({"event_id": event_id}).encode(),
                        b'{"type":"event"}',
                        json.dumps(payload).encode(),
                    ]
                )
                barrier.wait()
                answers.append(
                    httpx.post(url, content=gzip.compress(body), headers=headers, timeout=60).status_code
                )

            threads = [threading.Thread(target=send, args=(n,)) for n in range(50)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert answers == [200] * 50
            # Read your writes: the issue list answered after the 200s counts all fifty.
            issues = httpx.get(
                f"{base}/api/projects/{org['project']}/issues",
                params={"range": "1h", "limit": 100},
                headers={"Authorization": f"Bearer {org['api_key']}"},
            ).json()["issues"]
            assert sum(issue["events"] for issue in issues) == 50
            health = httpx.get(
                f"{base}/api/health", headers={"Authorization": f"Bearer {org['api_key']}"}
            ).json()
            queue = health["front_door"]
            assert queue["rows_waiting"] == 0 and queue["drain_error"] == ""
            assert queue["flushes_per_second"] > 0 and queue["rows_per_flush"] >= 1
        parts = warehouse.query(
            "SELECT count() FROM system.parts WHERE database = currentDatabase() AND table = 'events'"
        ).result_rows[0][0]
        stored = warehouse.query(
            "SELECT count() FROM events WHERE org_id = {org:UInt64}", parameters={"org": org["org_id"]}
        ).result_rows[0][0]
    finally:
        warehouse.command("SYSTEM START MERGES events")
    assert stored == 50
    assert parts <= 10, f"50 one-event requests made {parts} inserts into events"


def test_a_full_queue_answers_503(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    door = front_door(settings)
    monkeypatch.setattr(front_door_module, "MAX_ROWS_WAITING", 3)
    monkeypatch.setattr(door, "_rows_spooled", 3)
    from stacklens.ingest.front_door import QueueFull

    with pytest.raises(QueueFull, match="rows waiting for the warehouse"):
        land(settings, error_line())
    monkeypatch.setattr(door, "_rows_spooled", 0)


def test_journal_files_are_private(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopped = FrontDoor(settings)
    monkeypatch.setattr(stopped, "drain", lambda groups: (_ for _ in ()).throw(RuntimeError("killed")))
    monkeypatch.setitem(front_door_module._doors, front_door_module._door_key(settings), stopped)
    land(settings, error_line())
    folder = settings.data_dir / "front_door"
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert [oct(path.stat().st_mode & 0o777) for path in Path(folder).glob("*.flush")] == ["0o600"]
    stopped.close(timeout=0)
    FrontDoor(settings).recover()


def test_envelope_rows_left_in_the_spool_land_at_the_next_start_once(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An envelope's rows are spooled unchecked; the next start looks them up and lands only the new ones."""
    stored_before = error_line()
    assert land(settings, stored_before).accepted == 1
    assert settle_front_doors()
    stopped = FrontDoor(settings)
    monkeypatch.setattr(stopped, "drain", lambda groups: (_ for _ in ()).throw(RuntimeError("killed")))
    monkeypatch.setitem(front_door_module._doors, front_door_module._door_key(settings), stopped)
    fresh = error_line()
    assert land(settings, fresh, figures=False).accepted == 1
    assert land(settings, stored_before, figures=False).accepted == 1  # its answer does not look it up
    stopped.close(timeout=0)
    assert count(warehouse, "events") == 1
    FrontDoor(settings).recover()
    assert count(warehouse, "events") == 2
    assert list((settings.data_dir / "front_door").glob("*.flush")) == []
