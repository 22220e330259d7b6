"""Schedules, derived from the jobs. Names and crons (UTC):

| schedule                    | cron           | job               | minutes of the hour       |
|-----------------------------|----------------|-------------------|---------------------------|
| issues_every_minute         | * * * * *      | issues_job        | every                     |
| performance_every_5_minutes | */5 * * * *    | performance_job   | 0, 5, 10, …, 55           |
| sessions_every_5_minutes    | 1-59/5 * * * * | sessions_job      | 1, 6, 11, …, 56           |
| budgets_every_5_minutes     | 2-59/5 * * * * | budgets_job       | 2, 7, 12, …, 57           |
| alerts_every_minute         | * * * * *      | alerts_job        | every                     |
| integrations_every_10_minutes | 4-59/10 * * * * | integrations_job | 4, 14, 24, …, 54    |
| monitors_every_minute       | * * * * *      | monitors_job      | every                     |

The 5-minute jobs are staggered so that no minute runs more than one of them beside the issues: a tick costs
what one domain's new data costs, not every mart's at once (on a small host the ticks share the cores with
ingest). The order also serves freshness: budgets are evaluated two minutes after the performance states they
read were refreshed; the session states (release health) a minute after the performance states, so a release
page's sessions and page loads are at most a minute apart. The alerts run every minute beside the issues
(in the same merged run, after the marts they read): evaluating 1,000 rules is two warehouse queries per
rule type, cheap beside any mart. Linked tickets' states are read back every 10 minutes, at minutes no
other 5-minute or hourly job uses (one HTTP call per link to the tracker; trackers rate-limit, so not every
minute). The live issue counters do not wait for any of these: a materialized view updates them at insert."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

from datetime import UTC, datetime
from typing import Any

import dagster as dg
from dagster import ScheduleEvaluationContext

from pipelines.jobs import (
    INCREMENTAL_JOB_WATERMARKS,
    PARTITIONED_JOB_INPUTS,
    alerts_job,
    budgets_job,
    integrations_job,
    issues_job,
    monitors_job,
    performance_job,
    sessions_job,
)
from pipelines.planning import plan_incremental_run, plan_partitioned_run
from pipelines.resources import ClickHouseResource

SCHEDULE_CRONS: dict[str, tuple[str, Any]] = {
    "issues_every_minute": ("* * * * *", issues_job),
    "performance_every_5_minutes": ("*/5 * * * *", performance_job),
    "sessions_every_5_minutes": ("1-59/5 * * * *", sessions_job),
    "budgets_every_5_minutes": ("2-59/5 * * * *", budgets_job),
    "alerts_every_minute": ("* * * * *", alerts_job),
    "integrations_every_10_minutes": ("4-59/10 * * * *", integrations_job),
    # Last: the catch-up passes plan budgets and alerts only after a data-driven job requested a run, and
    # this one requests a run on every pass.
    "monitors_every_minute": ("* * * * *", monitors_job),
}


def _schedule_for(name: str, cron: str, job: Any) -> dg.ScheduleDefinition:
    if job.name in PARTITIONED_JOB_INPUTS:
        assets, tables = PARTITIONED_JOB_INPUTS[job.name]

        @dg.schedule(
            name=name,
            cron_schedule=cron,
            job=job,
            execution_timezone="UTC",
            default_status=dg.DefaultScheduleStatus.RUNNING,
        )
        def _partitioned(
            context: ScheduleEvaluationContext, warehouse: ClickHouseResource
        ) -> dg.RunRequest | dg.SkipReason:
            missing = warehouse.missing_settings()
            if missing:
                return dg.SkipReason(missing)
            today = (context.scheduled_execution_time or datetime.now(UTC)).astimezone(UTC).date()
            return plan_partitioned_run(warehouse.get_client(), name, assets, tables, today)

        return _partitioned
    if job.name in INCREMENTAL_JOB_WATERMARKS:
        assets = INCREMENTAL_JOB_WATERMARKS[job.name]

        @dg.schedule(
            name=name,
            cron_schedule=cron,
            job=job,
            execution_timezone="UTC",
            default_status=dg.DefaultScheduleStatus.RUNNING,
        )
        def _incremental(
            context: ScheduleEvaluationContext, warehouse: ClickHouseResource
        ) -> dg.RunRequest | dg.SkipReason:
            missing = warehouse.missing_settings()
            if missing:
                return dg.SkipReason(missing)
            return plan_incremental_run(warehouse.get_client(), name, assets)

        return _incremental

    # Budgets and alert rules change in the control store, not in the warehouse: evaluate on every tick.
    @dg.schedule(
        name=name,
        cron_schedule=cron,
        job=job,
        execution_timezone="UTC",
        default_status=dg.DefaultScheduleStatus.RUNNING,
    )
    def _every_tick(
        context: ScheduleEvaluationContext, warehouse: ClickHouseResource
    ) -> dg.RunRequest | dg.SkipReason:
        missing = warehouse.missing_settings()
        return dg.SkipReason(missing) if missing else dg.RunRequest()

    return _every_tick


schedules = [_schedule_for(name, cron, job) for name, (cron, job) in SCHEDULE_CRONS.items()]
