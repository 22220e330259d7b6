"""One run per tick: the due jobs' requests merged into a single `marts_job` run, each asset rebuilding its
own days (per-asset tags) and advancing its own watermark; outcomes still reported per job."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from pipelines import warehouse_ops as ops
from pipelines.embedded import materialize_now
from pipelines.execution import JOBS_TAG
from stacklens.control.db import migrate_control_store
from tests.pipelines.pipeline_seed import ORG, PROJECT, seed_errors, seed_performance
from tests.stacklens.releases.session_seed import seed_sessions

TODAY = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
PERF_DAY, ERROR_DAY, LATE_DAY, SESSION_DAY = (TODAY - timedelta(days=n) for n in (3, 2, 6, 4))


def _days(client, table: str, column: str = "day") -> set[str]:
    rows = client.query(f"SELECT DISTINCT toString(toDate({column})) FROM {table} FINAL").result_rows  # noqa: S608 - the tests' names
    return {r[0] for r in rows}


def _session_days(client) -> set[str]:
    """The days of the stored session day states (blocks of days start on earlier days: left out)."""
    sql = "SELECT DISTINCT toString(toDate(start)) FROM session_periods FINAL WHERE grain = 'day'"
    return {r[0] for r in client.query(sql).result_rows}


def _page_load_days(client) -> set[str]:
    """The days of the stored page-load facts; the day states hold the same days (none left out or extra)."""
    facts = _days(client, "pageload_facts", "ts")
    sql = "SELECT DISTINCT toString(toDate(start)) FROM pageload_periods FINAL WHERE grain = 'day'"
    assert {r[0] for r in client.query(sql).result_rows} == facts
    return facts


def test_one_run_for_the_due_jobs_with_per_asset_days(client, instance, settings, defs) -> None:
    migrate_control_store(settings)
    earlier = datetime.now(UTC) - timedelta(minutes=5)
    # Errors and sessions received minutes before the page views: the next tick's 30 s re-read overlap does
    # not reach them.
    seed_errors(client, issues=2, per_issue=3, days=[ERROR_DAY], seed=2, received=earlier)
    session_span = {"web@1.0.0": (SESSION_DAY + timedelta(hours=1), SESSION_DAY + timedelta(hours=5), 0.0)}
    seed_sessions(client, ORG, PROJECT, releases=session_span, browser_sessions=30, seed=4, received=earlier)
    seed_performance(
        client, days=[PERF_DAY], views_per_day=20, seed=1, received=earlier + timedelta(minutes=3)
    )
    outcomes = materialize_now(defs, instance)
    assert all(o.success for o in outcomes), [o.error for o in outcomes]
    assert [o.job for o in outcomes] == [
        "issues_job",
        "performance_job",
        "sessions_job",
        "budgets_job",
        "alerts_job",
        "integrations_job",
        "monitors_job",
    ]
    (run_id,) = {o.run_id for o in outcomes}
    run = instance.get_run_by_id(run_id)
    assert run.job_name == "marts_job"
    assert run.tags[JOBS_TAG].split(",") == [o.job for o in outcomes]
    assert run.tags[ops.asset_tag(ops.DAYS_TAG, "pageload_facts")] == PERF_DAY.date().isoformat()
    assert run.tags[ops.asset_tag(ops.DAYS_TAG, "session_periods")] == SESSION_DAY.date().isoformat()
    assert _page_load_days(client) == {PERF_DAY.date().isoformat()}
    assert _session_days(client) == {SESSION_DAY.date().isoformat()}
    assert outcomes[1].assets["pageload_periods"] and outcomes[2].assets["session_periods"]
    assert (
        outcomes[0].assets["issues"]
        and outcomes[0].checks["issue_live_counters:issue_live_counters_matches_events"]
    )
    assert outcomes[1].checks["pageload_periods:pageload_periods_add_up"]
    marks = ops.get_watermarks(client, ["pageload_facts", "session_periods", "event_counters", "issues"])
    assert all(mark > ops.EPOCH for mark in marks.values()), marks

    # A late page view in a closed day: the sessions have no new day, so their job is not in the run; the
    # performance tables rebuild only the late day.
    seed_performance(client, days=[LATE_DAY], views_per_day=2, seed=3)
    again = {o.job: o for o in materialize_now(defs, instance)}
    assert "sessions_job" not in again and all(o.success for o in again.values())
    late_run = instance.get_run_by_id(again["performance_job"].run_id)
    assert LATE_DAY.date().isoformat() in late_run.tags[ops.asset_tag(ops.DAYS_TAG, "pageload_facts")]
    assert _page_load_days(client) == {PERF_DAY.date().isoformat(), LATE_DAY.date().isoformat()}
    assert _session_days(client) == {SESSION_DAY.date().isoformat()}


def test_a_failed_run_is_logged_with_its_job_and_error(client, instance, settings, defs, caplog) -> None:
    migrate_control_store(settings)
    seed_errors(client, issues=1, per_issue=2, days=[ERROR_DAY], seed=3)
    # The issues mart is gone: the issues asset fails at its insert, as it would with a lost table.
    client.command("DROP TABLE issues")
    with caplog.at_level(logging.ERROR, logger="pipelines.execution"):
        outcomes = materialize_now(defs, instance, select=["issues"])
    failed = [o for o in outcomes if not o.success]
    assert failed and failed[0].job == "issues_job"
    records = [r for r in caplog.records if r.name == "pipelines.execution" and r.levelno == logging.ERROR]
    assert records, caplog.text
    message = records[0].getMessage()
    assert message.startswith(f"pipeline run {failed[0].run_id} of issues_job failed")
    assert "issues does not exist" in message  # the underlying error, not only Dagster's step message
