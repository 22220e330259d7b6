"""Monitors of a project (docs/monitors.md): `GET/POST /api/projects/{slug}/monitors`,
`GET/PUT/DELETE /api/projects/{slug}/monitors/{monitor_slug}`, `GET …/monitors/{monitor_slug}/checkins`.

A cron monitor: `{"slug", "name", "kind": "cron", "schedule": {"type": "crontab", "value": "0 * * * *"} |
{"type": "interval", "value": 2, "unit": "hour"}, "checkin_margin", "max_runtime", "timezone",
"failure_issue_threshold", "recovery_threshold"}`; an uptime monitor: `{"kind": "uptime", "url", "method",
"interval_seconds", "timeout_ms", "expected_status", "failure_threshold"}`. Bad input answers 400 naming the
field; another organization's project or monitor answers 404 like one that does not exist.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response

from api.deps import AppSettings, DbSession, OrgProject
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.monitors import reads, store
from stacklens.monitors.reads import CheckInOut, IncidentOut
from stacklens.monitors.store import MonitorOut
from stacklens.outbound import AllowList

router = APIRouter(prefix="/api", tags=["monitors"])
ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A field is invalid; the detail names it."},
    404: {"model": ErrorBody, "description": "No such project or monitor in this organization."},
    409: {"model": ErrorBody, "description": "The project already has a monitor of that slug."},
}
EXAMPLE = {
    "slug": "nightly-import",
    "name": "Nightly import",
    "kind": "cron",
    "schedule": {"type": "crontab", "value": "0 3 * * *"},
    "timezone": "Europe/Berlin",
    "checkin_margin": 5,
    "max_runtime": 60,
}
UPTIME_EXAMPLE = {
    "slug": "shop",
    "kind": "uptime",
    "url": "https://shop.example.com/health",
    "interval_seconds": 60,
    "timeout_ms": 5000,
    "expected_status": 200,
    "failure_threshold": 3,
}
MonitorBody = Annotated[dict[str, Any], Body(examples=[EXAMPLE, UPTIME_EXAMPLE])]


def _allow(settings: AppSettings) -> AllowList:
    return AllowList.parse(settings.outbound_allow)


@router.get("/projects/{slug}/monitors", responses=ERRORS)
def list_monitors(project: OrgProject, session: DbSession) -> dict[str, list[MonitorOut]]:
    """The project's monitors with their status, next expected run and last check-in."""
    return {"rows": [store.monitor_out(m, project.slug) for m in store.list_monitors(session, project)]}


@router.post("/projects/{slug}/monitors", status_code=201, responses=ERRORS)
def create_monitor(
    project: OrgProject, body: MonitorBody, session: DbSession, settings: AppSettings
) -> MonitorOut:
    """Create a cron monitor (it expects its first run at the schedule's next time) or an uptime check
    (probed from the next tick on)."""
    monitor = store.create_monitor(session, project, body, _allow(settings))
    return store.monitor_out(monitor, project.slug)


@router.get("/projects/{slug}/monitors/{monitor_slug}", responses=ERRORS)
def get_monitor(project: OrgProject, monitor_slug: str, session: DbSession) -> MonitorOut:
    return store.monitor_out(store.get_monitor(session, project, monitor_slug), project.slug)


@router.put("/projects/{slug}/monitors/{monitor_slug}", responses=ERRORS)
def update_monitor(
    project: OrgProject, monitor_slug: str, body: MonitorBody, session: DbSession, settings: AppSettings
) -> MonitorOut:
    """Change the fields the body names (`"status": "paused"` pauses, `"active"` resumes)."""
    monitor = store.get_monitor(session, project, monitor_slug)
    return store.monitor_out(store.update_monitor(session, monitor, body, _allow(settings)), project.slug)


@router.delete("/projects/{slug}/monitors/{monitor_slug}", status_code=204, responses=ERRORS)
def delete_monitor(project: OrgProject, monitor_slug: str, session: DbSession) -> Response:
    store.delete_monitor(session, store.get_monitor(session, project, monitor_slug))
    return Response(status_code=204)


@router.get("/projects/{slug}/monitors/{monitor_slug}/checkins", responses=ERRORS)
def list_checkins(
    project: OrgProject,
    monitor_slug: str,
    session: DbSession,
    limit: Annotated[int, Query(ge=1, le=reads.MAX_CHECKINS)] = 100,
    status: Annotated[str, Query(description="Only check-ins of this status.")] = "",
) -> dict[str, list[CheckInOut] | list[IncidentOut]]:
    """The monitor's check-ins, newest first (`duration_ms`, `status`, `expected_at` …), and its
    incidents."""
    monitor = store.get_monitor(session, project, monitor_slug)
    return {
        "rows": reads.checkins(session, monitor, limit, status),
        "incidents": reads.incidents(session, monitor),
    }
