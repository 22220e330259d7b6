"""What the monitor pages and the API read: a monitor's check-ins, its incidents, and a daily timeline.

Every read is bounded by the monitor's id (itself found within the caller's organization and project).
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session
from typing_extensions import TypedDict

from stacklens.control.models import iso_utc, utcnow
from stacklens.control.models.monitors import Monitor, MonitorCheckIn, MonitorIncident

MAX_CHECKINS = 1000


class CheckInOut(TypedDict):
    id: str
    status: str
    environment: str
    duration_ms: float | None
    received_at: str
    finished_at: str | None
    expected_at: str | None
    source: str


class IncidentOut(TypedDict):
    id: int
    status: str
    opened_at: str
    resolved_at: str | None
    reason: str


def _iso(value: datetime | None) -> str | None:
    return iso_utc(value) if value is not None else None


def checkins(session: Session, monitor: Monitor, limit: int = 100, status: str = "") -> list[CheckInOut]:
    """The monitor's newest check-ins first (``status``: only those)."""
    query = select(MonitorCheckIn).where(MonitorCheckIn.monitor_id == monitor.id)
    if status:
        query = query.where(MonitorCheckIn.status == status)
    rows = session.scalars(
        query.order_by(MonitorCheckIn.received_at.desc(), MonitorCheckIn.id).limit(min(limit, MAX_CHECKINS))
    )
    return [
        {
            "id": r.id,
            "status": r.status,
            "environment": r.environment,
            "duration_ms": r.duration_ms,
            "received_at": iso_utc(r.received_at),
            "finished_at": _iso(r.finished_at),
            "expected_at": _iso(r.expected_at),
            "source": r.source,
        }
        for r in rows
    ]


def incidents(session: Session, monitor: Monitor, limit: int = 50) -> list[IncidentOut]:
    rows = session.scalars(
        select(MonitorIncident)
        .where(MonitorIncident.monitor_id == monitor.id)
        .order_by(MonitorIncident.opened_at.desc())
        .limit(limit)
    )
    return [
        {
            "id": r.id,
            "status": r.status,
            "opened_at": iso_utc(r.opened_at),
            "resolved_at": _iso(r.resolved_at),
            "reason": r.reason,
        }
        for r in rows
    ]


def daily_timeline(
    session: Session, monitor_ids: list[int], days: int = 30, today: date | None = None
) -> dict[int, list[tuple[date, dict[str, int]]]]:
    """Per monitor, per day of the last ``days`` (oldest first): its check-ins counted by status. A day
    without any has an empty count (drawn as "no data", never as ok)."""
    today = today or utcnow().date()
    first = today - timedelta(days=days - 1)
    counts: dict[int, dict[date, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    if monitor_ids:
        start = datetime(first.year, first.month, first.day, tzinfo=utcnow().tzinfo)
        rows = session.execute(
            select(MonitorCheckIn.monitor_id, MonitorCheckIn.received_at, MonitorCheckIn.status).where(
                MonitorCheckIn.monitor_id.in_(monitor_ids), MonitorCheckIn.received_at >= start
            )
        )
        for monitor_id, received, status in rows:
            day = counts[monitor_id][received.date()]
            day[status] = day.get(status, 0) + 1
    return {
        m: [(first + timedelta(days=i), counts[m].get(first + timedelta(days=i), {})) for i in range(days)]
        for m in monitor_ids
    }


FAILED = ("error", "timeout", "missed", "down")


def worst(statuses: dict[str, int]) -> str:
    """The day's colour: ``failed`` when failures are most of its outcomes, ``some_failed`` when a few
    are, ``ok`` without any (``in_progress`` when nothing ended; empty: no check-in at all, no data)."""
    failed = sum(statuses.get(s, 0) for s in FAILED)
    ended = failed + statuses.get("ok", 0)
    if failed:
        return "failed" if failed * 2 >= ended else "some_failed"
    if statuses.get("ok"):
        return "ok"
    return "in_progress" if statuses.get("in_progress") else ""
