"""Issues and events for scripts and analysts: the issue list's filters and sorts, one issue, its events,
one event, and status changes. Bearer API key; everything is scoped to the key's organization (another
organization's project, issue or event answers 404, like one that does not exist)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy import select

from api.deps import ApiAuth, AppSettings, DbSession, ProjectOfSlug, Warehouse
from api.errors import ApiError
from stacklens.control.issue_merges import has_merges
from stacklens.control.models import Project
from stacklens.issues import payload_view as ev
from stacklens.issues.actions import StatusRequest, apply_status, record_status_activity
from stacklens.issues.assignees import CurrentAssignee, assign_text, assignee_filter, assignees_of
from stacklens.issues.events import IssueEvents, find_event
from stacklens.issues.figures import NONE, window_figures
from stacklens.issues.merge_reads import merged_into
from stacklens.issues.notifications import notifier_for
from stacklens.issues.reads import RANGES, IssueFilters, IssueSummary, issue_summary, list_issues
from stacklens.metrics import windows
from stacklens.metrics.windows import Window

router = APIRouter(prefix="/api", tags=["issues"])


NOT_FOUND = ApiError(404, "Not Found", "no such resource in this organization")
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "A field's value cannot be used (the message names it)."},
    404: {"description": "No such issue, member or team in this organization."},
    409: {"description": "The status change is not allowed from the issue's current status."},
}
ProjectOfIssues = Annotated[Project, Depends(ProjectOfSlug(NOT_FOUND.detail))]
MOVED: dict[int | str, dict[str, Any]] = {
    301: {
        "description": "The issue was merged into another: `Location` and `merged_into` name the survivor."
    },
    404: {"description": "No such issue in this organization."},
}


class IssueOut(BaseModel):
    id: str = Field(description="Issue id (decimal string; 52-bit integer).")
    project: str
    title: str
    culprit: str
    level: str
    status: str
    events: int = Field(description="Events in the window (`range`), or of all time when no range was asked.")
    users: int = Field(description="Distinct users of those events.")
    first_seen: str = Field(description="The issue's first event, all time (whatever the window).")
    last_seen: str = Field(description="The issue's latest event, all time.")
    range: str = Field(
        "", description="The named range `events` and `users` count (rolling); '' for all time."
    )
    since: str | None = Field(None, description="Start of that window (inclusive, whole UTC minute).")
    until: str | None = Field(None, description="End of that window (exclusive, whole UTC minute).")
    assignee: str | None = Field(
        None, description="Who the issue is assigned to: a member's e-mail or `#team-slug`; null when no one."
    )


class IssuePage(BaseModel):
    issues: list[IssueOut]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")


class EventSummary(BaseModel):
    event_id: str
    timestamp: str
    environment: str
    release: str
    user: str
    server_name: str
    url: str


class EventPage(BaseModel):
    events: list[EventSummary]
    next_cursor: str | None


class IssueChange(BaseModel):
    status: Literal["unresolved", "resolved", "resolved_next_release", "ignored"] | None = None
    ignore_until_events: int | None = Field(default=None, ge=1)
    ignore_until: datetime | None = None
    assignee: str | None = Field(
        None,
        max_length=320,
        description="A member's e-mail, `#team-slug`, or null to unassign; leave it out to keep the assignee.",
    )


def _iso(value: datetime) -> str:
    return value.isoformat(timespec="milliseconds").replace("+00:00", "") + "Z"


def _projects(db: DbSession, org_id: int) -> dict[int, Project]:
    return {p.id: p for p in db.scalars(select(Project).where(Project.org_id == org_id))}


def issue_of(auth: ApiAuth, db: DbSession, client: Warehouse, issue_id: str) -> tuple[Project, IssueSummary]:
    if not issue_id.isdigit():
        raise NOT_FOUND
    # Issue ids are unique per project; look in each of the organization's projects (few per organization).
    for project in _projects(db, auth.org_id).values():
        summary = issue_summary(client, auth.org_id, project.id, int(issue_id))
        if summary is not None:
            return project, summary
    raise NOT_FOUND


def _merged_redirect(auth: ApiAuth, db: DbSession, issue_id: str, rest: str = "") -> JSONResponse | None:
    """For the id of an issue of the organization merged into another: 301 to the same path of the surviving
    issue, the body naming it (``{"merged_into": "<id>"}``); ``None`` otherwise."""
    moved = merged_into(db, auth.org_id, int(issue_id)) if issue_id.isdigit() else None
    if moved is None:
        return None
    target = str(moved[1])
    return JSONResponse(
        {
            "error": "Moved Permanently",
            "detail": f"issue {issue_id} was merged into {target}",
            "merged_into": target,
        },
        status_code=301,
        headers={"Location": f"/api/issues/{target}{rest}"},
    )


def issue_answer(
    project: Project,
    row: Mapping[str, Any],
    range_name: str = "",
    window: Window | None = None,
    assignee: CurrentAssignee | None = None,
) -> IssueOut:
    return IssueOut(
        assignee=assignee.label if assignee else None,
        id=str(row["issue_id"]),
        project=project.slug,
        title=row["title"],
        culprit=row["culprit"],
        level=row["level"],
        status=row["status"],
        events=int(row["events"]),
        users=int(row.get("users", row.get("users_affected", 0))),
        first_seen=_iso(row["first_seen"]),
        last_seen=_iso(row["last_seen"]),
        range=range_name,
        since=_iso(window.since) if window else None,
        until=_iso(window.until) if window else None,
    )


@router.get("/projects/{slug}/issues", response_model=IssuePage)
def project_issues(
    auth: ApiAuth,
    db: DbSession,
    client: Warehouse,
    project: ProjectOfIssues,
    status: Literal["unresolved", "resolved", "ignored", "all"] = "unresolved",
    environment: str = "",
    release: str = "",
    level: str = "",
    service: str = "",
    range: Literal["1h", "24h", "7d", "14d", "30d", "90d"] = "14d",
    query: str = Query("", description="Free text over title and culprit, and `key:value` tag terms."),
    sort: Literal["last_seen", "first_seen", "events", "users"] = "last_seen",
    cursor: str = Query(
        "", max_length=512, pattern=r"^[A-Za-z0-9_=-]*$", description="`next_cursor` of the previous page."
    ),
    limit: int = Query(25, ge=1, le=100),
) -> IssuePage:
    """A project's issues with the dashboard's filters and sorts, one keyset page at a time."""
    filters = IssueFilters(status, environment, release, level, service, range, query, sort, cursor, limit)
    window = filters.validate().window()
    # `assigned:me` has nobody to mean with an API key: assignee_filter says so (400).
    chosen = assignee_filter(db, auth.org_id, project.id, filters.assigned, None)
    rows, next_cursor = list_issues(
        client, auth.org_id, project.id, filters, window, only_ids=chosen.only, exclude_ids=chosen.exclude
    )
    assigned = assignees_of(db, auth.org_id, project.id, [int(r["issue_id"]) for r in rows])
    return IssuePage(
        issues=[issue_answer(project, r, range, window, assigned.get(int(r["issue_id"]))) for r in rows],
        next_cursor=next_cursor,
    )


@router.get("/issues/{issue_id}", response_model=IssueOut, responses=MOVED)
def get_issue(
    auth: ApiAuth,
    db: DbSession,
    client: Warehouse,
    issue_id: str,
    range: Literal["", "1h", "24h", "7d", "14d", "30d", "90d"] = Query(
        "",
        description="Count events and users over this rolling range, as the issue list does ('' = all time).",
    ),
) -> IssueOut | JSONResponse:
    """One issue with its live figures and status; with `range`, its events and users in that window. The
    id of an issue merged into another answers 301 to the surviving issue, with `{"merged_into": id}`."""
    try:
        project, summary = issue_of(auth, db, client, issue_id)
    except ApiError:
        moved = _merged_redirect(auth, db, issue_id)
        if moved is None:
            raise
        return moved
    assignee = assignees_of(db, auth.org_id, project.id, [int(issue_id)]).get(int(issue_id))
    if not range:
        return issue_answer(project, summary, assignee=assignee)
    window = windows.rolling(RANGES[range])
    found = window_figures(client, auth.org_id, project.id, window, [int(issue_id)]).get(int(issue_id), NONE)
    figures = {**summary, "events": found.events, "users": found.users}
    return issue_answer(project, figures, range, window, assignee)


@router.get("/issues/{issue_id}/events", response_model=EventPage, responses=MOVED)
def issue_events(
    auth: ApiAuth,
    db: DbSession,
    client: Warehouse,
    issue_id: str,
    cursor: str = Query(
        "", max_length=512, pattern=r"^[A-Za-z0-9_=-]*$", description="`next_cursor` of the previous page."
    ),
    limit: int = Query(25, ge=1, le=100),
) -> EventPage | JSONResponse:
    """An issue's occurrences, newest first, cursor-paginated (a merged issue's id: 301 to the survivor's)."""
    try:
        project, summary = issue_of(auth, db, client, issue_id)
    except ApiError:
        moved = _merged_redirect(auth, db, issue_id, "/events")
        if moved is None:
            raise
        return moved
    merged = has_merges(db, auth.org_id, project.id, int(issue_id))
    events = IssueEvents(
        client, auth.org_id, project.id, int(issue_id), summary.get("fingerprint") or "", merged
    )
    rows, next_cursor = events.history(cursor=cursor, limit=limit)
    out = [
        EventSummary(
            event_id=r["event_id"],
            timestamp=_iso(r["timestamp"]),
            environment=r["environment"],
            release=r["release"],
            user=r["user_email"] or r["user_id"] or r["user_name"] or r["user_ip"],
            server_name=r["server_name"],
            url=r["request_url"],
        )
        for r in rows
    ]
    return EventPage(events=out, next_cursor=next_cursor)


class EventOut(BaseModel):
    event_id: str
    issue_id: str = Field(description="The issue it belongs to (decimal string).")
    project: str
    timestamp: str
    payload: dict[str, Any] = Field(description="The stored event as the SDK sent it, scrubbed.")


@router.get("/events/{event_id}", response_model=EventOut, responses=ERRORS)
def get_event(auth: ApiAuth, db: DbSession, client: Warehouse, event_id: str) -> EventOut:
    """One event: where it belongs and its stored (scrubbed) payload."""
    projects = _projects(db, auth.org_id)
    found = find_event(client, auth.org_id, list(projects), event_id)
    if found is None:
        raise NOT_FOUND
    events = IssueEvents(client, auth.org_id, found.project_id, found.issue_id, found.fingerprint)
    row = events.get(found.event_id)
    if row is None:
        raise NOT_FOUND
    return EventOut(
        event_id=row["event_id"],
        issue_id=str(found.issue_id),
        project=projects[found.project_id].slug,
        timestamp=_iso(row["timestamp"]),
        payload=ev.load_payload(row["payload"]),
    )


@router.put("/issues/{issue_id}", response_model=IssueOut, responses=ERRORS)
def update_issue(
    auth: ApiAuth, db: DbSession, client: Warehouse, settings: AppSettings, issue_id: str, change: IssueChange
) -> IssueOut:
    """Change an issue's status and/or assignee (each recorded in its history and the activity log with the
    API key as the actor). `{"assignee": null}` unassigns; leaving `assignee` out keeps it."""
    project, _ = issue_of(auth, db, client, issue_id)
    actor = f"api:{auth.api_key_id}"
    if change.status is None and "assignee" not in change.model_fields_set:
        raise ApiError(400, "Bad Request", "send status, assignee or both")
    if "assignee" in change.model_fields_set:
        # Before the status: an unknown assignee refuses the whole change (400/404) with nothing written.
        notifier = notifier_for(settings, client)
        assign_text(
            db, auth.org_id, project.id, int(issue_id), change.assignee, actor=actor, notifier=notifier
        )
    if change.status is not None:
        request = StatusRequest(change.status, change.ignore_until_events, change.ignore_until)
        refused = apply_status(client, auth.org_id, project.id, int(issue_id), request, actor)
        if refused:
            db.rollback()  # the assignment of the same request is not kept either
            raise ApiError(409, "Conflict", refused)
        record_status_activity(db, auth.org_id, project.id, int(issue_id), change.status, actor=actor)
    _, summary = issue_of(auth, db, client, issue_id)
    assignee = assignees_of(db, auth.org_id, project.id, [int(issue_id)]).get(int(issue_id))
    return issue_answer(project, summary, assignee=assignee)
