"""Embedded runs across instance lifetimes: a run after an earlier instance was disposed (and the definitions
rebuilt, as when budgets change) must not meet anything that earlier instance left behind."""

from __future__ import annotations

import gc
import time
from datetime import UTC, datetime

import dagster as dg
import pytest

from pipelines.definitions import build_definitions
from pipelines.embedded import EmbeddedRunner, dagster_instance, materialize_now, tick_schedule
from pipelines.resources import resources_for
from stacklens.settings import Settings
from tests.pipelines.pipeline_seed import seed_errors


def _land(client, seed: int) -> None:
    """New events (received now) for three issues."""
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    seed_errors(client, issues=3, per_issue=2, days=[today], seed=seed)


def _issues_schedule(defs: dg.Definitions) -> dg.ScheduleDefinition:
    return next(s for s in defs.schedules or [] if s.name == "issues_every_minute")


def test_runs_after_a_disposed_instance_succeed(settings: Settings, client) -> None:
    _land(client, 1)
    for round_ in range(3):
        gc.collect()  # whatever an earlier round's handles left behind is gone now
        instance = dagster_instance(settings)
        defs = build_definitions(resources_for(settings))  # a fresh Definitions each time
        defs.resolve_all_job_defs()
        try:
            outcomes = tick_schedule(defs, _issues_schedule(defs), instance, datetime.now(UTC))
            assert [o.job for o in outcomes] == ["issues_job"], round_
            assert outcomes[0].success, outcomes[0].error
            # A second plan in the same pass resolves another job after the evaluation closed its handle.
            _land(client, 100 + round_)
            again = materialize_now(defs, instance, ["issues"])
            assert again and all(o.success for o in again), [o.error for o in again]
        finally:
            instance.dispose()
        _land(client, 200 + round_)


def test_runner_stop_disposes_and_a_new_runner_runs(settings: Settings, client) -> None:
    _land(client, 1)
    first = EmbeddedRunner(settings)
    assert all(o.success for o in first.run_now(["issues"]))
    assert first.stop()
    _land(client, 50)
    second = EmbeddedRunner(settings)
    try:
        outcomes = second.run_now(["issues"])
        assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes]
        runs = second.instance.get_runs()
        assert {r.job_name for r in runs} >= {"issues_job"} and len(runs) >= 2
    finally:
        second.stop()


@pytest.mark.timeout(900)  # two waits of up to six minutes each on a loaded machine
def test_the_runner_counts_failed_ticks_for_the_operators(settings: Settings, client, make_org) -> None:
    """The schedules thread itself: ticks against a warehouse without `events` fail and are counted; once the
    table is back a tick succeeds and the count starts again. The thread runs the issues job alone (it reads
    `events`): each pass builds that job's assets, not every asset of the graph."""
    _land(client, 7)
    make_org()
    runner = EmbeddedRunner(
        settings,
        poll_seconds=0.1,
        catch_up_seconds=600,
        catch_up_interval=0.2,
        jobs=frozenset({"issues_job"}),
    )
    seen: list[list[str]] = []
    runner.ticks.record = seen.append  # type: ignore[assignment]  # the ticks as the runner reports them
    client.command("RENAME TABLE events TO events_away")
    # A catch-up pass of every asset took a minute or more on a loaded 2-core machine (a full run saw one
    # failing pass take three); the issues job's alone is shorter, but the wait keeps that margin.
    wait = 360.0
    try:
        runner.start()
        try:
            deadline = time.monotonic() + wait
            while sum(1 for tick in seen if tick) < 3 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert sum(1 for tick in seen if tick) >= 3, seen
            assert any("events" in failure for tick in seen for failure in tick), seen
        finally:
            client.command("RENAME TABLE events_away TO events")
        deadline = time.monotonic() + wait
        count = len(seen)
        while not any(tick == [] for tick in seen[count:]) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        # Stopped however the test ends: a runner left ticking opens Dagster instances (and their log
        # captures' child processes) under the next test.
        assert runner.stop()
    assert [] in seen[count:], seen[count:]
    # Only the issues job ran: the failed runs are its own (a tick that failed before any run says so).
    failed_jobs = {f.split(": ", 1)[0] for tick in seen for f in tick if not f.startswith("the tick failed")}
    assert failed_jobs == {"issues_job"}, seen


def test_instances_opened_at_once_on_a_fresh_home_all_open_again(settings: Settings) -> None:
    """A server's runner, its status endpoint and a CLI command may open a fresh home at the same moment;
    unserialised, two of them stamp the schedule database's revision twice and every later open fails
    ("more than one head present")."""
    import sqlite3
    import threading

    start = threading.Barrier(6)
    errors: list[BaseException] = []

    def open_together() -> None:
        start.wait()
        try:
            dagster_instance(settings).dispose()
        except BaseException as exc:  # noqa: BLE001 - the test reports every thread's failure
            errors.append(exc)

    threads = [threading.Thread(target=open_together) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    dagster_instance(settings).dispose()
    for name in ("schedules/schedules.db", "history/runs.db"):
        with sqlite3.connect(settings.dagster_home / name) as db:
            assert len(db.execute("select version_num from alembic_version").fetchall()) == 1, name
