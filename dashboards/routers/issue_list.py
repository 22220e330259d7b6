"""The issue list of a project: status tabs, filters, search, sorts, sparklines, bulk actions, keyset pages."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import CurrentProject, Db
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.integrations.links import links_of_issues
from stacklens.issues.actions import StatusRequest, apply_status
from stacklens.issues.reads import (
    PAGE_SIZES,
    RANGES,
    SORTS,
    STATUS_TABS,
    BadListRequest,
    IssueFilters,
    daily_counts,
    facet_values,
    list_issues,
)

router = APIRouter(include_in_schema=False)


def issues_path(view: CurrentProject) -> str:
    return f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/issues"


@router.get("/orgs/{org_slug}/projects/{project_slug}/issues", response_class=HTMLResponse)
def issue_list(
    request: Request,
    view: CurrentProject,
    db: Db,
    status: str = "unresolved",
    environment: str = "",
    release: str = "",
    level: str = "",
    service: str = "",
    range: str = "14d",
    query: str = "",
    sort: str = "last_seen",
    cursor: str = "",
    per_page: str = "",
) -> Response:
    filters = IssueFilters(status, environment, release, level, service, range, query, sort, cursor)
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "filters": filters,
        "tabs": list(STATUS_TABS),
        "sorts": SORTS,
        "ranges": list(RANGES),
        "page_sizes": PAGE_SIZES,
        "base_path": issues_path(view),
        "error": None,
        "rows": [],
        "next_cursor": None,
        "spark": {},
        "links": {},
        "facets": {"environment": [], "release": [], "level": [], "service": []},
    }
    try:
        if per_page:
            if not per_page.isdigit() or int(per_page) not in PAGE_SIZES:
                raise BadListRequest(f"per page must be one of {', '.join(map(str, PAGE_SIZES))}")
            filters.limit = int(per_page)
        filters.validate()
        rows, next_cursor = list_issues(view.warehouse, view.org_id, view.project_id, filters)
    except BadListRequest as exc:
        context["error"] = str(exc)
        return render(request, "issue_list.html", context, 400)
    context.update(
        rows=rows,
        next_cursor=next_cursor,
        spark=daily_counts(
            view.warehouse, view.org_id, view.project_id, [int(r["issue_id"]) for r in rows], filters
        ),
        facets=facet_values(view.warehouse, view.org_id, view.project_id, filters),
        links=links_of_issues(db, view.org_id, view.project_id, [int(r["issue_id"]) for r in rows]),
    )
    return render(request, "issue_list.html", context)


@router.post("/orgs/{org_slug}/projects/{project_slug}/issues/bulk", response_class=HTMLResponse)
def bulk_action(
    request: Request,
    view: CurrentProject,
    action: Annotated[str, Form()] = "",
    issue_ids: Annotated[list[str] | None, Form()] = None,
    csrf_token: Annotated[str, Form()] = "",
    back: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    if action not in ("resolve", "ignore"):
        return render(
            request, "error.html", {"title": "Unknown action", "message": "Choose Resolve or Ignore."}, 400
        )
    client = view.warehouse
    failures = []
    for raw in issue_ids or []:
        if not raw.isdigit():
            continue
        status = StatusRequest(status="resolved" if action == "resolve" else "ignored")
        outcome = apply_status(client, view.org_id, view.project_id, int(raw), status, view.viewer.user.email)
        if outcome:
            failures.append(f"{raw}: {outcome}")
    target = back if back.startswith(issues_path(view)) else issues_path(view)
    if failures:
        message = "Some issues were left as they were: " + "; ".join(failures)
        return render(request, "error.html", {"title": "Bulk action partly applied", "message": message}, 409)
    return RedirectResponse(target, status_code=303)
