"""The trace page — one trace of the organization from every source as one waterfall across services — and
a project's trace search (docs/traces.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from dashboards.context import CurrentProject, Db, OrgViewer, warehouse_of
from dashboards.rendering import render
from dashboards.trace_figures import page_context
from stacklens.errors import InvalidInput
from stacklens.traces.projects import project_slugs
from stacklens.traces.reads import read_trace
from stacklens.traces.search import TraceFilters, search_traces
from stacklens.view_filters import RANGES

router = APIRouter(include_in_schema=False)


@router.get("/orgs/{org_slug}/traces/{trace_id}", response_class=HTMLResponse)
def trace_page(request: Request, trace_id: str, viewer: OrgViewer, db: Db) -> Response:
    projects = project_slugs(db, viewer.org.id)
    try:
        trace = read_trace(warehouse_of(request), viewer.org.id, trace_id, projects)
    except InvalidInput as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from exc
    if trace is None:
        raise HTTPException(status_code=404, detail="Not Found")
    context = {
        "viewer": viewer,
        "user": viewer.user,
        "org": viewer.org.slug,
        **page_context(trace, projects, viewer.org.slug),
    }
    return render(request, "trace.html", context)


@router.get("/orgs/{org_slug}/projects/{project_slug}/traces", response_class=HTMLResponse)
def trace_search_page(request: Request, view: CurrentProject, db: Db) -> Response:
    query = request.query_params
    context: dict[str, Any] = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "base": f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}",
        "ranges": list(RANGES),
        "error": "",
        "rows": [],
        "values": {k: query.get(k, "") for k in _FIELDS},
    }
    try:
        filters = TraceFilters.parse(
            service=query.get("service", ""),
            operation=query.get("operation", ""),
            min_duration=query.get("min_duration", ""),
            max_duration=query.get("max_duration", ""),
            status=query.get("status", ""),
            release=query.get("release", ""),
            environment=query.get("environment", ""),
            range=query.get("range", ""),
            since=query.get("since", ""),
            until=query.get("until", ""),
        )
    except InvalidInput as exc:
        context["error"] = str(exc)
        return render(request, "trace_search.html", context, 400)
    projects = project_slugs(db, view.org_id)
    context["rows"] = search_traces(view.warehouse, view.org_id, view.project_id, filters, projects)
    context["range"] = filters.window.range
    return render(request, "trace_search.html", context)


_FIELDS = (
    "service",
    "operation",
    "min_duration",
    "max_duration",
    "status",
    "release",
    "environment",
    "range",
    "since",
    "until",
)
