"""The data-driven jobs' inputs: per job, the raw tables it reads and the watermarks its runs advance.

Kept apart from ``pipelines/jobs.py`` (which defines the jobs with Dagster, and re-exports these) so that the
embedded runner's idle check (``pipelines/idle.py``) can compare the watermarks with the newest row landed
without importing Dagster.
"""

from __future__ import annotations

# Per partitioned job: the watermarks its run advances (an asset's, or for the performance steps their facts')
# and the raw tables it reads.
PARTITIONED_JOB_INPUTS: dict[str, tuple[list[str], list[str]]] = {
    "performance_job": (
        ["pageload_facts", "resource_facts", "endpoint_facts", "inp_interactions"],
        ["transactions", "spans"],
    ),
    "sessions_job": (["session_periods"], ["sessions"]),
}
# Per incremental job: the watermarks of its steps (an asset's, or the `event_counters` step's own).
INCREMENTAL_JOB_WATERMARKS: dict[str, list[str]] = {
    "issues_job": ["event_counters", "issues", "related_issues"],
}


def data_driven_watermarks() -> list[str]:
    """Every watermark a data-driven job's plan compares with the newest row landed: when none is older than
    that row, every such plan skips."""
    names = [name for assets, _tables in PARTITIONED_JOB_INPUTS.values() for name in assets]
    names += [name for assets in INCREMENTAL_JOB_WATERMARKS.values() for name in assets]
    return list(dict.fromkeys(names))
