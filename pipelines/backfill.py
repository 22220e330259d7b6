"""Backfills: rebuild the daily-partitioned marts for a range of days, as data engineers know them from
Dagster.

`stacklens pipelines backfill --from 2026-11-01 --to 2026-11-20 [--select KEY …]` (through the running server
when it owns the embedded warehouse, `POST /api/pipelines/backfill`) runs each partitioned job whose assets
are selected once over the whole range (one run per job, as ``BackfillPolicy.single_run`` runs it from the
UI), with the range as the run's partition range and no scheduler's day list: its assets rebuild every day
and hour of the range (pipelines/assets/common.py, ``run_days``) and advance no watermark (the schedules'
reading position stays where it was). The runs are recorded in the Dagster instance like any other, so the
UI's partitions bar shows the days as materialized."""

from __future__ import annotations

import dagster as dg

from pipelines.backfill_range import BackfillError, BackfillRange
from pipelines.execution import RunOutcome, execute_request
from pipelines.jobs import PARTITIONED_JOB_INPUTS
from pipelines.planning import RANGE_END_TAG, RANGE_START_TAG

BACKFILL_TAG = "stacklens/backfill"


def backfill_jobs(defs: dg.Definitions, select: list[str] | None) -> list[str]:
    """The partitioned jobs holding the selected assets (every one without ``select``)."""
    chosen = []
    for name in PARTITIONED_JOB_INPUTS:
        keys = {k.to_user_string() for k in defs.resolve_job_def(name).asset_layer.executable_asset_keys}
        if not select or keys.intersection(select):
            chosen.append(name)
    if select and not chosen:
        raise BackfillError(
            f"--select: none of {', '.join(select)} is a daily-partitioned asset; a backfill rebuilds those "
            "(`stacklens pipelines run` refreshes the others)"
        )
    return chosen


def run_backfill(
    defs: dg.Definitions, instance: dg.DagsterInstance, days: BackfillRange, select: list[str] | None = None
) -> list[RunOutcome]:
    """One run per partitioned job over ``days``; failures are in the outcomes, never raised."""
    tags = {
        RANGE_START_TAG: days.first.isoformat(),
        RANGE_END_TAG: days.last.isoformat(),
        BACKFILL_TAG: f"{days.first.isoformat()}...{days.last.isoformat()}",
    }
    return [
        execute_request(defs, job, dg.RunRequest(tags=tags), instance) for job in backfill_jobs(defs, select)
    ]
