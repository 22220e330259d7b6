"""The embedded runner's passes wait while a backlog lands (large batches prepared by the ingest workers), at
most a minute in a row, and owe nothing for it: a catch-up pass that waited runs once the backlog has landed,
even past the catch-up window, and the schedules due in the minutes a wait (or a long pass) passed over run
with the first due tick after it."""

from __future__ import annotations

import contextlib
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import pipelines.embedded
from pipelines.cron import cron_due
from pipelines.embedded import crons_of
from pipelines.runner import BACKLOG_WAIT_SECONDS, EmbeddedRunner
from stacklens.settings import Settings


class Backlog:
    """A backlog the test switches on and off (the ingest workers running, in the server)."""

    def __init__(self, landing: bool) -> None:
        self.landing = landing

    def __call__(self) -> bool:
        return self.landing


def test_a_pass_waits_while_a_backlog_lands_and_at_most_a_minute_in_a_row(settings: Settings) -> None:
    backlog = Backlog(landing=True)
    runner = EmbeddedRunner(settings, backlog=backlog)
    assert runner.waits_for_backlog(100.0)
    assert runner.waits_for_backlog(100.0 + BACKLOG_WAIT_SECONDS - 1)
    assert not runner.waits_for_backlog(100.0 + BACKLOG_WAIT_SECONDS)  # a steady stream still gets its pass
    assert runner.waits_for_backlog(100.0 + BACKLOG_WAIT_SECONDS + 1)  # and the next one waits again
    backlog.landing = False
    assert not runner.waits_for_backlog(100.0 + BACKLOG_WAIT_SECONDS + 2)
    backlog.landing = True
    assert runner.waits_for_backlog(500.0)  # a new backlog: a new wait of up to a minute
    assert runner.waits_for_backlog(500.0 + BACKLOG_WAIT_SECONDS - 1)


def _due_runs(runner: EmbeddedRunner, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The names of the schedules each of ``runner``'s due ticks would run (none is executed)."""
    ran: list[list[str]] = []

    def run_schedules(defs: Any, due: list[Any], instance: Any, minute: datetime, *rest: Any) -> list[Any]:
        ran.append(sorted(s.name for s in due))
        return []

    monkeypatch.setattr(pipelines.embedded, "run_schedules", run_schedules)
    monkeypatch.setattr(runner.idle, "has_work", lambda: True)
    monkeypatch.setattr(runner, "_running", contextlib.nullcontext)  # no Dagster instance is opened
    return ran


def test_the_schedules_due_in_minutes_no_pass_evaluated_run_with_the_next_pass(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Minutes a backlog's wait (or a pass longer than a minute) passed over are evaluated by the next due
    tick, each minute once."""
    probe = EmbeddedRunner(settings)
    schedules = probe._schedules(probe.definitions())
    # A minute when a schedule is due that is not due three minutes later (an hourly or a 5-minute one).
    base = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
    minute, only_then = next(
        (base + timedelta(minutes=m), s.name)
        for m in range(1, 120)
        for s in schedules
        if any(cron_due(c, base + timedelta(minutes=m)) for c in crons_of(s))
        and not any(cron_due(c, base + timedelta(minutes=m + 3)) for c in crons_of(s))
    )
    later = minute + timedelta(minutes=3)

    waited = EmbeddedRunner(settings)
    runs = _due_runs(waited, monkeypatch)
    waited.run_due(minute - timedelta(minutes=1))  # the last tick before a wait
    waited.run_due(later)  # the first after it
    assert only_then in runs[-1], runs  # due while nothing ran: it runs now, not an hour later

    ticked = EmbeddedRunner(settings)
    runs = _due_runs(ticked, monkeypatch)
    ticked.run_due(minute - timedelta(minutes=1))
    ticked.run_due(minute)
    assert only_then in runs[-1], runs
    ticked.run_due(later)
    assert only_then not in runs[-1], runs  # each minute once


def test_a_catch_up_pass_that_waited_runs_once_the_backlog_has_landed(settings: Settings) -> None:
    backlog = Backlog(landing=True)
    runner = EmbeddedRunner(
        settings, poll_seconds=0.02, catch_up_seconds=0.3, catch_up_interval=0.05, backlog=backlog
    )
    passes: list[float] = []
    done = threading.Event()

    def catch_up() -> list[Any]:
        passes.append(time.monotonic())
        done.set()
        return []

    runner.catch_up = catch_up  # the passes, counted rather than run
    runner.run_due = lambda now: []
    runner.start()
    try:
        time.sleep(0.6)  # past the catch-up window, the backlog still landing
        assert passes == []
        landed = time.monotonic()
        backlog.landing = False
        assert done.wait(10), "no catch-up pass after the backlog"
        time.sleep(0.3)
    finally:
        assert runner.stop()
    assert len(passes) == 1 and passes[0] >= landed, passes  # one pass, owed; then the window is over
