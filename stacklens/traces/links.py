"""Where a trace is reached from (docs/traces.md): an event's trace context, a log record's trace id, a
replay's traces — each linked only when the trace has spans in the organization, so a link never opens an
empty page (an error of an SDK without tracing still carries a trace id)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.traces.reads import trace_id_of
from stacklens.view_filters import BadFilter
from stacklens.warehouse.queries import run_query

MAX_IDS = 200


def _valid(ids: Iterable[str]) -> list[str]:
    out: list[str] = []
    for value in ids:
        try:
            tid = trace_id_of(value)
        except BadFilter:
            continue
        if tid not in out:
            out.append(tid)
    return out[:MAX_IDS]


def existing_traces(client: Client, org_id: int, trace_ids: Iterable[str]) -> list[str]:
    """The ids among ``trace_ids`` (normalised, bad ones dropped) whose trace has spans, in their order."""
    ids = _valid(trace_ids)
    if not ids:
        return []
    found = {
        r["trace_id"] for r in run_query(client, "traces/existing", {"org_id": org_id, "trace_ids": ids})
    }
    return [t for t in ids if t in found]


def event_trace(client: Client, org_id: int, payload: dict[str, Any]) -> str:
    """The trace id of an event's trace context when that trace has spans, else ''."""
    contexts = payload.get("contexts")
    trace = contexts.get("trace") if isinstance(contexts, dict) else None
    value = trace.get("trace_id") if isinstance(trace, dict) else None
    if not isinstance(value, str):
        return ""
    found = existing_traces(client, org_id, [value])
    return found[0] if found else ""


def replay_traces(client: Client, org_id: int, project_id: int, replay_id: str) -> list[str]:
    """The traces a replay saw that have spans."""
    rows = run_query(
        client, "traces/of_replay", {"org_id": org_id, "project_id": project_id, "replay_id": replay_id}
    )
    return existing_traces(client, org_id, rows[0]["trace_ids"] if rows else [])
