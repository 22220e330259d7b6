"""Traces (docs/traces.md): one trace of the organization from every source as one tree, and a project's
trace search. Bearer API key; a trace of another organization answers 404 like one that was never sent."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query, Response

from api.deps import ApiAuth, DbSession, ViewedProject, Warehouse
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.errors import InvalidInput
from stacklens.traces.answers import TraceOut, TraceSearchOut, summary_out, trace_out
from stacklens.traces.projects import project_slugs
from stacklens.traces.reads import read_trace
from stacklens.traces.search import DEFAULT_LIMIT, MAX_LIMIT, TraceFilters, search_traces

router = APIRouter(prefix="/api", tags=["traces"])
ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A value cannot be used; `detail` names the field."},
    404: {"model": ErrorBody, "description": "No such trace (or project) in this organization."},
}


@router.get(
    "/traces/{trace_id}",
    response_model=TraceOut,
    responses=ERRORS,
    summary="One trace from every source, as one tree",
)
def get_trace(trace_id: str, auth: ApiAuth, session: DbSession, warehouse: Warehouse) -> Response:
    """Every span of the trace from every project of the organization — browser page loads and their
    fetches, server transactions and their database and HTTP spans, workers' jobs, OTLP spans — in tree
    order (`depth`, `children`), each with its service, its offset from the trace's start and whether it is
    on the critical path; spans whose parent never arrived are `orphan` and head their own subtree. The
    trace's error events, log records and replays come with it, errors and logs tied to their span."""
    projects = project_slugs(session, auth.org_id)
    try:
        trace = read_trace(warehouse, auth.org_id, trace_id, projects)
    except InvalidInput as exc:
        raise ApiError(400, "Bad Request", str(exc)) from exc
    if trace is None:
        raise ApiError(404, "Not Found", "no trace with this id in this organization")
    # Encoded here rather than checked field by field against TraceOut: a trace of 5,000 spans is 100,000
    # values, and the check took as long as reading the trace (bench/traces.py); trace_out is typed.
    return Response(orjson.dumps(trace_out(trace, projects)), media_type="application/json")


@router.get("/projects/{slug}/traces", responses=ERRORS, summary="Search a project's traces")
def list_traces(
    slug: str,
    auth: ApiAuth,
    project: ViewedProject,
    session: DbSession,
    warehouse: Warehouse,
    service: Annotated[str, Query(description="a service name (or the project's slug)")] = "",
    operation: Annotated[str, Query(description="a span op (http.server, db, …) or span name")] = "",
    min_duration: Annotated[str, Query(description="ms: spans at least this long")] = "",
    max_duration: Annotated[str, Query(description="ms: spans at most this long")] = "",
    status: Annotated[str, Query(description="ok, error or a span status such as internal_error")] = "",
    release: str = "",
    environment: str = "",
    range: Annotated[str, Query(description="24h, 7d, 14d, 30d or 90d (default 24h)")] = "",
    since: Annotated[str, Query(description="ISO 8601 start (instead of range)")] = "",
    until: Annotated[str, Query(description="ISO 8601 end (default now)")] = "",
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="traces to answer")] = DEFAULT_LIMIT,
) -> TraceSearchOut:
    """The traces holding a span (of any source) that matches every filter given, newest match first:
    `{"rows": [{"trace_id", "start", "duration_ms", "spans", "matching_spans", "services", "root",
    "root_op", "failed_spans", "errors", "releases"}], "filters"}`."""
    try:
        filters = TraceFilters.parse(
            service=service,
            operation=operation,
            min_duration=min_duration,
            max_duration=max_duration,
            status=status,
            release=release,
            environment=environment,
            range=range,
            since=since,
            until=until,
        )
    except InvalidInput as exc:
        raise ApiError(400, "Bad Request", str(exc)) from exc
    projects = project_slugs(session, auth.org_id)
    rows = search_traces(warehouse, auth.org_id, project.id, filters, projects, limit=limit)
    return {
        "rows": [summary_out(r) for r in rows],
        "filters": {**filters.window.describe(), **filters.params()},
    }
