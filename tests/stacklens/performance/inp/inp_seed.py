"""Interactions as stacklens_sdk's browser INP attribution sends them (v1 standalone spans with `inp.*` data),
and @sentry/browser's own INP spans (no attribution), stored through the ingest's row builder and refreshed
into `inp_interactions` and its states by the step's queries."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from clickhouse_connect.driver.client import Client

from pipelines.assets.interactions import INTERACTIONS, host_parameters
from stacklens.ingest.fields import Origin
from stacklens.ingest.inp import inp_rows
from stacklens.ingest.transactions import spans_rows, transaction_row
from stacklens.ingest.writer import insert_rows
from stacklens.warehouse.queries import load_query

UA = {
    "Chrome": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36",
    "Firefox": "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:145.0) Gecko/20100101 Firefox/145.0",
}


def script(url: str, ms: float, part: str, function: str = "", invoker: str = "") -> dict[str, Any]:
    return {"url": url, "function": function, "invoker": invoker, "duration": ms, "part": part}


def span(
    at: datetime,
    page_url: str,
    target: str,
    parts: tuple[float, float, float] | None,
    scripts: list[dict[str, Any]] | None = None,
    browser: str = "Chrome",
    kind: str = "click",
    trace_id: str | None = None,
) -> dict[str, Any]:
    """One interaction's span: with ``parts`` (input delay, processing, presentation) as the SDK's attribution
    sends it, else as @sentry/browser's own INP span (the element as description, no parts)."""
    inp = sum(parts) if parts else 180.0
    data: dict[str, Any] = {"url.full": page_url, "user_agent.original": UA[browser]}
    if parts:
        data.update(
            {
                "inp.target": target,
                "inp.type": kind,
                "inp.input_delay": parts[0],
                "inp.processing": parts[1],
                "inp.presentation": parts[2],
            }
        )
        if scripts is not None:
            data["inp.loaf"] = True
            data["inp.scripts"] = scripts
    start = at.timestamp()
    return {
        "op": f"ui.interaction.{kind}",
        "description": target,
        "span_id": uuid.uuid4().hex[:16],
        "trace_id": trace_id or uuid.uuid4().hex,
        "start_timestamp": start,
        "timestamp": start + inp / 1000,
        "measurements": {"inp": {"value": inp, "unit": "millisecond"}},
        "data": data,
    }


def store(client: Client, org_id: int, project_id: int, spans: list[dict[str, Any]]) -> None:
    origin = Origin(org_id, project_id, None, "batch-inp", datetime.now(UTC).timestamp())
    rows = [row for s in spans for row in inp_rows(s, origin)]
    insert_rows(client, "transactions", rows, uuid.uuid4().hex)  # as the ingest writer lands them


def store_frames(
    client: Client,
    org_id: int,
    project_id: int,
    trace_id: str,
    frames: list[tuple[datetime, float, str, str]],
) -> None:
    """A page load of ``trace_id`` as @sentry/browser sends it with its long animation frames (child spans of
    op ``ui.long-animation-frame`` naming the frame's longest script), each ``(start, ms, function, invoker)``
    of a script of the page's own ``/app.js``; stored through the ingest's transaction and span rows."""
    first = min(start for start, *_ in frames) - timedelta(seconds=1)
    last = max(start + timedelta(milliseconds=ms) for start, ms, *_ in frames)
    payload = {
        "event_id": uuid.uuid4().hex,
        "type": "transaction",
        "platform": "javascript",
        "transaction": "/cart",
        "start_timestamp": first.timestamp(),
        "timestamp": last.timestamp(),
        "request": {"url": "http://shop.test/cart"},
        "contexts": {"trace": {"trace_id": trace_id, "span_id": uuid.uuid4().hex[:16], "op": "pageload"}},
        "spans": [
            {
                "op": "ui.long-animation-frame",
                "span_id": uuid.uuid4().hex[:16],
                "trace_id": trace_id,
                "start_timestamp": start.timestamp(),
                "timestamp": start.timestamp() + ms / 1000,
                "data": {
                    "code.file.path": "http://shop.test/app.js",
                    "code.function.name": function,
                    "browser.script.invoker": invoker,
                },
            }
            for start, ms, function, invoker in frames
        ],
    }
    origin = Origin(org_id, project_id, None, "batch-frames", datetime.now(UTC).timestamp())
    raw = json.dumps(payload)
    row = transaction_row(payload, origin, raw.encode(), raw)
    insert_rows(client, "transactions", [row], uuid.uuid4().hex)
    insert_rows(client, "spans", spans_rows(payload, row, origin), uuid.uuid4().hex)


def refresh(
    client: Client, start: datetime, end: datetime, hosts: dict[int, list[str]] | None = None
) -> None:
    """What the `inp_interactions` step runs for the hours in [start, end): the interactions, then their hour
    and day states."""
    parameters = {
        **host_parameters(hosts or {}),
        "start": start,
        "end": end,
        "materialized_at": datetime.now(UTC),
    }
    for query in INTERACTIONS.queries:
        client.command(load_query(f"pipelines/{query}"), parameters=parameters)


def hour_range(at: datetime) -> tuple[datetime, datetime]:
    start = at.replace(minute=0, second=0, microsecond=0)
    return start - timedelta(days=2), start + timedelta(hours=2)
