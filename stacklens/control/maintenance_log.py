"""The operators' maintenance log: every backup, restore, migration and retention run, its outcome and
duration.

Rows are written when the action ends (succeeded or failed), so a restore or a migration that creates the
table itself can still record itself. :class:`Maintenance` times a block and records it either way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import MaintenanceRun

KINDS = ("backup", "restore", "migrate", "retention")


@dataclass(frozen=True)
class MaintenanceRow:
    id: int
    kind: str
    started_at: datetime
    finished_at: datetime | None
    outcome: str
    duration_ms: int | None
    summary: str
    detail: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "outcome": self.outcome,
            "duration_ms": self.duration_ms,
            "summary": self.summary,
            "detail": self.detail,
        }


def record_run(
    session: Session,
    kind: str,
    started_at: datetime,
    duration_ms: int,
    outcome: str,
    summary: str,
    detail: dict[str, Any] | None = None,
) -> MaintenanceRow:
    """Write one finished action (``outcome``: ``succeeded`` or ``failed``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown maintenance kind {kind!r}")
    run = MaintenanceRun(
        kind=kind,
        started_at=started_at,
        finished_at=started_at + timedelta(milliseconds=duration_ms),
        outcome=outcome,
        duration_ms=duration_ms,
        summary=summary[:500],
        detail=detail or {},
    )
    session.add(run)
    session.flush()
    return _row(run)


def list_runs(session: Session, kind: str | None = None, limit: int = 50) -> list[MaintenanceRow]:
    """The newest actions first (of ``kind`` when given)."""
    query = select(MaintenanceRun).order_by(MaintenanceRun.started_at.desc(), MaintenanceRun.id.desc())
    if kind is not None:
        query = query.where(MaintenanceRun.kind == kind)
    return [_row(run) for run in session.scalars(query.limit(limit))]


def _row(run: MaintenanceRun) -> MaintenanceRow:
    return MaintenanceRow(
        id=run.id,
        kind=run.kind,
        started_at=run.started_at,
        finished_at=run.finished_at,
        outcome=run.outcome,
        duration_ms=run.duration_ms,
        summary=run.summary,
        detail=dict(run.detail or {}),
    )


class Maintenance:
    """Times an action: ``with Maintenance("backup") as m: …; m.summary = "…"``. After the block,
    :attr:`outcome`, :attr:`duration_ms` and :attr:`error` say what happened; the caller records it with
    :func:`record_run` in the store that exists by then (a restore's target, a migrated store)."""

    def __init__(self, kind: str, started_at: datetime | None = None) -> None:
        self.kind = kind
        # ``started_at``: the scheduler's clock for a scheduled run (what the next tick compares with).
        self.started_at = started_at or datetime.now(UTC)
        self._start = time.monotonic()
        self.summary = ""
        self.detail: dict[str, Any] = {}
        self.outcome = "running"
        self.duration_ms = 0
        self.error = ""

    def __enter__(self) -> Maintenance:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.duration_ms = int((time.monotonic() - self._start) * 1000)
        if exc is None:
            self.outcome = "succeeded"
        else:
            self.outcome = "failed"
            self.error = (str(exc).strip().splitlines() or [exc.__class__.__name__])[0][:300]
            self.summary = (
                f"{self.summary} — failed: {self.error}" if self.summary else f"failed: {self.error}"
            )

    def record(self, session: Session) -> MaintenanceRow:
        return record_run(
            session, self.kind, self.started_at, self.duration_ms, self.outcome, self.summary, self.detail
        )
