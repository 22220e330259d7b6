"""Recording check-ins: a run's outcome closes its in-progress check-in and moves the monitor's health —
unless a run that started later has already ended, whose outcome the monitor keeps (an SDK sends one run's
check-ins beside the next run's, and the older run's last one can arrive after them)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models.monitors import Monitor, MonitorCheckIn
from stacklens.monitors.checkins import CheckIn, record
from stacklens.outbound import AllowList
from stacklens.settings import Settings

BASE = "https://stacklens.example"
START = datetime(2026, 11, 28, 10, 0, 5, tzinfo=UTC)
CONFIG = {"schedule": {"type": "crontab", "value": "* * * * *"}, "checkin_margin": 1, "max_runtime": 5}


def _send(settings: Settings, org: dict[str, Any], check_in_id: str, status: str, at: datetime) -> None:
    with session_scope(settings) as session:
        checkin = CheckIn(check_in_id, "nightly", status, None, "", CONFIG)
        record(session, org["org_id"], org["project_id"], checkin, at, AllowList(), BASE)


def _monitor(settings: Settings) -> tuple[str, str, int, dict[str, str]]:
    with session_scope(settings) as session:
        monitor = session.scalar(select(Monitor).where(Monitor.slug == "nightly"))
        assert monitor is not None
        runs = session.scalars(select(MonitorCheckIn).where(MonitorCheckIn.monitor_id == monitor.id))
        return (
            monitor.status,
            monitor.last_checkin_status or "",
            monitor.failures_in_row,
            {r.id: r.status for r in runs},
        )


def test_a_late_outcome_of_an_older_run_does_not_override_the_newer_runs(
    stores: Settings, org_factory
) -> None:
    org = org_factory()
    older, newer = "a" * 32, "b" * 32
    _send(stores, org, older, "in_progress", START)
    _send(stores, org, newer, "in_progress", START + timedelta(seconds=60))
    _send(stores, org, newer, "error", START + timedelta(seconds=61))
    assert _monitor(stores)[:3] == ("error", "error", 1)
    # The older run's ok, sent before the newer run's error, lands after it: its row closes, the monitor stays
    # in error.
    _send(stores, org, older, "ok", START + timedelta(seconds=62))
    assert _monitor(stores) == ("error", "error", 1, {older: "ok", newer: "error"})
    # The next run's ok moves the monitor as ever.
    _send(stores, org, "c" * 32, "in_progress", START + timedelta(seconds=120))
    _send(stores, org, "c" * 32, "ok", START + timedelta(seconds=121))
    assert _monitor(stores)[:3] == ("ok", "ok", 0)


def test_runs_that_end_in_their_order_each_move_the_monitor(stores: Settings, org_factory) -> None:
    org = org_factory()
    _send(stores, org, "a" * 32, "in_progress", START)
    _send(stores, org, "a" * 32, "error", START + timedelta(seconds=3))
    assert _monitor(stores)[:3] == ("error", "error", 1)
    # Two runs side by side, the older one ending first: both outcomes count, the newer one's last.
    _send(stores, org, "b" * 32, "in_progress", START + timedelta(seconds=60))
    _send(stores, org, "c" * 32, "in_progress", START + timedelta(seconds=70))
    _send(stores, org, "b" * 32, "error", START + timedelta(seconds=75))
    assert _monitor(stores)[:3] == ("error", "error", 2)
    _send(stores, org, "c" * 32, "ok", START + timedelta(seconds=80))
    assert _monitor(stores)[:3] == ("ok", "ok", 0)
