"""The issue list of a project: status tabs, filters, search, sorts, sparklines, bulk actions, keyset
pages."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import CurrentProject, Db, app_settings
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control.teams import Assignee, resolve_assignee
from stacklens.errors import Conflict, InvalidInput, NotFound
from stacklens.ingest.front_door import landing_held
from stacklens.integrations.links import links_of_issues
from stacklens.issues.actions import StatusRequest, apply_status, record_status_activity
from stacklens.issues.assignees import NOBODY, assign, assignee_choices, assignee_filter, assignees_of
from stacklens.issues.merges import merge
from stacklens.issues.notifications import notifier_for
from stacklens.issues.reads import (
    PAGE_SIZES,
    RANGES,
    SORTS,
    STATUS_TABS,
    BadListRequest,
    IssueFilters,
    daily_counts,
    facet_values,
    issue_summary,
    list_issues,
)
from stacklens.metrics.issue_figures import window_note

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
        "window_note": window_note(RANGES.get(range, RANGES["14d"])),
        "error": None,
        "rows": [],
        "next_cursor": None,
        "spark": {},
        "links": {},
        "facets": {"environment": [], "release": [], "level": [], "service": []},
        "assignees": {},
        "choices": assignee_choices(db, view.org_id),
    }
    try:
        if per_page:
            if not per_page.isdigit() or int(per_page) not in PAGE_SIZES:
                raise BadListRequest(f"per page must be one of {', '.join(map(str, PAGE_SIZES))}")
            filters.limit = int(per_page)
        filters.validate()
        chosen = assignee_filter(db, view.org_id, view.project_id, filters.assigned, view.viewer.user.id)
        rows, next_cursor = list_issues(
            view.warehouse,
            view.org_id,
            view.project_id,
            filters,
            only_ids=chosen.only,
            exclude_ids=chosen.exclude,
        )
    except InvalidInput as exc:  # BadListRequest included
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
        assignees=assignees_of(db, view.org_id, view.project_id, [int(r["issue_id"]) for r in rows]),
    )
    return render(request, "issue_list.html", context)


@router.post("/orgs/{org_slug}/projects/{project_slug}/issues/bulk", response_class=HTMLResponse)
def bulk_action(
    request: Request,
    view: CurrentProject,
    db: Db,
    action: Annotated[str, Form()] = "",
    issue_ids: Annotated[list[str] | None, Form()] = None,
    assignee: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
    back: Annotated[str, Form()] = "",
    confirm: Annotated[str, Form()] = "",
    into: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    if action not in ("resolve", "ignore", "assign", "merge"):
        message = "Choose Resolve, Ignore, Assign or Merge."
        return render(request, "error.html", {"title": "Unknown action", "message": message}, 400)
    client = view.warehouse
    user = view.viewer.user
    if action == "merge" and confirm != "1":
        # Nothing merges before the person has seen which issue survives (issue 71): the selected issues,
        # the survivor chosen (the most events, as the merge would pick) and the choice of another.
        return _confirm_merge(request, view, issue_ids or [], back)
    if action == "merge":
        try:
            merged = merge(
                db,
                client,
                view.org_id,
                issue_ids or [],
                into=into or None,
                actor=user.email,
                actor_user_id=user.id,
                hold_landing=partial(landing_held, app_settings(request)),
            )
        except (InvalidInput, NotFound) as exc:
            return render(request, "error.html", {"title": "Nothing merged", "message": str(exc)}, 400)
        except Conflict as exc:  # another merge or split of the project's issues is running
            return render(request, "error.html", {"title": "Nothing merged", "message": str(exc)}, 409)
        return RedirectResponse(f"{issues_path(view)}/{merged.target}?done=merged", status_code=303)
    failures = []
    target: Assignee | None = None
    if action == "assign" and assignee != NOBODY:
        try:
            target = resolve_assignee(db, view.org_id, assignee)
        except (InvalidInput, NotFound) as exc:
            return render(request, "error.html", {"title": "Nobody assigned", "message": str(exc)}, 400)
    notifier = notifier_for(request.app.state.settings, client)
    for raw in issue_ids or []:
        if not raw.isdigit():
            continue
        issue_id = int(raw)
        if action == "assign":
            if issue_summary(client, view.org_id, view.project_id, issue_id) is None:
                failures.append(f"{raw}: no such issue in this project")
                continue
            assign(
                db,
                view.org_id,
                view.project_id,
                issue_id,
                target,
                actor=user.email,
                actor_user_id=user.id,
                notifier=notifier,
            )
            continue
        status = StatusRequest(status="resolved" if action == "resolve" else "ignored")
        outcome = apply_status(client, view.org_id, view.project_id, issue_id, status, user.email)
        if outcome:
            failures.append(f"{raw}: {outcome}")
        else:
            record_status_activity(
                db,
                view.org_id,
                view.project_id,
                issue_id,
                status.status,
                actor=user.email,
                actor_user_id=user.id,
            )
    back_to = back if back.startswith(issues_path(view)) else issues_path(view)
    if failures:
        message = "Some issues were left as they were: " + "; ".join(failures)
        return render(request, "error.html", {"title": "Bulk action partly applied", "message": message}, 409)
    return RedirectResponse(back_to, status_code=303)


def _confirm_merge(request: Request, view: CurrentProject, issue_ids: list[str], back: str) -> Response:
    """The page that asks before a merge: each selected issue with its events, and which one survives."""
    chosen = [int(i) for i in dict.fromkeys(str(i).strip() for i in issue_ids) if i.isdigit()]
    if len(chosen) < 2:
        message = "ids: name at least two different issues to merge"
        return render(request, "error.html", {"title": "Nothing merged", "message": message}, 400)
    found = [(i, issue_summary(view.warehouse, view.org_id, view.project_id, i)) for i in chosen]
    missing = [i for i, summary in found if summary is None]
    if missing:
        message = f"ids: no issue {missing[0]} in this project"
        return render(request, "error.html", {"title": "Nothing merged", "message": message}, 400)
    issues = [
        {"issue_id": i, "title": s["title"], "culprit": s["culprit"], "events": int(s["events"])}
        for i, s in found
        if s is not None
    ]
    # As the merge picks it: the most events, the first selected on a tie.
    events = {i: int(s["events"]) for i, s in found if s is not None}
    survivor = max(chosen, key=lambda i: (events[i], -chosen.index(i)))
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "issues": issues,
        "survivor": survivor,
        "back": back,
        "bulk_path": f"{issues_path(view)}/bulk",
    }
    return render(request, "merge_confirm.html", context)
