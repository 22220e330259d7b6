"""When the embedded runner considers a schedule due: the crons of pipelines/schedules.py, minute by
minute."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from pipelines.cron import cron_due
from pipelines.schedules import SCHEDULE_CRONS


def test_cron_matching() -> None:
    at = datetime(2026, 3, 2, 10, 5, tzinfo=UTC)  # a Monday
    assert cron_due("* * * * *", at) and cron_due("*/5 * * * *", at)
    assert not cron_due("0 * * * *", at) and cron_due("0 * * * *", at.replace(minute=0))
    assert cron_due("5 10 * * 1", at) and not cron_due("5 10 * * 0", at)
    assert cron_due("1-10/3 * * * *", at.replace(minute=4)) and not cron_due("1-10/3 * * * *", at)


def test_minute_is_read_in_utc_and_seconds_are_ignored() -> None:
    local = datetime(2026, 3, 2, 12, 0, 42, tzinfo=timezone(timedelta(hours=2)))  # 10:00:42 UTC
    assert cron_due("0 10 * * *", local) and not cron_due("0 12 * * *", local)


def test_schedules_fire_as_documented_over_an_hour() -> None:
    start = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    fired = {
        name: sum(cron_due(cron, start + timedelta(minutes=m)) for m in range(60))
        for name, (cron, _job) in SCHEDULE_CRONS.items()
    }
    assert fired == {
        "issues_every_minute": 60,
        "performance_every_5_minutes": 12,
        "budgets_every_5_minutes": 12,
        "alerts_every_minute": 60,
        "integrations_every_10_minutes": 6,
        "sessions_every_5_minutes": 12,
        "monitors_every_minute": 60,
    }


def test_five_minute_and_hourly_jobs_never_share_a_minute() -> None:
    """Staggered: a tick runs the issues jobs and at most one other domain's job."""
    start = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    others = {n: c for n, (c, _job) in SCHEDULE_CRONS.items() if c != "* * * * *"}
    for minute in range(120):
        at = start + timedelta(minutes=minute)
        due = [name for name, cron in others.items() if cron_due(cron, at)]
        assert len(due) <= 1, (at, due)
    assert [m for m in range(60) if cron_due(others["budgets_every_5_minutes"], start.replace(minute=m))][
        :2
    ] == [
        2,
        7,
    ]


@pytest.mark.parametrize("cron", ["* * *", "61 * * * *", "* * * * * *", "every minute"])
def test_bad_cron_is_a_clear_error(cron: str) -> None:
    with pytest.raises(ValueError, match="not a valid 5-field cron"):
        cron_due(cron, datetime(2026, 3, 2, tzinfo=UTC))
