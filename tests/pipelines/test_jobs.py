"""The jobs: each selects assets that exist and share one partitioning; the planning tables name real jobs."""

from __future__ import annotations

from pipelines.definitions import defs
from pipelines.jobs import (
    ALL_JOBS,
    INCREMENTAL_JOB_WATERMARKS,
    PARTITIONED_JOB_INPUTS,
    PERFORMANCE_ASSETS,
    SERIAL_TAG,
)

RAW_TABLES = {"events", "transactions", "spans", "sessions"}


def test_every_job_resolves_to_existing_assets() -> None:
    graph = defs.resolve_asset_graph()
    for job in ALL_JOBS:
        keys = {key.to_user_string() for key in job.selection.resolve(graph)}
        assert keys, job.name
        partitionings = {str(graph.get(key).partitions_def) for key in job.selection.resolve(graph)}
        if job.name != "marts_job":
            assert len(partitionings) == 1, (job.name, partitionings)
    performance = next(job for job in ALL_JOBS if job.name == "performance_job")
    assert {key.to_user_string() for key in performance.selection.resolve(graph)} == set(PERFORMANCE_ASSETS)


def test_the_planning_tables_name_jobs_assets_and_raw_tables() -> None:
    names = {job.name for job in ALL_JOBS}
    graph_keys = {key.to_user_string() for key in defs.resolve_asset_graph().get_all_asset_keys()}
    for job, (watermarks, tables) in PARTITIONED_JOB_INPUTS.items():
        assert job in names and set(watermarks) <= graph_keys and set(tables) <= RAW_TABLES
    for job, watermarks in INCREMENTAL_JOB_WATERMARKS.items():
        # A watermark is an asset's, or a multi-asset step's (named after its op).
        steps = {node.name for node in defs.resolve_job_def(job).graph.nodes}
        assert job in names and set(watermarks) <= graph_keys | steps
    issues = next(job for job in ALL_JOBS if job.name == "issues_job")
    assert issues.tags == {SERIAL_TAG: "issues"}
