"""What a tick runs: a skip while nothing new arrived, else one run over the days that received data."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import dagster as dg

from pipelines import warehouse_ops as ops
from pipelines.planning import RANGE_END_TAG, RANGE_START_TAG, plan_incremental_run, plan_partitioned_run
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations


def test_skip_until_data_arrives_then_one_run_over_its_days(settings: Settings) -> None:
    apply_migrations(settings)
    client = get_warehouse(settings)
    today = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    assets, tables = ["pageload_facts"], ["transactions"]
    assert isinstance(plan_incremental_run(client, "performance", assets), dg.SkipReason)
    assert isinstance(
        plan_partitioned_run(client, "performance", assets, tables, today.date()), dg.SkipReason
    )

    received = today + timedelta(minutes=3)
    client.insert("raw_received", [["transactions", received]], column_names=["source", "received"])
    client.insert(
        "raw_arrival_hours",
        [["transactions", 1, today - timedelta(days=1), received], ["transactions", 1, today, received]],
        column_names=["source", "project_id", "hour", "received"],
    )
    run = plan_partitioned_run(client, "performance", assets, tables, today.date())
    assert isinstance(run, dg.RunRequest)
    days = [(today - timedelta(days=1)).date().isoformat(), today.date().isoformat()]
    assert run.tags[ops.DAYS_TAG] == ",".join(days)
    assert (run.tags[RANGE_START_TAG], run.tags[RANGE_END_TAG]) == (days[0], days[-1])
    assert run.run_key == f"performance:{received.isoformat()}"
    assert isinstance(plan_incremental_run(client, "issues", ["issues"]), dg.RunRequest)

    # Once the assets' watermark has caught up, the next tick skips again.
    ops.set_watermark(client, "pageload_facts", received)
    assert isinstance(plan_incremental_run(client, "performance", assets), dg.SkipReason)
