"""Page loads (with their script spans) written to the raw tables and folded into the states the budgets read
(the page-load facts and periods the performance views read) — what the pipelines do, without running them."""

from __future__ import annotations

import math
import struct
import uuid
from datetime import UTC, datetime, timedelta

from clickhouse_connect.driver.client import Client

from tests.pipelines.pipeline_seed import SPAN_COLS, TX_COLS
from tests.stacklens.performance.perf_seed import build_facts


def page_loads(
    client: Client,
    org_id: int,
    project_id: int,
    page: str,
    at: datetime,
    loads_ms: list[float],
    js_bytes: int = 0,
    status: int = 200,
) -> None:
    """One page load per value of ``loads_ms`` (LCP = FCP = the load time), each with one script of
    ``js_bytes`` when given."""
    tx, spans = [], []
    for i, ms in enumerate(loads_ms):
        start = at + timedelta(seconds=i)
        event_id = uuid.uuid4()
        row = {
            "org_id": org_id,
            "project_id": project_id,
            "event_id": event_id,
            "timestamp": start,
            "end_timestamp": start + timedelta(milliseconds=ms),
            "received_at": datetime.now(UTC),
            "release": "1.0.0",
            "op": "pageload",
            "duration_ms": ms,
            "page": page,
            "http_method": "",
            "http_status": status,
            "measurements": {"lcp": ms, "fcp": ms / 2, "ttfb": ms / 10, "cls": 0.05},
            "transaction": page,
        }
        tx.append([row[c] for c in TX_COLS])
        if js_bytes:
            span = {
                "org_id": org_id,
                "project_id": project_id,
                "transaction_event_id": event_id,
                "span_id": uuid.uuid4().hex[:16],
                "timestamp": start,
                "duration_ms": 20.0,
                "received_at": datetime.now(UTC),
                "op": "resource.script",
                "description": "/static/app.js",
                "status_code": 200,
                "http_method": "GET",
                "transaction_op": "pageload",
                "page": page,
                "release": "1.0.0",
                "response_content_length": js_bytes,
                "decoded_content_length": js_bytes,
                "render_blocking_status": "",
            }
            spans.append([span[c] for c in SPAN_COLS])
    client.insert("transactions", tx, column_names=TX_COLS)
    if spans:
        client.insert("spans", spans, column_names=SPAN_COLS)


def server_calls(
    client: Client, org_id: int, project_id: int, route: str, at: datetime, statuses: list[int]
) -> None:
    """One server-side API call (an http.server transaction on ``route``) per value of ``statuses`` (0: the
    call reported no status), a second apart from ``at``."""
    tx = []
    for i, status in enumerate(statuses):
        start = at + timedelta(seconds=i)
        row = {
            "org_id": org_id,
            "project_id": project_id,
            "event_id": uuid.uuid4(),
            "timestamp": start,
            "end_timestamp": start + timedelta(milliseconds=40),
            "received_at": datetime.now(UTC),
            "release": "1.0.0",
            "op": "http.server",
            "duration_ms": 40.0,
            "page": route,
            "http_method": "GET",
            "http_status": status,
            "measurements": {},
            "transaction": f"GET {route}",
        }
        tx.append([row[c] for c in TX_COLS])
    client.insert("transactions", tx, column_names=TX_COLS)


def fold(client: Client, days: int = 32) -> None:
    """Rebuild the facts and states of the last ``days`` days from the raw rows."""
    now = datetime.now(UTC)
    build_facts(client, now - timedelta(days=days), now + timedelta(hours=1))


def bucketed(value: float) -> float:
    """What the page-load states keep of a value: its 1 % log-histogram bucket (a Float32) — the percentile of
    equal values, as every consumer reads it."""
    bucket = math.exp(round(math.log(value) * 100) / 100)
    return float(struct.unpack("f", struct.pack("f", bucket))[0])
