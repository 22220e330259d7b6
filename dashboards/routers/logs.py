"""The logs view: a project's log records (OpenTelemetry and Sentry SDK logs) searched by text, severity,
service and time, newest first with paging, a volume-by-severity chart, and links from a record's trace to
its waterfall and to the trace's records and errors (docs/logs.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from dashboards.context import CurrentProject
from dashboards.log_figures import volume_figure
from dashboards.rendering import render
from stacklens.errors import InvalidInput
from stacklens.logs.search import LogFilters, LogPage, log_services, log_volume, search_logs
from stacklens.logs.traces import trace_errors, trace_transactions
from stacklens.traces.links import existing_traces
from stacklens.view_filters import RANGES

router = APIRouter(include_in_schema=False)
BASE = "/orgs/{org_slug}/projects/{project_slug}/logs"
PAGE_SIZE = 50


def _base(view: CurrentProject) -> str:
    return f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}"


def _filters(request: Request) -> LogFilters:
    query = request.query_params
    return LogFilters.parse(
        query=query.get("query", ""),
        severity=",".join(query.getlist("severity")),
        service=query.get("service", ""),
        environment=query.get("environment", ""),
        release=query.get("release", ""),
        trace_id=query.get("trace_id", ""),
        range=query.get("range", ""),
        since=query.get("since", ""),
        until=query.get("until", ""),
    )


@router.get(BASE, response_class=HTMLResponse)
def logs_page(request: Request, view: CurrentProject, cursor: str = "") -> Response:
    context: dict[str, Any] = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "base": _base(view),
        "ranges": list(RANGES),
        "levels": ["trace", "debug", "info", "warn", "error", "fatal"],
        "error": "",
        "page": LogPage([]),
        "volume_chart": None,
        "services": [],
        "waterfalls": {},
        "traced": set(),
        "filters": None,
        "params": {},
        "trace_errors": [],
    }
    try:
        filters = _filters(request)
        client = view.warehouse
        page = search_logs(client, view.org_id, view.project_id, filters, cursor=cursor, limit=PAGE_SIZE)
    except InvalidInput as exc:
        context["error"] = str(exc)
        context["filters"] = LogFilters.parse()
        return render(request, "logs.html", context, 400)
    since, until = filters.window.since, filters.window.until
    trace_ids = [r.trace_id for r in page.rows if r.trace_id] + (
        [filters.trace_id] if filters.trace_id else []
    )
    context.update(
        filters=filters,
        params=filters.params(),
        page=page,
        volume_chart=volume_figure(log_volume(client, view.org_id, view.project_id, filters), since, until),
        services=log_services(client, view.org_id, view.project_id, filters),
        waterfalls=trace_transactions(
            client, view.org_id, view.project_id, [r.trace_id for r in page.rows], since, until
        ),
        # The trace page is linked for every record whose trace has spans, a page load's or a server's.
        traced=set(existing_traces(client, view.org_id, trace_ids)),
    )
    if filters.trace_id:
        # A trace's records: the errors of the same trace, beside them.
        around = page.rows[0].timestamp if page.rows else datetime.now(UTC)
        context["trace_errors"] = trace_errors(client, view.org_id, view.project_id, filters.trace_id, around)
    return render(request, "logs.html", context)
