"""Monitors of a project: create, read, update, delete, and the API's shape of one (docs/monitors.md fields).

Every read names the organization and the project, so another organization's monitor answers 404 exactly
like one that does not exist. Callers own the transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session
from typing_extensions import TypedDict

from stacklens.control.models import Project, iso_utc, utcnow
from stacklens.control.models.monitors import Monitor, MonitorCheckIn, MonitorIncident
from stacklens.errors import Conflict
from stacklens.monitors.config import clean, clean_slug, slugify
from stacklens.monitors.errors import MonitorInputError, MonitorNotFound
from stacklens.monitors.schedules import in_words, next_expected, schedule_of
from stacklens.outbound import AllowList

SETTING_COLUMNS = (
    "kind",
    "schedule_type",
    "schedule_value",
    "schedule_unit",
    "timezone",
    "checkin_margin",
    "max_runtime",
    "failure_issue_threshold",
    "recovery_threshold",
    "environment",
    "url",
    "method",
    "interval_seconds",
    "timeout_ms",
    "expected_status",
    "failure_threshold",
    "paused",
)


class MonitorOut(TypedDict):
    """A monitor as the API answers it."""

    id: int
    slug: str
    name: str
    project: str
    kind: str
    schedule: dict[str, Any] | None
    schedule_in_words: str
    checkin_margin: int
    max_runtime: int
    timezone: str
    failure_issue_threshold: int
    recovery_threshold: int
    environment: str
    status: str
    next_expected_at: str | None
    last_checkin: str | None
    last_checkin_status: str
    url: str | None
    method: str | None
    interval_seconds: int | None
    timeout_ms: int | None
    expected_status: int | None
    failure_threshold: int | None
    created_at: str


def settings_of(monitor: Monitor) -> dict[str, Any]:
    return {c: getattr(monitor, c) for c in SETTING_COLUMNS}


def shown_status(monitor: Monitor) -> str:
    return "paused" if monitor.paused else monitor.status


def monitor_out(monitor: Monitor, project_slug: str) -> MonitorOut:
    schedule = schedule_of(monitor.schedule_type, monitor.schedule_value, monitor.schedule_unit)
    uptime = monitor.kind == "uptime"
    upcoming = monitor.next_check_at if uptime else monitor.next_expected_at
    return {
        "id": monitor.id,
        "slug": monitor.slug,
        "name": monitor.name,
        "project": project_slug,
        "kind": monitor.kind,
        "schedule": schedule.as_json() if schedule else None,
        "schedule_in_words": (
            f"every {monitor.interval_seconds} s" if uptime else in_words(schedule, monitor.timezone)
        ),
        "checkin_margin": monitor.checkin_margin,
        "max_runtime": monitor.max_runtime,
        "timezone": monitor.timezone,
        "failure_issue_threshold": monitor.failure_issue_threshold,
        "recovery_threshold": monitor.recovery_threshold,
        "environment": monitor.environment,
        "status": shown_status(monitor),
        "next_expected_at": iso_utc(upcoming) if upcoming and not monitor.paused else None,
        "last_checkin": iso_utc(monitor.last_checkin_at) if monitor.last_checkin_at else None,
        "last_checkin_status": monitor.last_checkin_status,
        "url": monitor.url if uptime else None,
        "method": monitor.method if uptime else None,
        "interval_seconds": monitor.interval_seconds if uptime else None,
        "timeout_ms": monitor.timeout_ms if uptime else None,
        "expected_status": monitor.expected_status if uptime else None,
        "failure_threshold": monitor.failure_threshold if uptime else None,
        "created_at": iso_utc(monitor.created_at),
    }


def reschedule(monitor: Monitor, now: datetime) -> None:
    """Set the monitor's next deadline from now (or its last check-in): after creation, a schedule change,
    or when it is resumed (a paused time is not a run of misses)."""
    if monitor.kind == "uptime":
        monitor.next_check_at = None if monitor.paused else now
        monitor.next_expected_at = None
        return
    schedule = schedule_of(monitor.schedule_type, monitor.schedule_value, monitor.schedule_unit)
    if schedule is None or monitor.paused:
        monitor.next_expected_at = None
        return
    base = monitor.last_checkin_at if monitor.last_checkin_at and schedule.type == "interval" else now
    monitor.next_expected_at = next_expected(schedule, monitor.timezone, max(base, now) if base else now)


def list_monitors(session: Session, project: Project) -> list[Monitor]:
    return list(
        session.scalars(
            select(Monitor)
            .where(Monitor.org_id == project.org_id, Monitor.project_id == project.id)
            .order_by(Monitor.slug)
        )
    )


def get_monitor(session: Session, project: Project, slug: str) -> Monitor:
    monitor = session.scalar(
        select(Monitor).where(
            Monitor.org_id == project.org_id, Monitor.project_id == project.id, Monitor.slug == slug
        )
    )
    if monitor is None:
        raise MonitorNotFound(f"no monitor {slug!r} in project {project.slug!r}")
    return monitor


def create_monitor(
    session: Session, project: Project, body: Mapping[str, Any], allow: AllowList, now: datetime | None = None
) -> Monitor:
    """A new monitor from the API's body (``slug`` or a ``name`` to make it from; a cron monitor needs a
    schedule, an uptime monitor a URL)."""
    now = now or utcnow()
    name = body.get("name")
    if name is not None and (not isinstance(name, str) or len(name.strip()) > 200):
        raise MonitorInputError("name", "must be text of at most 200 characters")
    raw_slug = body.get("slug")
    if raw_slug is None:
        if not name or not slugify(name):
            raise MonitorInputError("slug", "give the monitor a slug (or a name to make it from)")
        raw_slug = slugify(name)
    slug = clean_slug(raw_slug)
    values = clean(body, None, allow, require_schedule=True)
    exists = session.scalar(select(Monitor.id).where(Monitor.project_id == project.id, Monitor.slug == slug))
    if exists is not None:
        raise Conflict(f"slug: project {project.slug!r} already has a monitor {slug!r}")
    monitor = Monitor(
        org_id=project.org_id,
        project_id=project.id,
        slug=slug,
        name=(name or "").strip() or slug,
        status="new",
        created_at=now,
        updated_at=now,
        **values,
    )
    reschedule(monitor, now)
    session.add(monitor)
    session.flush()
    return monitor


def update_monitor(
    session: Session,
    monitor: Monitor,
    body: Mapping[str, Any],
    allow: AllowList,
    now: datetime | None = None,
) -> Monitor:
    """Change a monitor's settings (the fields the body names); a new schedule, zone or a resume moves its
    next deadline."""
    now = now or utcnow()
    before = settings_of(monitor)
    values = clean(body, before, allow)
    name = body.get("name")
    if name is not None:
        if not isinstance(name, str) or not name.strip() or len(name.strip()) > 200:
            raise MonitorInputError("name", "must be text of 1 to 200 characters")
        monitor.name = name.strip()
    for column, value in values.items():
        setattr(monitor, column, value)
    timing = ("schedule_type", "schedule_value", "schedule_unit", "timezone", "paused", "interval_seconds")
    if any(before[c] != values[c] for c in timing):
        reschedule(monitor, now)
    monitor.updated_at = now
    session.flush()
    return monitor


def delete_monitor(session: Session, monitor: Monitor) -> None:
    """The monitor and its check-ins and incidents (the warehouse's probes age out by their TTL)."""
    session.execute(delete(MonitorCheckIn).where(MonitorCheckIn.monitor_id == monitor.id))
    session.execute(delete(MonitorIncident).where(MonitorIncident.monitor_id == monitor.id))
    session.delete(monitor)
    session.flush()
