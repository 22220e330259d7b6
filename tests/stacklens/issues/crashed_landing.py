"""Batches landed through the ingest service, and a landing cut off by a crash between the events and their
views.

A process killed while the engine runs an INSERT's materialized views keeps the stored rows and loses the
blocks of the views that had not committed; the attempt never writes its batch record.
:func:`land_with_views_lost` leaves the same state without killing anything: the views are detached while
the batch lands, and its record is removed, as if the attempt had stopped before writing it."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from clickhouse_connect.driver.client import Client

from stacklens.ingest.front_door import settle_front_doors
from stacklens.ingest.service import Attribution, BatchResult, ingest_batch
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations

ORG, PROJECT, APP_KEY = 5, 50, "stacklens_app_counters"


@pytest.fixture
def warehouse(settings: Settings) -> Client:
    """Every table: the issue list's daily tables are insert-time counters too."""
    apply_migrations(settings)
    return get_warehouse(settings)


def event_lines(count: int, start: int = 0, now: datetime | None = None) -> bytes:
    """``count`` error lines (each its own event id and time over the last 40 hours) spread over 3 issues,
    7 users (and some without one), 2 releases, 2 environments and a tag."""
    now = now or datetime.now(UTC)
    lines = []
    for n in range(start, start + count):
        payload: dict[str, object] = {
            "event_id": uuid.uuid4().hex,
            "level": "error" if n % 5 else "warning",
            "release": f"shop@1.{n % 2}.0",
            "environment": "production" if n % 4 else "staging",
            "timestamp": (now - timedelta(minutes=(n * 37) % 2400, milliseconds=n)).isoformat(),
            "tags": {"region": f"eu-{n % 3}"},
            "exception": {"values": [{"type": f"Error{n % 3}", "value": f"bad value {n}"}]},
        }
        if n % 6:
            payload["user"] = {"id": f"user-{n % 7}"}
        lines.append(json.dumps({"v": 1, "type": "event", "ts": "2026-01-01T00:00:00Z", "payload": payload}))
    return "\n".join(lines).encode()


def land(settings: Settings, body: bytes, key: str | None) -> BatchResult:
    """One batch through the ingest service, as the shipper's request lands it, then drained: these tests read
    the warehouse directly, not through a reader that waits for its own writes."""
    result = ingest_batch(
        settings,
        ORG,
        body,
        header_app_key=APP_KEY,
        idempotency_key=key,
        resolve=lambda raw: Attribution(PROJECT, None, 1) if raw == APP_KEY else None,
        take_events=lambda _n: None,
    )
    assert settle_front_doors()
    return result


def transaction_lines(count: int, now: float) -> bytes:
    """``count`` page loads of the last minutes, with a script span each."""
    lines = []
    for n in range(count):
        start = now - 60 - n
        payload = {
            "event_id": uuid.uuid4().hex,
            "type": "transaction",
            "transaction": "/checkout",
            "start_timestamp": start,
            "timestamp": start + 1.2,
            "release": "shop@1.0.0",
            "contexts": {
                "trace": {"op": "pageload", "trace_id": uuid.uuid4().hex, "span_id": uuid.uuid4().hex[:16]}
            },
            "spans": [
                {
                    "span_id": uuid.uuid4().hex[:16],
                    "op": "resource.script",
                    "description": "/app.js",
                    "start_timestamp": start + 0.1,
                    "timestamp": start + 0.5,
                }
            ],
        }
        lines.append(
            json.dumps({"v": 1, "type": "transaction", "ts": "2026-01-01T00:00:00Z", "payload": payload})
        )
    return "\n".join(lines).encode()


def views_of(client: Client, table: str) -> list[str]:
    """The materialized views fed by inserts into ``table``."""
    rows = client.query(
        "SELECT dependencies_table FROM system.tables WHERE database = currentDatabase() AND name = {t:String}",
        parameters={"t": table},
    ).result_rows
    return sorted(str(view) for view in rows[0][0])


def land_with_views_lost(
    settings: Settings, client: Client, body: bytes, key: str, views: list[str] | None = None
) -> BatchResult:
    """Land ``body`` with ``views`` (default: every view of `events`) missing its blocks, and no batch
    record."""
    lost = views_of(client, "events") if views is None else views
    for view in lost:
        client.command(f"DETACH TABLE {view}")
    try:
        result = land(settings, body, key)
    finally:
        for view in lost:
            client.command(f"ATTACH TABLE {view}")
    client.command(
        "DELETE FROM ingest_batches WHERE org_id = {org:UInt64} AND batch_id = {batch:String}",
        parameters={"org": ORG, "batch": key},
    )
    return result
