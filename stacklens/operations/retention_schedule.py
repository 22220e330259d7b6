"""The server's own daily retention run: `stacklens serve` applies retention and event caps once a day at
``STACKLENS_RETENTION_RUN_AT`` (UTC, default 03:30; ``off`` leaves it to a cron job calling `stacklens
retention run`).

Why the server and not a Dagster schedule: the Dagster schedules refresh marts from new rows and are merged
into one run per tick (pipelines/execution.py); retention is maintenance of the installation, like backup and
migrate, and records itself in the maintenance log (its outcome and duration on /admin/operations), which the
same :func:`~stacklens.operations.retention.apply_retention` does for `stacklens retention run`.

A run is due when the day's slot has passed and no retention run (scheduled or by hand) started since that
slot, nor since the scheduler started: a server started after the slot waits for the next day's, so a
restart never runs it twice, and a new server does not start with a run. A server stopped over the slot
runs it on the first tick after the slot once it is back (before the next day's)."""

from __future__ import annotations

import logging
import threading
from datetime import UTC, datetime, time, timedelta
from typing import Any

from stacklens.settings import Settings

logger = logging.getLogger(__name__)

# How often the scheduler looks at the clock: a run starts at most this late after its slot.
TICK_SECONDS = 60.0


def run_at(settings: Settings) -> time | None:
    """The UTC time of day of the daily run, or None when it is off."""
    text = settings.retention_run_at.strip().lower()
    if text == "off":
        return None
    hours, minutes = text.split(":")
    return time(int(hours), int(minutes), tzinfo=UTC)


def last_slot(at: time, now: datetime) -> datetime:
    """The latest daily slot at or before ``now``."""
    slot = datetime.combine(now.astimezone(UTC).date(), at)
    return slot if slot <= now else slot - timedelta(days=1)


def next_slot(at: time, now: datetime) -> datetime:
    """The first daily slot after ``now`` (what the operators' page announces)."""
    return last_slot(at, now) + timedelta(days=1)


def is_due(at: time, now: datetime, last_run: datetime | None, since: datetime) -> bool:
    """Whether the run of the latest slot is due: that slot came after ``since`` (the scheduler's start) and
    after the last retention run."""
    slot = last_slot(at, now)
    return slot > since and (last_run is None or last_run < slot)


def tick(settings: Settings, now: datetime, since: datetime) -> dict[str, Any] | None:
    """Run retention when due at ``now``: the maintenance log's row of the run, or None when not due."""
    from stacklens.control.db import session_scope
    from stacklens.control.maintenance_log import list_runs
    from stacklens.operations.retention import apply_retention

    at = run_at(settings)
    if at is None:
        return None
    with session_scope(settings) as session:
        runs = list_runs(session, "retention", limit=1)
    if not is_due(at, now, runs[0].started_at if runs else None, since):
        return None
    _outcome, row = apply_retention(settings, trigger="scheduled", now=now)
    return row


class RetentionScheduler:
    """A daemon thread of `stacklens serve` that calls :func:`tick` every minute until stopped."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.started = datetime.now(UTC)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="retention-schedule", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            try:
                row = tick(self.settings, datetime.now(UTC), self.started)
            except Exception:
                logger.exception("retention: the scheduled run failed")
                continue
            if row is not None:
                logger.info("retention: %s (%s ms)", row["summary"], row["duration_ms"])
