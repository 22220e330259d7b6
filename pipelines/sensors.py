"""Sensors, built by factories.

- ``new_data_sensor(job)``: the same plan as the job's schedule, evaluated every ``interval`` seconds — for
  scaled deployments that want fresher marts than the cron gives (stopped by default).
- ``run_failure_logger``: logs every failed run with its job and error; the failed run stays visible in
  the Dagster instance and its data is read again on the next tick (watermarks advance only on success).
  With ``run_success_watch`` it tells the service's own alerts (stacklens.self_watch) what the scheduled runs
  of a scaled installation did: under ``dagster-daemon`` no embedded runner counts the ticks, so three failed
  scheduled runs in a row open the ``pipelines_failing`` episode and the next good one closes it, as the
  embedded runner's ticks do. (The embedded runner evaluates no sensors.)
"""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

import logging
from datetime import UTC, datetime
from typing import Any

import dagster as dg
from dagster import RunFailureSensorContext, SensorEvaluationContext

from pipelines.jobs import (
    INCREMENTAL_JOB_WATERMARKS,
    PARTITIONED_JOB_INPUTS,
    issues_job,
    performance_job,
    sessions_job,
)
from pipelines.planning import plan_incremental_run, plan_partitioned_run
from pipelines.resources import AlertingResource, ClickHouseResource
from stacklens.self_watch.pipeline_ticks import PipelineTicks

logger = logging.getLogger(__name__)


def new_data_sensor(job: Any, interval: int = 10) -> dg.SensorDefinition:
    """A sensor that requests ``job`` as soon as its raw tables have new rows."""
    name = f"{job.name}_on_new_data"

    @dg.sensor(
        name=name, job=job, minimum_interval_seconds=interval, default_status=dg.DefaultSensorStatus.STOPPED
    )
    def _sensor(
        context: SensorEvaluationContext, warehouse: ClickHouseResource
    ) -> dg.RunRequest | dg.SkipReason:
        client = warehouse.get_client()
        if job.name in PARTITIONED_JOB_INPUTS:
            assets, tables = PARTITIONED_JOB_INPUTS[job.name]
            return plan_partitioned_run(client, name, assets, tables, datetime.now(UTC).date())
        return plan_incremental_run(client, name, INCREMENTAL_JOB_WATERMARKS[job.name])

    return _sensor


# One count of scheduled runs in a row per installation, kept by the daemon's code server between evaluations
# (the episode itself is in the control store, so a restarted server neither repeats nor forgets its alert).
_TICKS: dict[str, PipelineTicks] = {}


def _ticks(alerting: AlertingResource) -> PipelineTicks:
    settings = alerting.settings()
    key = settings.resolved_database_url
    if key not in _TICKS:
        _TICKS[key] = PipelineTicks(settings)
    return _TICKS[key]


def _scheduled(run: dg.DagsterRun) -> bool:
    return "dagster/schedule_name" in run.tags


@dg.run_failure_sensor(name="run_failure_logger", default_status=dg.DefaultSensorStatus.RUNNING)
def run_failure_logger(context: RunFailureSensorContext, alerting: AlertingResource) -> None:
    """Log failed runs (the next tick reads their data again); a scheduled run's failure counts toward the
    service's ``pipelines_failing`` alert."""
    message = context.failure_event.message or "run failed"
    logger.error(
        "pipeline run %s of %s failed: %s", context.dagster_run.run_id, context.dagster_run.job_name, message
    )
    if _scheduled(context.dagster_run):
        _ticks(alerting).record([f"{context.dagster_run.job_name}: {message}"[:300]])


@dg.run_status_sensor(
    run_status=dg.DagsterRunStatus.SUCCESS,
    name="run_success_watch",
    default_status=dg.DefaultSensorStatus.RUNNING,
)
def run_success_watch(context: dg.RunStatusSensorContext, alerting: AlertingResource) -> None:
    """A scheduled run that succeeded ends a series of failures (and closes an open alert)."""
    if _scheduled(context.dagster_run):
        _ticks(alerting).record([])


sensors = [new_data_sensor(job) for job in (issues_job, performance_job, sessions_job)] + [
    run_failure_logger,
    run_success_watch,
]
