"""The links to a trace: only valid trace ids are asked about (a bad one, or an event without a trace
context, links nowhere without a query), and only traces with spans in the organization are linked."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

from stacklens.settings import Settings
from stacklens.traces.links import event_trace, existing_traces
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations


class _NoQueries:
    def query(self, *_args: object, **_kwargs: object) -> None:
        raise AssertionError("no query for ids that cannot be traces")


def test_bad_ids_and_missing_contexts_link_nowhere() -> None:
    client = _NoQueries()
    assert existing_traces(client, 1, ["", "nope", "0" * 32]) == []
    assert event_trace(client, 1, {"contexts": {"trace": {"trace_id": 42}}}) == ""
    assert event_trace(client, 1, {}) == ""


def test_only_traces_with_spans_of_the_organization(settings: Settings) -> None:
    apply_migrations(settings)
    client = get_warehouse(settings)
    kept, other = uuid.uuid4().hex, uuid.uuid4().hex
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")
    rows = [
        {"org_id": org, "project_id": org, "event_id": str(uuid.uuid4()), "trace_id": tid, "timestamp": now,
         "end_timestamp": now, "received_at": now}
        for org, tid in ((1, kept), (2, other))
    ]  # fmt: skip
    client.raw_insert(
        "transactions", insert_block="\n".join(map(json.dumps, rows)).encode(), fmt="JSONEachRow"
    )
    assert existing_traces(client, 1, [other, kept.upper(), kept]) == [kept]
    assert event_trace(client, 1, {"contexts": {"trace": {"trace_id": kept}}}) == kept
    assert event_trace(client, 2, {"contexts": {"trace": {"trace_id": kept}}}) == ""
