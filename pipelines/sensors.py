"""Sensors, built by factories.

- ``new_data_sensor(job)``: the same plan as the job's schedule, evaluated every ``interval`` seconds — for
  scaled deployments that want fresher marts than the cron gives (stopped by default).
- ``run_failure_logger``: logs every failed run with its job and error; the failed run stays visible in
  the Dagster instance and its data is read again on the next tick (watermarks advance only on success).
"""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

import logging
from datetime import UTC, datetime
from typing import Any

import dagster as dg
from dagster import RunFailureSensorContext, SensorEvaluationContext

from pipelines.jobs import (
    INCREMENTAL_JOB_ASSETS,
    PARTITIONED_JOB_INPUTS,
    issue_counts_job,
    issues_job,
    performance_job,
    sessions_job,
)
from pipelines.planning import plan_incremental_run, plan_partitioned_run
from pipelines.resources import ClickHouseResource

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
        return plan_incremental_run(client, name, INCREMENTAL_JOB_ASSETS[job.name])

    return _sensor


@dg.run_failure_sensor(name="run_failure_logger", default_status=dg.DefaultSensorStatus.RUNNING)
def run_failure_logger(context: RunFailureSensorContext) -> None:
    """Log failed runs (the next tick reads their data again)."""
    message = context.failure_event.message or "run failed"
    logger.error(
        "pipeline run %s of %s failed: %s", context.dagster_run.run_id, context.dagster_run.job_name, message
    )


sensors = [new_data_sensor(job) for job in (issues_job, issue_counts_job, performance_job, sessions_job)] + [
    run_failure_logger
]
