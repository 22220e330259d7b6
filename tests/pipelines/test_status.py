"""`stacklens pipelines status`: the recent runs newest first, the failed ones, and every mart's rows."""

from __future__ import annotations

import dagster as dg
import pytest

from pipelines.status import MART_TABLES, pipeline_status
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations


@dg.asset
def fine() -> None:
    return None


@dg.asset
def broken() -> None:
    raise RuntimeError("the warehouse said no")


def test_runs_failures_and_mart_rows(settings: Settings) -> None:
    apply_migrations(settings)
    client = get_warehouse(settings)
    # Disposed at the end: an instance left to the garbage collector removes its temporary directory then,
    # with a ResourceWarning that fails whichever later test is running.
    with dg.DagsterInstance.ephemeral() as instance:
        dg.materialize([fine], instance=instance, tags={"dagster/schedule_name": "issues_every_minute"})
        with pytest.raises(RuntimeError):
            dg.materialize([broken], instance=instance)
        status = pipeline_status(client, instance)
        assert [run["status"] for run in status["runs"]] == ["FAILURE", "SUCCESS"]
        assert status["runs"][1]["schedule"] == "issues_every_minute"
        assert status["runs"][1]["started_at"].endswith("Z") and status["runs"][1]["ended_at"].endswith("Z")
        assert [f["run_id"] for f in status["failures"]] == [status["runs"][0]["run_id"]]
        assert status["marts"] == dict.fromkeys(MART_TABLES, 0)
