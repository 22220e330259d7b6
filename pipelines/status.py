"""What `stacklens pipelines status` shows: the recent runs, the failed ones, and each mart's row count.

Marts span every organization, so this is an operator's view: the CLI reads it directly, or through the
running server's token-protected local endpoint (never with an organization's API key).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import dagster as dg
from clickhouse_connect.driver.client import Client

from pipelines.execution import JOBS_TAG
from stacklens.warehouse.queries import identifier, load_query

# The tables the assets write that pages, the API, budgets and alerts read (table names are constants, never
# input). The performance facts are left out: they are read only by the states built from them, and counting
# one row per request with FINAL would cost this view more than everything else it shows.
MART_TABLES: tuple[str, ...] = (
    "issues",
    "related_issues",
    "pageload_periods",
    "pageload_examples",
    "resource_request_periods",
    "endpoint_call_periods",
    "budget_status",
)


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return datetime.fromtimestamp(timestamp, UTC).isoformat().replace("+00:00", "Z")


def recent_runs(instance: dg.DagsterInstance, limit: int = 20) -> list[dict[str, Any]]:
    """The newest runs first: job (and the scheduled jobs it stood for), status, start and end, schedule."""
    out = []
    for record in instance.get_run_records(limit=limit):
        run = record.dagster_run
        out.append(
            {
                "run_id": run.run_id,
                "job": run.job_name,
                # a merged tick run stands for several scheduled jobs
                "jobs": run.tags.get(JOBS_TAG, run.job_name).split(","),
                "status": run.status.value,
                "schedule": run.tags.get("dagster/schedule_name", ""),
                "started_at": _iso(record.start_time),
                "ended_at": _iso(record.end_time),
            }
        )
    return out


def mart_rows(client: Client) -> dict[str, int]:
    """Current rows of every mart (after replacement: ``FINAL``)."""
    query = load_query("pipelines/mart_rows")
    counts = {}
    for table in MART_TABLES:
        rows = client.query(query, parameters={"table": identifier(table, MART_TABLES)}).result_rows
        counts[table] = int(rows[0][0])
    return counts


def pipeline_status(client: Client, instance: dg.DagsterInstance, limit: int = 20) -> dict[str, Any]:
    runs = recent_runs(instance, limit)
    failed = instance.get_run_records(
        filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.FAILURE]), limit=limit
    )
    return {
        "runs": runs,
        "failures": [
            {"run_id": r.dagster_run.run_id, "job": r.dagster_run.job_name, "ended_at": _iso(r.end_time)}
            for r in failed
        ],
        "marts": mart_rows(client),
    }
