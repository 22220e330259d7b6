"""The sensors of ``pipelines/sensors.py`` evaluated as Dagster evaluates them, against a real instance and
the real embedded warehouse: the new-data sensors request a run exactly when rows arrived after the last
materialization, the failure sensor logs a failed run with its job and error, and under the daemon three
failed scheduled runs in a row open the service's ``pipelines_failing`` alert, the next good one closes it."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest
from dagster._core.definitions.sensor_definition import SensorExecutionData

from pipelines import warehouse_ops as ops
from pipelines.embedded import materialize_now
from pipelines.planning import RANGE_END_TAG, RANGE_START_TAG
from pipelines.resources import AlertingResource, resources_for
from pipelines.sensors import run_failure_logger, run_success_watch, sensors
from tests.pipelines.pipeline_seed import seed_errors, seed_performance


def _sensor(defs: dg.Definitions, name: str) -> dg.SensorDefinition:
    return next(s for s in defs.sensors or [] if s.name == name)


def _tick(defs: dg.Definitions, instance: dg.DagsterInstance, name: str) -> SensorExecutionData:
    sensor = _sensor(defs, name)
    with dg.build_sensor_context(
        instance=instance, sensor_name=name, resources=defs.resources, definitions=defs
    ) as context:
        return sensor.evaluate_tick(context)


def test_every_sensor_is_declared_with_its_default_status(defs: dg.Definitions) -> None:
    declared = {s.name: s.default_status for s in defs.sensors or []}
    assert declared == {s.name: s.default_status for s in sensors}
    assert declared["run_failure_logger"] == dg.DefaultSensorStatus.RUNNING
    # The new-data sensors are opt-in (scaled deployments); the schedules cover the default install.
    assert {n for n, status in declared.items() if status == dg.DefaultSensorStatus.STOPPED} == {
        "issues_job_on_new_data",
        "performance_job_on_new_data",
        "sessions_job_on_new_data",
    }


def test_new_data_sensors_request_a_run_only_for_new_rows(client, instance, defs, settings) -> None:
    from stacklens.control.db import migrate_control_store

    migrate_control_store(settings)
    names = ("issues_job_on_new_data", "performance_job_on_new_data")
    for name in names:  # an empty warehouse: nothing to do
        data = _tick(defs, instance, name)
        assert not data.run_requests and "no new data" in (data.skip_message or ""), name

    # The seeds spread rows over the day starting at ``day`` (midnight, two days ago: all in the past).
    day = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=2)
    earlier = datetime.now(UTC) - timedelta(minutes=5)
    seed_errors(client, issues=2, per_issue=3, days=[day], seed=5, received=earlier)
    issues = _tick(defs, instance, "issues_job_on_new_data")
    (request,) = issues.run_requests or []
    assert request.run_key and request.run_key.startswith("issues_job_on_new_data:")

    outcomes = materialize_now(defs, instance, ["issues"])
    assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes]
    assert not _tick(
        defs, instance, "issues_job_on_new_data"
    ).run_requests  # the watermarks moved past the rows

    seed_performance(client, days=[day], views_per_day=5, seed=6, received=earlier + timedelta(minutes=1))
    (perf,) = _tick(defs, instance, "performance_job_on_new_data").run_requests or []
    # Exactly the day that received rows, as Dagster's partition range and as the job's own tag.
    assert perf.tags[RANGE_START_TAG] == perf.tags[RANGE_END_TAG] == day.date().isoformat()
    assert perf.tags[ops.DAYS_TAG] == day.date().isoformat()


def test_the_failure_sensor_logs_a_failed_run(instance, caplog: pytest.LogCaptureFixture) -> None:
    @dg.op
    def charge_card() -> None:
        raise RuntimeError("the payment provider timed out")

    @dg.job
    def checkout_job() -> None:
        charge_card()

    result = checkout_job.execute_in_process(instance=instance, raise_on_error=False)
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type == dg.DagsterEventType.RUN_FAILURE)
    context = dg.build_run_status_sensor_context(
        sensor_name="run_failure_logger",
        dagster_event=failure,
        dagster_instance=instance,
        dagster_run=result.dagster_run,
        resources={"alerting": AlertingResource()},
    ).for_run_failure()
    with caplog.at_level(logging.ERROR, logger="pipelines.sensors"):
        run_failure_logger(context)
    (record,) = [r for r in caplog.records if r.name == "pipelines.sensors"]
    assert result.run_id in record.getMessage() and "checkout_job" in record.getMessage()
    assert "failed" in record.getMessage()


def test_three_failed_scheduled_runs_in_a_row_alert_the_operators(instance, settings) -> None:
    from stacklens.control.db import migrate_control_store
    from stacklens.self_watch.episodes import firing_conditions

    migrate_control_store(settings)
    alerting = resources_for(settings)["alerting"]
    scheduled = {"dagster/schedule_name": "issues_every_minute"}

    @dg.op
    def build_marts(context) -> None:
        if context.run.tags.get("fail") == "yes":
            raise RuntimeError("the warehouse did not answer")

    @dg.job
    def marts() -> None:
        build_marts()

    def run(fail: bool, tags: dict[str, str]) -> None:
        result = marts.execute_in_process(
            instance=instance, raise_on_error=False, tags={**tags, "fail": "yes" if fail else "no"}
        )
        status = dg.DagsterEventType.RUN_FAILURE if fail else dg.DagsterEventType.RUN_SUCCESS
        event = next(e for e in result.all_events if e.event_type == status)
        context = dg.build_run_status_sensor_context(
            sensor_name="run_failure_logger" if fail else "run_success_watch",
            dagster_event=event,
            dagster_instance=instance,
            dagster_run=result.dagster_run,
            resources={"alerting": alerting},
        )
        if fail:
            run_failure_logger(context.for_run_failure())
        else:
            run_success_watch(context)

    for _ in range(2):
        run(True, scheduled)
    run(True, {})  # a run launched by hand is not a tick
    assert "pipelines_failing" not in firing_conditions(settings)
    run(True, scheduled)
    assert "pipelines_failing" in firing_conditions(settings)
    run(False, {})
    assert "pipelines_failing" in firing_conditions(settings)
    run(False, scheduled)
    assert "pipelines_failing" not in firing_conditions(settings)
