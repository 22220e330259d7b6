"""A trace and a trace search as ``GET /api/traces/{trace_id}`` and ``GET /api/projects/{slug}/traces``
answer them (docs/traces.md): typed rows, times in ISO 8601 UTC, span offsets in ms from the trace's start."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from typing_extensions import TypedDict

from stacklens.traces.reads import Trace
from stacklens.traces.search import TraceSummary


class SpanOut(TypedDict):
    """One span, in tree order: parents before children, orphan subtrees after the rooted trees."""

    span_id: str
    parent_span_id: str
    depth: int
    children: list[str]
    service: str
    project: str
    op: str
    description: str
    start: str
    start_ms: float
    duration_ms: float
    status: str
    status_code: int
    release: str
    environment: str
    transaction_event_id: str
    is_transaction: bool
    orphan: bool
    critical: bool
    error_ids: list[str]
    log_count: int


class ServiceOut(TypedDict):
    name: str
    index: int
    spans: int
    projects: list[str]


class ErrorOut(TypedDict):
    event_id: str
    issue_id: int
    project: str
    title: str
    level: str
    timestamp: str
    span_id: str


class LogOut(TypedDict):
    timestamp: str
    severity: str
    body: str
    span_id: str
    service: str
    project: str


class ReplayOut(TypedDict):
    replay_id: str
    project: str


class TraceOut(TypedDict):
    """One trace from every source as one tree."""

    trace_id: str
    start: str
    duration_ms: float
    span_count: int
    truncated: bool
    services: list[ServiceOut]
    roots: list[str]
    orphans: list[str]
    critical_path: list[str]
    spans: list[SpanOut]
    errors: list[ErrorOut]
    logs: list[LogOut]
    replays: list[ReplayOut]


class TraceSummaryOut(TypedDict):
    trace_id: str
    start: str
    duration_ms: float
    spans: int
    matching_spans: int
    services: list[str]
    root: str
    root_op: str
    failed_spans: int
    errors: int
    releases: list[str]


class TraceSearchOut(TypedDict):
    rows: list[TraceSummaryOut]
    filters: dict[str, str]


def iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _iso_of_ms(seconds: dict[int, str]) -> Callable[[int], str]:
    """``iso`` of a time in ms since 1970, each second written once (a trace's thousands of spans share a
    few seconds); the same text as ``iso(datetime.fromtimestamp(ms / 1000, UTC))``."""

    def text(epoch_ms: int) -> str:
        second, ms = divmod(epoch_ms, 1000)
        head = seconds.get(second)
        if head is None:
            head = seconds[second] = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
        return f"{head}.{ms:03d}000Z" if ms else f"{head}Z"

    return text


def trace_out(trace: Trace, projects: dict[int, str]) -> TraceOut:
    errors_of: dict[str, list[str]] = {}
    for error in trace.errors:
        errors_of.setdefault(error.span_id, []).append(error.event_id)
    logs_of: dict[str, int] = {}
    for log in trace.logs:
        logs_of[log.span_id] = logs_of.get(log.span_id, 0) + 1
    start = trace.tree.start
    start_of = _iso_of_ms({})
    spans: list[SpanOut] = [
        {
            "span_id": s.span_id,
            "parent_span_id": s.row.parent_span_id,
            "depth": s.depth,
            "children": s.children,
            "service": s.service,
            "project": projects.get(s.row.project_id, ""),
            "op": s.row.op,
            "description": s.row.description,
            "start": start_of(s.row.start_epoch_ms),
            "start_ms": s.start_ms,  # whole ms (a difference of two times in ms)
            "duration_ms": round(s.row.duration_ms, 3),
            "status": s.row.status,
            "status_code": s.row.status_code,
            "release": s.row.release,
            "environment": s.row.environment,
            "transaction_event_id": s.row.transaction_event_id.replace("-", ""),
            "is_transaction": s.row.is_transaction,
            "orphan": s.orphan,
            "critical": s.critical,
            "error_ids": errors_of.get(s.span_id, []),
            "log_count": logs_of.get(s.span_id, 0),
        }
        for s in trace.spans
    ]
    return {
        "trace_id": trace.trace_id,
        "start": iso(start),
        "duration_ms": round(trace.tree.duration_ms, 3),
        "span_count": len(spans),
        "truncated": trace.truncated,
        "services": [
            {
                "name": s.name,
                "index": s.index,
                "spans": s.spans,
                "projects": [projects.get(p, "") for p in s.projects],
            }
            for s in trace.services
        ],
        "roots": trace.tree.roots,
        "orphans": trace.tree.orphans,
        "critical_path": [s.span_id for s in trace.spans if s.critical],
        "spans": spans,
        "errors": [
            {
                "event_id": e.event_id.replace("-", ""),
                "issue_id": e.issue_id,
                "project": projects.get(e.project_id, ""),
                "title": e.title,
                "level": e.level,
                "timestamp": iso(e.timestamp),
                "span_id": e.span_id,
            }
            for e in trace.errors
        ],
        "logs": [
            {
                "timestamp": iso(log.timestamp),
                "severity": log.severity,
                "body": log.body,
                "span_id": log.span_id,
                "service": log.service,
                "project": projects.get(log.project_id, ""),
            }
            for log in trace.logs
        ],
        "replays": [
            {"replay_id": r.replay_id, "project": projects.get(r.project_id, "")} for r in trace.replays
        ],
    }


def summary_out(row: TraceSummary) -> TraceSummaryOut:
    return {
        "trace_id": row.trace_id,
        "start": iso(row.start),
        "duration_ms": round(row.duration_ms, 3),
        "spans": row.spans,
        "matching_spans": row.matching_spans,
        "services": row.services,
        "root": row.root,
        "root_op": row.root_op,
        "failed_spans": row.failed_spans,
        "errors": row.errors,
        "releases": row.releases,
    }
