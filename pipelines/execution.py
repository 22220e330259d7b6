"""Executing run requests in-process, alone or merged into one run.

A tick usually finds several schedules due at once (every minute: issues and alerts, at times with one
5-minute or hourly job; `stacklens pipelines run`: all of them). Each run costs Dagster a fixed overhead
(plan, resources, event log), so the requests of one tick are merged into a single run of ``marts_job`` whose
asset selection is the union of the requesting jobs' assets. What differs per job travels as per-asset
tags: the days to rebuild (``stacklens/days.<asset>``) and the watermark to advance
(``stacklens/watermark.<asset>``); the partition range spans all requested days. The outcome is still
reported per requesting job (same run id), so callers see which job did what."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field
from typing import Any

import dagster as dg

from pipelines import warehouse_ops as ops
from pipelines.jobs import marts_job
from pipelines.planning import RANGE_END_TAG, RANGE_START_TAG

logger = logging.getLogger(__name__)
SCHEDULES_TAG = "stacklens/schedules"
JOBS_TAG = "stacklens/jobs"


@dataclass
class RunOutcome:
    """One executed run: per asset the rows it wrote (``row_count`` metadata), per check whether it passed."""

    job: str
    run_id: str
    success: bool
    error: str = ""
    assets: dict[str, int | None] = field(default_factory=dict)
    checks: dict[str, bool] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Planned:
    """A run request of one schedule's job, not executed yet."""

    schedule: str
    job: str
    request: dg.RunRequest


def _asset_results(result: Any) -> tuple[dict[str, int | None], dict[str, bool]]:
    assets: dict[str, int | None] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        count = materialization.metadata.get("row_count")
        assets[materialization.asset_key.to_user_string()] = int(count.value) if count is not None else None
    checks = {
        f"{e.asset_key.to_user_string()}:{e.check_name}": bool(e.passed)
        for e in result.get_asset_check_evaluations()
    }
    return assets, checks


def _failure_text(event: dg.DagsterEvent) -> str:
    """The underlying error of a failure event (the step's exception), else the event's message."""
    error = getattr(event.event_specific_data, "error", None)
    if error is None:
        return event.message or ""
    # Dagster wraps the asset's exception ("Error occurred while executing op ..."); the operator needs the
    # innermost cause (the warehouse's own message), so it is appended.
    root = error
    while getattr(root, "cause", None) is not None:
        root = root.cause
    text = f"{event.message}: {error.message.strip()}"
    if root is not error:
        text += f" caused by {root.message.strip()}"
    return text


def execute_request(
    defs: dg.Definitions,
    job_name: str,
    request: dg.RunRequest,
    instance: dg.DagsterInstance,
    extra_tags: dict[str, str] | None = None,
) -> RunOutcome:
    """Execute one run request in-process; failures are recorded in the instance and logged, never raised."""
    job = defs.resolve_job_def(job_name)
    tags = {**dict(request.tags or {}), **(extra_tags or {})}
    try:
        result = job.execute_in_process(
            instance=instance,
            tags=tags,
            raise_on_error=False,
            partition_key=request.partition_key,
            run_config=request.run_config or None,
        )
    except Exception as exc:  # a definition or storage fault: keep the runner alive, report it
        logger.exception("pipeline job %s could not start", job_name)
        return RunOutcome(job_name, "", False, str(exc))
    assets, checks = _asset_results(result)
    if result.success:
        return RunOutcome(job_name, result.run_id, True, "", assets, checks)
    errors = [_failure_text(e) for e in result.all_events if e.is_failure]
    error = errors[0] if errors else "run failed"
    logger.error("pipeline run %s of %s failed: %s", result.run_id, job_name, error)
    return RunOutcome(job_name, result.run_id, False, error, assets, checks)


def _job_assets(defs: dg.Definitions, job_name: str) -> list[str]:
    keys = defs.resolve_job_def(job_name).asset_layer.executable_asset_keys
    return sorted(k.to_user_string() for k in keys)


def _job_steps(defs: dg.Definitions, job_name: str) -> list[str]:
    """The ops of a job's assets: a step is named after its op, which for a multi-asset (the performance
    steps, each writing several tables) is not one of its assets' names."""
    return sorted(node.name for node in defs.resolve_job_def(job_name).graph.nodes)


def merged_tags(defs: dg.Definitions, planned: list[Planned]) -> dict[str, str]:
    """The tags of one run standing for all of ``planned``: per-asset days and watermarks, the whole range."""
    tags: dict[str, str] = {
        "dagster/schedule_name": planned[0].schedule,
        SCHEDULES_TAG: ",".join(p.schedule for p in planned),
        JOBS_TAG: ",".join(p.job for p in planned),
    }
    starts, ends = [], []
    for item in planned:
        own = dict(item.request.tags or {})
        if RANGE_START_TAG in own:
            starts.append(own[RANGE_START_TAG])
            ends.append(own[RANGE_END_TAG])
        for asset in _job_assets(defs, item.job):
            for base in (ops.DAYS_TAG, ops.WATERMARK_TAG):
                if base in own:
                    tags[ops.asset_tag(base, asset)] = own[base]
    if starts:
        # ISO dates: string order is date order.
        tags[RANGE_START_TAG], tags[RANGE_END_TAG] = min(starts), max(ends)
    return tags


def _job_failed(assets: list[str], failures: list[dg.DagsterEvent]) -> str:
    """The first failure of a step of these assets or ops or their checks (``<asset>_<check>``), else ''."""
    for event in failures:
        step = event.step_key or ""
        if not step or any(step == a or step.startswith(f"{a}_") for a in assets):
            return _failure_text(event)
    return ""


def execute_merged(
    defs: dg.Definitions, planned: list[Planned], instance: dg.DagsterInstance
) -> list[RunOutcome]:
    """Execute ``planned`` (several jobs' requests) as one run of ``marts_job``; one outcome per job."""
    per_job = {p.job: _job_assets(defs, p.job) for p in planned}
    selection = [dg.AssetKey.from_user_string(a) for assets in per_job.values() for a in assets]
    try:
        result = defs.resolve_job_def(marts_job.name).execute_in_process(
            instance=instance,
            tags=merged_tags(defs, planned),
            raise_on_error=False,
            asset_selection=selection,
        )
    except Exception as exc:  # a definition or storage fault: keep the runner alive, report it
        logger.exception("pipeline run of %s could not start", ", ".join(per_job))
        return [RunOutcome(job, "", False, str(exc)) for job in per_job]
    assets, checks = _asset_results(result)
    failures = [e for e in result.all_events if e.is_failure]
    outcomes = []
    for job, names in per_job.items():
        error = _job_failed([*names, *_job_steps(defs, job)], failures) if not result.success else ""
        if not error and any(name not in assets for name in names):
            error = "run failed before materializing " + ", ".join(n for n in names if n not in assets)
        if error:
            logger.error("pipeline run %s (%s) failed: %s", result.run_id, job, error)
        outcomes.append(
            RunOutcome(
                job,
                result.run_id,
                not error,
                error,
                {a: n for a, n in assets.items() if a in names},
                {c: ok for c, ok in checks.items() if c.split(":", 1)[0] in names},
            )
        )
    return outcomes


def execute_planned(
    defs: dg.Definitions, planned: list[Planned], instance: dg.DagsterInstance
) -> list[RunOutcome]:
    """One request runs as its own job's run (as the Dagster daemon would); several run merged."""
    if len(planned) == 1:
        item = planned[0]
        return [
            execute_request(defs, item.job, item.request, instance, {"dagster/schedule_name": item.schedule})
        ]
    return execute_merged(defs, planned, instance) if planned else []


__all__ = ["Planned", "RunOutcome", "execute_merged", "execute_planned", "execute_request", "merged_tags"]
