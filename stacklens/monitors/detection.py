"""The detection tick: missed runs and timed-out check-ins found from stored deadlines, once each.

Run every minute by the schedule runner (``pipelines/assets/monitors.py``). A cron monitor whose
``next_expected_at`` plus its margin has passed gets a ``missed`` check-in for every scheduled time that
passed without one, and its deadline moves to the next scheduled time — in one transaction with a
conditional UPDATE on the old deadline, so two ticks, or a check-in landing meanwhile, never report a run
twice. An ``in_progress`` check-in past its ``timeout_at`` becomes ``timeout`` the same way. Nothing is
kept in memory between ticks: a server killed (``kill -9``) across a deadline finds it past on its first
tick after the restart and reports that run then, exactly once.

Each report moves the monitor's health (:mod:`stacklens.monitors.health`) in the same transaction, which
puts the incident's notices in the outbox; the incident's issue event is sent afterwards
(:mod:`stacklens.monitors.issues`), under an event id derived from the incident, so a resend lands once.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from stacklens.control.db import session_scope
from stacklens.control.models import utcnow
from stacklens.control.models.monitors import Monitor, MonitorCheckIn
from stacklens.monitors.health import Told, apply
from stacklens.monitors.schedules import next_expected, schedule_of
from stacklens.settings import Settings

# Monitors stepped per transaction: 1,000 missed runs are 5 commits, each short enough that ingest's
# check-ins wait at most a few milliseconds for the store.
CHUNK = 200
# Scheduled times reported missed per monitor per tick: a monitor every minute that was down for a day
# would otherwise write 1,440 rows in one tick; the rest are folded into the deadline's jump (one incident
# either way).
MAX_MISSED_PER_TICK = 60


@dataclass
class TickSummary:
    """What one tick did."""

    missed: int = 0
    timed_out: int = 0
    told: Told = field(default_factory=Told)
    errors: list[str] = field(default_factory=list)


def detect(settings: Settings, base_url: str, now: datetime | None = None) -> TickSummary:
    """Report every missed run and timed-out check-in whose deadline has passed by ``now``."""
    now = now or utcnow()
    summary = TickSummary()
    with session_scope(settings) as session:
        due = list(
            session.scalars(
                select(Monitor.id).where(
                    Monitor.kind == "cron",
                    Monitor.paused.is_(False),
                    Monitor.next_expected_at.is_not(None),
                    Monitor.next_expected_at <= now,
                )
            )
        )
        late = list(
            session.scalars(
                select(MonitorCheckIn.id).where(
                    MonitorCheckIn.status == "in_progress", MonitorCheckIn.timeout_at <= now
                )
            )
        )
    for start in range(0, len(due), CHUNK):
        _isolated(
            settings,
            summary,
            partial(_missed, ids=due[start : start + CHUNK], now=now, base_url=base_url, summary=summary),
        )
    for start in range(0, len(late), CHUNK):
        _isolated(
            settings,
            summary,
            partial(_timeouts, ids=late[start : start + CHUNK], now=now, base_url=base_url, summary=summary),
        )
    return summary


def _isolated(settings: Settings, summary: TickSummary, step: Callable[[Session], None]) -> None:
    """One chunk in its own transaction; a chunk that fails is rolled back whole and tried on the next tick
    (its deadlines did not move), the other chunks go on."""
    before = (
        summary.missed,
        summary.timed_out,
        summary.told.opened,
        summary.told.resolved,
        summary.told.notices,
    )
    try:
        with session_scope(settings) as session:
            step(session)
    except Exception as exc:  # noqa: BLE001 - one bad chunk must not silence the others
        summary.missed, summary.timed_out = before[0], before[1]
        summary.told.opened, summary.told.resolved, summary.told.notices = before[2], before[3], before[4]
        summary.errors.append(f"{type(exc).__name__}: {str(exc)[:300]}")


def _missed(session: Session, ids: list[int], now: datetime, base_url: str, summary: TickSummary) -> None:
    monitors = session.scalars(select(Monitor).where(Monitor.id.in_(ids)).with_for_update()).all()
    # No flush per monitor: the missed check-ins and the monitors' changes go out in one flush at the end
    # (executemany), only an opened incident is written on its own (its id is in its notices).
    with session.no_autoflush:
        for monitor in monitors:
            _miss(session, monitor, now, base_url, summary)
    session.flush()


def _miss(session: Session, monitor: Monitor, now: datetime, base_url: str, summary: TickSummary) -> None:
    """The missed runs of one monitor whose deadline (plus margin) has passed, reported once."""
    schedule = schedule_of(monitor.schedule_type, monitor.schedule_value, monitor.schedule_unit)
    deadline = monitor.next_expected_at
    if schedule is None or deadline is None or monitor.paused:
        return
    margin = timedelta(minutes=monitor.checkin_margin)
    if deadline + margin > now:
        return  # expected, but still within its margin
    times: list[datetime] = []
    following = deadline
    while following + margin <= now:
        if len(times) < MAX_MISSED_PER_TICK:
            times.append(following)
        following = next_expected(schedule, monitor.timezone, following)
    moved = session.execute(
        update(Monitor)
        .where(Monitor.id == monitor.id, Monitor.next_expected_at == deadline)
        .values(next_expected_at=following)
        .execution_options(synchronize_session=False)
    )
    if moved.rowcount != 1:  # type: ignore[attr-defined]  # a check-in or another tick moved it first: theirs is the report
        return
    monitor.next_expected_at = following
    for expected in times:
        session.add(
            MonitorCheckIn(
                id=missed_id(monitor.id, expected),
                monitor_id=monitor.id,
                org_id=monitor.org_id,
                project_id=monitor.project_id,
                status="missed",
                environment=monitor.environment,
                received_at=now,
                expected_at=expected,
                source="system",
                processed=True,
            )
        )
        reason = (
            f"no check-in for the run due at {expected:%Y-%m-%d %H:%M} UTC "
            f"(margin {monitor.checkin_margin} min)"
        )
        apply(session, monitor, "missed", now, reason, base_url, summary.told)
        summary.missed += 1


def missed_id(monitor_id: int, expected: datetime) -> str:
    """The missed check-in's id: one per monitor and scheduled time, so the same miss cannot be written
    twice (a second write breaks the primary key and rolls its chunk back)."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"stacklens:missed:{monitor_id}:{expected.isoformat()}").hex


def _timeouts(session: Session, ids: list[str], now: datetime, base_url: str, summary: TickSummary) -> None:
    for checkin in session.scalars(select(MonitorCheckIn).where(MonitorCheckIn.id.in_(ids))).all():
        changed = session.execute(
            update(MonitorCheckIn)
            .where(MonitorCheckIn.id == checkin.id, MonitorCheckIn.status == "in_progress")
            .values(status="timeout", finished_at=now)
            .execution_options(synchronize_session=False)
        )
        if changed.rowcount != 1:  # type: ignore[attr-defined]
            continue  # it ended meanwhile
        monitor = session.scalar(select(Monitor).where(Monitor.id == checkin.monitor_id).with_for_update())
        if monitor is None:
            continue
        summary.timed_out += 1
        if monitor.paused:
            continue
        reason = f"in progress since {checkin.received_at:%H:%M} UTC, over its max runtime of {monitor.max_runtime} min"
        apply(session, monitor, "timeout", now, reason, base_url, summary.told)
        session.flush()
