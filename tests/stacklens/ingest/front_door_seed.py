"""Requests for the front door's tests (tests/stacklens/ingest/test_front_door*.py): error and transaction
lines, a batch landed through the ingest service, and a table's count for the test organization."""

from __future__ import annotations

import json
import uuid

from clickhouse_connect.driver.client import Client

from stacklens.ingest.service import Admitted, Attribution, BatchResult, admit_batch
from stacklens.settings import Settings

ORG, PROJECT, APP_KEY = 7, 70, "stacklens_app_frontdoor"


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


def admit(
    settings: Settings, body: bytes, key: str | None = None, *, figures: bool = True
) -> BatchResult | Admitted:
    """``body`` prepared and within its quotas, not yet handed to the front door (a replay: its answer)."""
    return admit_batch(
        settings,
        ORG,
        body,
        header_app_key=APP_KEY,
        idempotency_key=key,
        resolve=lambda raw: Attribution(PROJECT, None, 1) if raw == APP_KEY else None,
        take_events=lambda _n: None,
        figures_answered=figures,
    )


def land(settings: Settings, body: bytes, key: str | None = None, *, figures: bool = True) -> BatchResult:
    """``body`` landed as a request thread lands it (waiting in this thread for the front door)."""
    admitted = admit(settings, body, key, figures=figures)
    return admitted if isinstance(admitted, BatchResult) else admitted.land()


def count(client: Client, table: str) -> int:
    return int(client.query(f"SELECT count() FROM {table} WHERE org_id = {ORG}").result_rows[0][0])  # noqa: S608
