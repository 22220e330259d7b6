"""Check-ins as Sentry SDKs and the HTTP check-in send them: the monitor upserted, the check-in recorded.

A ``check_in`` item (``check_in_id``, ``monitor_slug``, ``status``, ``duration`` in seconds,
``environment``, optional ``monitor_config``) creates its monitor when the slug is new — in state ``new``
and without a schedule when no config comes with it, as Sentry does — applies the config when one does, and
records the check-in. The same ``check_in_id`` sent again with ``ok`` or ``error`` closes the
``in_progress`` it opened (duration measured if the SDK sent none); one already closed is left as it is, so
a retried send changes nothing. A closed check-in moves the monitor's health in the same transaction
(:mod:`stacklens.monitors.health`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from stacklens.control.db import session_scope
from stacklens.control.models.monitors import Monitor, MonitorCheckIn
from stacklens.errors import InvalidInput
from stacklens.monitors.config import clean, slugify
from stacklens.monitors.errors import MonitorInputError
from stacklens.monitors.group_commit import Group, Job, group_for
from stacklens.monitors.health import apply
from stacklens.monitors.schedules import next_expected, schedule_of
from stacklens.monitors.store import reschedule, settings_of
from stacklens.outbound import AllowList
from stacklens.public_url import public_base_url
from stacklens.settings import Settings

STATUSES = ("in_progress", "ok", "error")
# Sentry also reads a few spellings SDKs and scripts use.
_ALIASES = {"in-progress": "in_progress", "inprogress": "in_progress", "failed": "error", "failure": "error"}


@dataclass(frozen=True)
class CheckIn:
    """A check-in as sent, validated."""

    check_in_id: str
    monitor_slug: str
    status: str
    duration_s: float | None
    environment: str
    monitor_config: Mapping[str, Any] | None


def read_checkin(payload: object) -> CheckIn:
    """A check-in item's payload (or the HTTP check-in's fields) read, or :class:`MonitorInputError`
    naming the field."""
    if not isinstance(payload, dict):
        raise MonitorInputError("check_in", "a check-in is a JSON object")
    raw_slug = payload.get("monitor_slug")
    slug = slugify(raw_slug) if isinstance(raw_slug, str) else ""
    if not slug:
        raise MonitorInputError("monitor_slug", "name the monitor (letters, digits, '-' or '_')")
    status = payload.get("status", "ok")
    status = _ALIASES.get(str(status).lower(), str(status).lower()) if isinstance(status, str) else status
    if status not in STATUSES:
        raise MonitorInputError(
            "status", f"{status!r} is not a check-in status; use in_progress, ok or error"
        )
    check_in_id = payload.get("check_in_id")
    if check_in_id in (None, ""):
        check_in_id = uuid.uuid4().hex
    if not isinstance(check_in_id, str):
        raise MonitorInputError("check_in_id", "must be a UUID")
    try:
        check_in_id = uuid.UUID(check_in_id).hex
    except ValueError:
        raise MonitorInputError("check_in_id", f"{check_in_id[:40]!r} is not a UUID") from None
    duration = payload.get("duration")
    if duration is not None:
        if isinstance(duration, bool) or not isinstance(duration, int | float | str):
            raise MonitorInputError("duration", "must be a number of seconds")
        try:
            duration = float(duration)
        except ValueError:
            raise MonitorInputError("duration", "must be a number of seconds") from None
        if not 0 <= duration < 10**9:
            raise MonitorInputError("duration", "must be a number of seconds from 0")
    environment = payload.get("environment") or ""
    if not isinstance(environment, str) or len(environment) > 64:
        raise MonitorInputError("environment", "must be text of at most 64 characters")
    config = payload.get("monitor_config")
    if config is not None and not isinstance(config, dict):
        raise MonitorInputError("monitor_config", "must be an object")
    return CheckIn(check_in_id, slug, status, duration, environment, config)


def record(
    session: Session,
    org_id: int,
    project_id: int,
    checkin: CheckIn,
    received: datetime,
    allow: AllowList,
    base_url: str,
    source: str = "sdk",
) -> MonitorCheckIn:
    """Upsert the monitor, record (or close) the check-in and move the monitor's health."""
    monitor = _monitor(session, org_id, project_id, checkin, received, allow)
    row = session.get(MonitorCheckIn, checkin.check_in_id)
    if row is not None and (row.monitor_id != monitor.id or row.org_id != org_id):
        # Another monitor's id (a script that reuses one): recorded under a fresh id, never touching it.
        row = None
        checkin = CheckIn(
            uuid.uuid4().hex,
            checkin.monitor_slug,
            checkin.status,
            checkin.duration_s,
            checkin.environment,
            checkin.monitor_config,
        )
    if row is not None and row.status != "in_progress":
        return row  # already closed (a retried send, or detection's timeout came first): nothing changes
    expected = monitor.next_expected_at
    if row is None:
        row = MonitorCheckIn(
            id=checkin.check_in_id,
            monitor_id=monitor.id,
            org_id=org_id,
            project_id=project_id,
            status=checkin.status,
            environment=checkin.environment or monitor.environment,
            received_at=received,
            expected_at=expected,
            source=source,
            processed=False,
        )
        session.add(row)
    else:
        row.status = checkin.status
    if checkin.status == "in_progress":
        row.timeout_at = received + timedelta(minutes=monitor.max_runtime)
        row.processed = True  # nothing to judge until it ends or times out
    else:
        row.finished_at = received
        row.timeout_at = None
        if checkin.duration_s is not None:
            row.duration_ms = round(checkin.duration_s * 1000, 3)
        elif row.received_at != received:
            row.duration_ms = round((received - row.received_at).total_seconds() * 1000, 3)
    if checkin.status != "in_progress" and row.received_at < received and _newer_run_ended(session, row):
        # A late outcome of an older run (an SDK sends a run's check-ins beside the next run's, and a slow
        # request can land after them): kept on its row, while the monitor's health stays the newer run's.
        row.processed = True
        session.flush()
        return row
    monitor.last_checkin_at = received
    monitor.last_checkin_status = checkin.status
    schedule = schedule_of(monitor.schedule_type, monitor.schedule_value, monitor.schedule_unit)
    if schedule is not None and not monitor.paused:
        monitor.next_expected_at = next_expected(schedule, monitor.timezone, received)
    if checkin.status != "in_progress":
        if not monitor.paused:
            apply(session, monitor, checkin.status, received, _reason(checkin, row), base_url)
        row.processed = True
    session.flush()
    return row


def _newer_run_ended(session: Session, row: MonitorCheckIn) -> bool:
    """Whether a run of ``row``'s monitor that started after it has already ended (ok, error, timeout…)."""
    newer = select(MonitorCheckIn.id).where(
        MonitorCheckIn.monitor_id == row.monitor_id,
        MonitorCheckIn.received_at > row.received_at,
        MonitorCheckIn.status != "in_progress",
    )
    return session.scalar(newer.limit(1)) is not None


def _reason(checkin: CheckIn, row: MonitorCheckIn) -> str:
    if checkin.status == "error":
        took = f" after {row.duration_ms / 1000:.1f} s" if row.duration_ms is not None else ""
        return f"the job reported an error{took}"
    return "the job checked in ok"


def _monitor(
    session: Session,
    org_id: int,
    project_id: int,
    checkin: CheckIn,
    received: datetime,
    allow: AllowList,
) -> Monitor:
    """The project's monitor of the slug, made when new; its config applied when the check-in has one."""
    where = (Monitor.org_id == org_id, Monitor.project_id == project_id, Monitor.slug == checkin.monitor_slug)
    monitor = session.scalar(select(Monitor).where(*where))
    config = dict(checkin.monitor_config or {})
    config.pop("kind", None)  # a check-in's monitor is a cron monitor whatever the config says
    if monitor is None:
        values = clean(config, None, allow)
        values["kind"] = "cron"
        monitor = Monitor(
            org_id=org_id,
            project_id=project_id,
            slug=checkin.monitor_slug,
            name=checkin.monitor_slug,
            status="new",
            created_at=received,
            updated_at=received,
            **values,
        )
        reschedule(monitor, received)
        try:
            with session.begin_nested():  # two first check-ins at once: one creates, the other reads it
                session.add(monitor)
        except IntegrityError:
            found = session.scalar(select(Monitor).where(*where))
            if found is None:
                raise
            return found
        return monitor
    if monitor.kind != "cron":
        raise MonitorInputError(
            "monitor_slug", f"{monitor.slug!r} is an uptime monitor; it takes no check-ins"
        )
    if config:
        before = settings_of(monitor)
        values = clean(config, before, allow)
        for column, value in values.items():
            setattr(monitor, column, value)
        if any(
            before[c] != values[c] for c in ("schedule_type", "schedule_value", "schedule_unit", "timezone")
        ):
            reschedule(monitor, received)
    return monitor


@dataclass(frozen=True)
class _Request:
    """One request's check-ins, read, waiting for their group's transaction."""

    settings: Settings
    org_id: int
    project_id: int
    checkins: list[CheckIn]
    received: datetime
    source: str
    allow: AllowList
    base_url: str


def _write(batch: list[Job[_Request, list[str]]]) -> None:
    """Every pending request's check-ins in one transaction, each request in a savepoint of its own (one
    refused keeps the others)."""
    with session_scope(batch[0].work.settings) as session:
        if session.get_bind().dialect.name == "sqlite":
            # The write lock first (waiting for it under the busy timeout): a SQLite transaction that reads
            # (inside a savepoint) and then writes after another writer committed fails at once with
            # "database is locked" instead of waiting — the detection tick's commits did that to batches.
            session.execute(text("BEGIN IMMEDIATE"))
        for job in batch:
            r = job.work
            try:
                # record() flushes each check-in itself: no autoflush before each of its reads as well.
                with session.begin_nested(), session.no_autoflush:
                    job.result = [
                        record(
                            session, r.org_id, r.project_id, c, r.received, r.allow, r.base_url, r.source
                        ).id
                        for c in r.checkins
                    ]
            except InvalidInput as exc:
                job.error = exc


def record_all(
    settings: Settings,
    org_id: int,
    project_id: int,
    payloads: Sequence[object],
    received: datetime,
    source: str = "sdk",
) -> list[str]:
    """Read every check-in first (a bad one refuses them all, naming the field, before anything is
    written), then record them in one transaction with the check-ins of the requests arriving meanwhile
    (:mod:`stacklens.monitors.group_commit`); the ids recorded, once committed."""
    checkins = [read_checkin(p) for p in payloads]
    work = _Request(
        settings,
        org_id,
        project_id,
        checkins,
        received,
        source,
        AllowList.parse(settings.outbound_allow),
        public_base_url(settings),
    )
    group: Group[_Request, list[str]] = group_for(
        ("checkins", settings.database_url, settings.data_dir), _write
    )
    return group.submit(work)
