"""The read tools over the views: release health, the performance overview and a page's vitals, budgets,
logs, monitors, and an Explore question. Each goes through the read the matching page and API use (so the
numbers are the pages' and scrubbed data stays scrubbed) and names what it covers."""

from __future__ import annotations

from typing import Any

from stacklens.agents.budget import OverBudget
from stacklens.agents.calls import counting
from stacklens.agents.context import ToolContext, iso
from stacklens.agents.untrusted import NOTE, fence
from stacklens.control import budgets as budget_store
from stacklens.errors import InvalidInput
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import MAX_CONCURRENT_PER_ORG, QueryTooCostly, TooManyQueries, run_explore
from stacklens.explore.scope import project_ids
from stacklens.explore.sql import Limits
from stacklens.json_values import plain
from stacklens.logs.search import LogFilters, search_logs
from stacklens.monitors import store as monitor_store
from stacklens.performance import view_data
from stacklens.performance.budget_status import with_status
from stacklens.releases.health import Window, release_health
from stacklens.view_filters import ViewFilters, default_range
from stacklens.warehouse.client import analyst_client

MAX_LOGS = 100


def _filters(view: str, range: str, environment: str, release: str = "", browser: str = "") -> ViewFilters:
    query = {"range": range, "environment": environment, "release": release, "browser": browser}
    return ViewFilters.from_query({k: v for k, v in query.items() if v}, default=default_range(view))


def _covers(project: str, filters: ViewFilters) -> dict[str, Any]:
    return {
        "project": project,
        "range": filters.range,
        "since": iso(filters.since),
        "until": iso(filters.until),
        "environment": filters.environment,
        "release": filters.release,
    }


def releases(
    ctx: ToolContext, project: str, version: str = "", range: str = "", environment: str = ""
) -> dict[str, Any]:
    found = ctx.project(project)
    filters = _filters("releases", range or "30d", environment)
    rows = release_health(ctx.warehouse, ctx.org_id, found.id, Window.of(filters), filters.environment)
    if version:
        rows = [r for r in rows if r.version == version]
        if not rows:
            raise InvalidInput(
                f"version: release {version!r} has no sessions, page loads or errors in the window"
            )
    return {
        "covers": {**_covers(found.slug, filters), "count": len(rows)},
        "releases": [plain(r.as_dict()) for r in rows],
    }


def performance_overview(
    ctx: ToolContext,
    project: str,
    range: str = "",
    environment: str = "",
    release: str = "",
    browser: str = "",
) -> dict[str, Any]:
    found = ctx.project(project)
    filters = _filters("overview", range, environment, release, browser)
    data = view_data.overview(ctx.warehouse, ctx.org_id, found.id, filters)
    return {
        "covers": _covers(found.slug, filters),
        "vitals": plain(data["rows"]),
        "total": plain(data["total"]),
        "opportunities": [{**plain(dict(r)), "page": fence(r["page"])} for r in data["opportunities"]],
        "untrusted": NOTE,
    }


def page_vitals(
    ctx: ToolContext, project: str, page: str = "", range: str = "", environment: str = "", release: str = ""
) -> dict[str, Any]:
    found = ctx.project(project)
    filters = _filters("pages", range, environment, release)
    data = view_data.pages(ctx.warehouse, ctx.org_id, found.id, filters)
    rows = [dict(r) for r in data["rows"]]
    if page:
        rows = [r for r in rows if r.get("page") == page]
        if not rows:
            raise InvalidInput(f"page: no page loads of {page!r} in the window")
    for row in rows:
        row["page"] = fence(row.get("page"))
    return {
        "covers": {**_covers(found.slug, filters), "count": len(rows)},
        "pages": plain(rows),
        "untrusted": NOTE,
    }


def budgets(ctx: ToolContext, project: str) -> dict[str, Any]:
    found = ctx.project(project)
    rows = with_status(ctx.warehouse, budget_store.list_budgets(ctx.session, found))
    return {"covers": {"project": found.slug, "count": len(rows)}, "budgets": plain(rows)}


def logs(
    ctx: ToolContext,
    project: str,
    query: str = "",
    severity: str = "",
    service: str = "",
    trace_id: str = "",
    range: str = "",
    cursor: str = "",
    limit: int = 50,
) -> dict[str, Any]:
    found = ctx.project(project)
    if not 1 <= limit <= MAX_LOGS:
        raise InvalidInput(f"limit: from 1 to {MAX_LOGS}")
    filters = LogFilters.parse(
        query=query, severity=severity, service=service, trace_id=trace_id, range=range
    )
    page = search_logs(ctx.warehouse, ctx.org_id, found.id, filters, cursor=cursor, limit=limit)
    rows = []
    for record in page.rows:
        row = plain(record.as_dict())
        row["body"] = fence(row.get("body"))
        row["attributes"] = fence(row.get("attributes")) if row.get("attributes") else {}
        rows.append(row)
    return {
        "covers": {"project": found.slug, **plain(filters.describe()), "count": len(rows)},
        "logs": rows,
        "next_cursor": page.next_cursor,
        "untrusted": NOTE,
    }


def monitors(ctx: ToolContext, project: str) -> dict[str, Any]:
    found = ctx.project(project)
    rows = [monitor_store.monitor_out(m, found.slug) for m in monitor_store.list_monitors(ctx.session, found)]
    return {"covers": {"project": found.slug, "count": len(rows)}, "monitors": plain(rows)}


def explore(ctx: ToolContext, question: dict[str, Any]) -> dict[str, Any]:
    """One Explore question (the body of `POST /api/query`), under Explore's own slots and engine limits."""
    query = parse_query(question)
    ids = project_ids(ctx.session, ctx.org_id, query.project)
    try:
        with analyst_client(ctx.settings) as client:
            result = run_explore(counting(client, ctx.usage), query, ctx.org_id, ids)
    except TooManyQueries as exc:
        raise OverBudget(
            "explore_concurrency",
            MAX_CONCURRENT_PER_ORG,
            1.0,
            f"over the budget explore_concurrency: {exc}",
        ) from exc
    except QueryTooCostly as exc:
        memory = "memory" in str(exc)
        which, limit = (
            ("query_memory", Limits().max_memory_bytes)
            if memory
            else ("query_time", Limits().max_execution_seconds)
        )
        raise OverBudget(which, limit, 0.0, f"over the budget {which}: {exc}") from exc
    answer = dict(result.as_json())
    return {
        "covers": {
            "project": query.project or "all projects",
            "count": len(result.rows),
            "rows_read": result.rows_read,
        },
        **plain(answer),
    }
