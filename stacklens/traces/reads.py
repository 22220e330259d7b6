"""Reading one trace of an organization from every source: its spans (transactions and the spans under them,
Sentry SDKs and OTLP alike, from any of the organization's projects), the error events, log records and
replays that carry its id (docs/traces.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from clickhouse_connect.driver.client import Client

from stacklens.traces.tree import SpanRow, SpanTree, TraceSpan, build_tree
from stacklens.view_filters import BadFilter
from stacklens.warehouse.queries import load_query, run_query

# A trace of 10 services each sending transactions of up to 2,000 spans (what ingest keeps of one) fits.
MAX_SPANS = 50_000
MAX_ERRORS = 200
MAX_LOGS = 1_000
MAX_REPLAYS = 20
_HEX32 = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True)
class TraceService:
    """A service of the trace (its SDK's or OTLP resource's service name, else its project's slug), in the
    order the tree reaches it; ``index`` picks its colour."""

    name: str
    index: int
    spans: int
    projects: tuple[int, ...]


@dataclass(frozen=True)
class TraceError:
    event_id: str
    project_id: int
    issue_id: int
    title: str
    level: str
    timestamp: datetime
    span_id: str


@dataclass(frozen=True)
class TraceLog:
    timestamp: datetime
    severity: str
    body: str
    span_id: str
    service: str
    project_id: int


@dataclass(frozen=True)
class TraceReplay:
    replay_id: str
    project_id: int


@dataclass(frozen=True)
class Trace:
    """One trace: its spans as a tree, with what else carries its id."""

    trace_id: str
    tree: SpanTree
    services: list[TraceService]
    errors: list[TraceError]
    logs: list[TraceLog]
    replays: list[TraceReplay]
    truncated: bool  # more than MAX_SPANS spans: the rest were not read

    @property
    def spans(self) -> list[TraceSpan]:
        return self.tree.spans


def trace_id_of(value: str) -> str:
    """``value`` as 32 lower-case hex digits (a UUID's dashes dropped); raises :class:`BadFilter` naming
    ``trace_id`` otherwise."""
    text = value.strip().lower().replace("-", "")
    if not _HEX32.match(text) or text == "0" * 32:
        raise BadFilter("trace_id", "a trace id is 32 hex digits (not all zeros)")
    return text


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def read_trace(client: Client, org_id: int, trace_id: str, project_names: dict[int, str]) -> Trace | None:
    """The trace ``trace_id`` of the organization, or ``None`` when none of its spans arrived (an error or a
    log record alone does not make a trace). ``project_names`` maps the organization's project ids to the
    names that stand for a service the source did not name."""
    tid = trace_id_of(trace_id)
    params = {"org_id": org_id, "trace_id": tid}
    raw = client.query(load_query("traces/spans"), parameters={**params, "limit": MAX_SPANS + 1}).result_rows
    # Tuples in SpanRow's order (the query's columns); a span of a project no longer there is left out.
    rows = [SpanRow._make(r) for r in raw[:MAX_SPANS] if r[2] in project_names]
    tree = build_tree(rows, project_names)
    if tree is None:
        return None
    errors = [
        TraceError(
            event_id=r["event_id"],
            project_id=int(r["project_id"]),
            issue_id=int(r["issue_id"]),
            title=r["title"],
            level=r["level"],
            timestamp=_utc(r["timestamp"]),
            span_id=r["span_id"],
        )
        for r in run_query(client, "traces/errors", {**params, "limit": MAX_ERRORS})
        if int(r["project_id"]) in project_names
    ]
    logs = [
        TraceLog(
            timestamp=_utc(r["timestamp"]),
            severity=r["severity"],
            body=r["body"],
            span_id=r["span_id"],
            service=r["service"] or project_names.get(int(r["project_id"]), ""),
            project_id=int(r["project_id"]),
        )
        for r in run_query(client, "traces/logs", {**params, "limit": MAX_LOGS})
        if int(r["project_id"]) in project_names
    ]
    replays = [
        TraceReplay(replay_id=r["replay_id"].replace("-", ""), project_id=int(r["project_id"]))
        for r in run_query(client, "traces/replays", {**params, "limit": MAX_REPLAYS})
        if int(r["project_id"]) in project_names
    ]
    return Trace(
        trace_id=tid,
        tree=tree,
        services=trace_services(tree.spans),
        errors=errors,
        logs=logs,
        replays=replays,
        truncated=len(raw) > MAX_SPANS,
    )


def trace_services(spans: list[TraceSpan]) -> list[TraceService]:
    counts: dict[str, int] = {}
    projects: dict[str, set[int]] = {}
    for span in spans:  # in tree order: the root's service first, then each as the tree reaches it
        counts[span.service] = counts.get(span.service, 0) + 1
        projects.setdefault(span.service, set()).add(span.row.project_id)
    names = list(counts)
    return [
        TraceService(name=name, index=i, spans=counts[name], projects=tuple(sorted(projects[name])))
        for i, name in enumerate(names)
    ]
