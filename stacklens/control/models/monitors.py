"""Control-store tables of monitors: cron monitors and uptime checks, their check-ins and their incidents.

A monitor's deadline is a column (``next_expected_at`` for a cron monitor, ``next_check_at`` for an uptime
check; an in-progress check-in's ``timeout_at``), so detection is a query over stored times: a process
killed across a deadline finds it past on its next tick and reports it then, once, because the step that
reports it also moves the deadline in the same transaction (stacklens.monitors.detection).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow

_BIG_ID = BigInteger().with_variant(Integer, "sqlite")


class Monitor(Base):
    """One monitor of a project: ``kind`` ``cron`` (check-ins expected on a schedule) or ``uptime`` (a URL
    probed every ``interval_seconds``)."""

    __tablename__ = "monitors"
    __table_args__ = (
        UniqueConstraint("project_id", "slug"),
        Index("ix_monitors_next_expected", "next_expected_at"),
        Index("ix_monitors_next_check", "next_check_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    slug: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(8))  # "cron" | "uptime"
    # new | ok | missed | timeout | error | down (the health); paused is a flag beside it
    status: Mapped[str] = mapped_column(String(8), default="new")
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    # Cron: {"type": "crontab", "value": "0 * * * *"} or {"type": "interval", "value": 2, "unit": "hour"};
    # stored as three columns so the detection query reads no JSON. Empty type: no schedule (a monitor made
    # by a check-in without monitor_config), so nothing can be missed yet.
    schedule_type: Mapped[str] = mapped_column(String(8), default="")
    schedule_value: Mapped[str] = mapped_column(String(100), default="")
    schedule_unit: Mapped[str] = mapped_column(String(8), default="")
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    checkin_margin: Mapped[int] = mapped_column(Integer, default=1)  # minutes
    max_runtime: Mapped[int] = mapped_column(Integer, default=30)  # minutes
    failure_issue_threshold: Mapped[int] = mapped_column(Integer, default=1)
    recovery_threshold: Mapped[int] = mapped_column(Integer, default=1)
    environment: Mapped[str] = mapped_column(String(64), default="")
    # Uptime
    url: Mapped[str] = mapped_column(String(2000), default="")
    method: Mapped[str] = mapped_column(String(8), default="GET")
    interval_seconds: Mapped[int] = mapped_column(Integer, default=60)
    timeout_ms: Mapped[int] = mapped_column(Integer, default=10_000)
    expected_status: Mapped[int] = mapped_column(Integer, default=200)
    failure_threshold: Mapped[int] = mapped_column(Integer, default=1)
    # Deadlines (UTC). Cron: the scheduled time of the next run; it is missed at + checkin_margin.
    next_expected_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    next_check_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)  # uptime
    last_checkin_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    last_checkin_status: Mapped[str] = mapped_column(String(12), default="")
    # Runs of failures / successes in a row (the thresholds), and the open incident, if any.
    failures_in_row: Mapped[int] = mapped_column(Integer, default=0)
    successes_in_row: Mapped[int] = mapped_column(Integer, default=0)
    open_incident_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class MonitorCheckIn(Base):
    """One check-in of a cron monitor: sent by an SDK or the HTTP check-in, or written by detection
    (``missed``, and ``timeout`` for an ``in_progress`` that never ended). ``processed`` says the health
    step (thresholds, incidents, notifications) has taken it into account."""

    __tablename__ = "monitor_checkins"
    __table_args__ = (
        Index("ix_monitor_checkins_monitor_time", "monitor_id", "received_at"),
        Index("ix_monitor_checkins_timeout", "status", "timeout_at"),
        Index("ix_monitor_checkins_unprocessed", "processed", "monitor_id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)  # the SDK's check_in_id (uuid hex)
    monitor_id: Mapped[int] = mapped_column(ForeignKey("monitors.id", ondelete="CASCADE"))
    org_id: Mapped[int] = mapped_column(Integer, index=True)
    project_id: Mapped[int] = mapped_column(Integer)
    # in_progress | ok | error | missed | timeout
    status: Mapped[str] = mapped_column(String(12))
    environment: Mapped[str] = mapped_column(String(64), default="")
    duration_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    received_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # The scheduled time this check-in answers (missed: the time that passed without one).
    expected_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    # in_progress: when it times out (received + max_runtime).
    timeout_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    source: Mapped[str] = mapped_column(String(8), default="sdk")  # sdk | http | system
    processed: Mapped[bool] = mapped_column(Boolean, default=False)


class MonitorIncident(Base):
    """A monitor's time of trouble: opened when failures in a row reach the failure threshold, resolved
    when successes in a row reach the recovery threshold. Its notices are put in the outbox in the
    transaction that opens or resolves it, so each is sent once."""

    __tablename__ = "monitor_incidents"
    __table_args__ = (Index("ix_monitor_incidents_monitor", "monitor_id", "opened_at"),)

    id: Mapped[int] = mapped_column(_BIG_ID, primary_key=True)
    monitor_id: Mapped[int] = mapped_column(ForeignKey("monitors.id", ondelete="CASCADE"))
    org_id: Mapped[int] = mapped_column(Integer, index=True)
    project_id: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(8))  # what opened it: missed | timeout | error | down
    opened_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    resolved_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    reason: Mapped[str] = mapped_column(String(500), default="")
    # The issue event of the incident: sent by the tick after the incident is committed, under an event id
    # derived from the incident's, so sending again after a crash lands nothing twice.
    issue_event_sent: Mapped[bool] = mapped_column(Boolean, default=False)
