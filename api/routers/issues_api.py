"""Issues and events for scripts and analysts: the issue list's filters and sorts, one issue, its events,
one event, and status changes. Bearer API key; everything is scoped to the key's organization (another
organization's project, issue or event answers 404, like one that does not exist)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field
from sqlalchemy import select

from api.deps import ApiAuth, DbSession, Warehouse
from api.errors import ApiError
from stacklens.control.models import Project
from stacklens.issues import payload_view as ev
from stacklens.issues.actions import StatusRequest, apply_status
from stacklens.issues.events import IssueEvents, find_event
from stacklens.issues.reads import IssueFilters, issue_summary, list_issues

router = APIRouter(prefix="/api", tags=["issues"])
NOT_FOUND = ApiError(404, "Not Found", "no such resource in this organization")


class IssueOut(BaseModel):
    id: str = Field(description="Issue id (decimal string; 52-bit integer).")
    project: str
    title: str
    culprit: str
    level: str
    status: str
    events: int
    users: int
    first_seen: str
    last_seen: str


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


class StatusChange(BaseModel):
    status: Literal["unresolved", "resolved", "resolved_next_release", "ignored"]
    ignore_until_events: int | None = Field(default=None, ge=1)
    ignore_until: datetime | None = None


def _iso(value: datetime) -> str:
    return value.isoformat(timespec="milliseconds").replace("+00:00", "") + "Z"


def _projects(db: DbSession, org_id: int) -> dict[int, Project]:
    return {p.id: p for p in db.scalars(select(Project).where(Project.org_id == org_id))}


def _issue(auth: ApiAuth, db: DbSession, client: Warehouse, issue_id: str) -> tuple[Project, dict[str, Any]]:
    if not issue_id.isdigit():
        raise NOT_FOUND
    # Issue ids are unique per project; look in each of the organization's projects (few per organization).
    for project in _projects(db, auth.org_id).values():
        summary = issue_summary(client, auth.org_id, project.id, int(issue_id))
        if summary is not None:
            return project, summary
    raise NOT_FOUND


def _issue_out(project: Project, row: Mapping[str, Any]) -> IssueOut:
    return IssueOut(
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
    )


@router.get("/projects/{slug}/issues", response_model=IssuePage)
def project_issues(
    auth: ApiAuth,
    db: DbSession,
    client: Warehouse,
    slug: str,
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
    project = db.scalar(select(Project).where(Project.slug == slug, Project.org_id == auth.org_id))
    if project is None:
        raise NOT_FOUND
    filters = IssueFilters(status, environment, release, level, service, range, query, sort, cursor, limit)
    rows, next_cursor = list_issues(client, auth.org_id, project.id, filters.validate())
    return IssuePage(issues=[_issue_out(project, r) for r in rows], next_cursor=next_cursor)


@router.get("/issues/{issue_id}", response_model=IssueOut)
def get_issue(auth: ApiAuth, db: DbSession, client: Warehouse, issue_id: str) -> IssueOut:
    """One issue with its live figures and status."""
    project, summary = _issue(auth, db, client, issue_id)
    return _issue_out(project, summary)


@router.get("/issues/{issue_id}/events", response_model=EventPage)
def issue_events(
    auth: ApiAuth,
    db: DbSession,
    client: Warehouse,
    issue_id: str,
    cursor: str = Query(
        "", max_length=512, pattern=r"^[A-Za-z0-9_=-]*$", description="`next_cursor` of the previous page."
    ),
    limit: int = Query(25, ge=1, le=100),
) -> EventPage:
    """An issue's occurrences, newest first, cursor-paginated."""
    project, summary = _issue(auth, db, client, issue_id)
    events = IssueEvents(client, auth.org_id, project.id, int(issue_id), summary.get("fingerprint") or "")
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


@router.get("/events/{event_id}")
def get_event(auth: ApiAuth, db: DbSession, client: Warehouse, event_id: str) -> dict[str, Any]:
    """One event: where it belongs and its stored (scrubbed) payload."""
    projects = _projects(db, auth.org_id)
    found = find_event(client, auth.org_id, list(projects), event_id)
    if found is None:
        raise NOT_FOUND
    events = IssueEvents(client, auth.org_id, found.project_id, found.issue_id, found.fingerprint)
    row = events.get(found.event_id)
    if row is None:
        raise NOT_FOUND
    return {
        "event_id": row["event_id"],
        "issue_id": str(found.issue_id),
        "project": projects[found.project_id].slug,
        "timestamp": _iso(row["timestamp"]),
        "payload": ev.load_payload(row["payload"]),
    }


@router.put("/issues/{issue_id}", response_model=IssueOut)
def update_issue(
    auth: ApiAuth, db: DbSession, client: Warehouse, issue_id: str, change: StatusChange
) -> IssueOut:
    """Change an issue's status (recorded in its history with the API key as the actor)."""
    project, _ = _issue(auth, db, client, issue_id)
    request = StatusRequest(change.status, change.ignore_until_events, change.ignore_until)
    actor = f"api:{auth.api_key_id}"
    refused = apply_status(client, auth.org_id, project.id, int(issue_id), request, actor)
    if refused:
        raise ApiError(409, "Conflict", refused)
    _, summary = _issue(auth, db, client, issue_id)
    return _issue_out(project, summary)
