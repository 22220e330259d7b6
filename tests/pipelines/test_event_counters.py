"""The `event_counters` asset in a scheduled tick: a batch whose events were stored before a crash cut its views
off is counted again in one tick, its check shows what was compared and added back, and the marts built on the
counters follow."""

from __future__ import annotations

from typing import Any

import dagster as dg
from clickhouse_connect.driver.client import Client

from pipelines import warehouse_ops as ops
from pipelines.embedded import materialize_now
from stacklens.settings import Settings
from tests.pipelines.counter_figures import differences
from tests.stacklens.issues.crashed_landing import PROJECT, event_lines, land, land_with_views_lost

CHECK = "event_counters:event_counters_match_events"


def tick(defs: dg.Definitions, instance: dg.DagsterInstance) -> dict[str, Any]:
    """What `stacklens pipelines run` does for the issues (and daily counts); the counters check's metadata."""
    outcomes = materialize_now(defs, instance, ["issues", "issue_daily_counts"])
    assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes]
    assert all(o.checks.get(CHECK, True) for o in outcomes), [o.checks for o in outcomes]
    assert any(CHECK in o.checks for o in outcomes)
    record = instance.get_latest_asset_check_evaluation_record(
        dg.AssetCheckKey(dg.AssetKey("event_counters"), "event_counters_match_events")
    )
    assert record is not None and record.event is not None
    evaluation = record.event.asset_check_evaluation
    assert evaluation is not None
    return {k: v.value for k, v in evaluation.metadata.items()}


def test_a_tick_counts_a_crashed_batch_again_and_its_check_shows_it(
    settings: Settings, warehouse: Client, defs: dg.Definitions, instance: dg.DagsterInstance
) -> None:
    land(settings, event_lines(30), "batch-a")
    quiet = tick(defs, instance)
    assert (quiet["dead_attempts"], quiet["events_missing_found"]) == (0, 0)
    assert differences(warehouse, PROJECT) == {}

    lost = event_lines(20, start=30)
    land_with_views_lost(settings, warehouse, lost, "batch-b")
    assert land(settings, lost, "batch-b").duplicates == 20
    assert "issue_live_counters" in differences(warehouse, PROJECT)

    repaired = tick(defs, instance)

    assert repaired["dead_attempts"] == 1 and repaired["dead_attempt_rows"] == 20
    assert repaired["events_missing_found"] == 6 * 20  # each of the six counted tables missed the 20 events
    assert repaired["events_missing_after_repair"] == 0 and repaired["keys_repaired"] > 0
    assert "| issue_live_counters | 3 | 3 | 20 | 0 | 0 | 0 |" in repaired["comparison"]
    # The issues mart (events, users affected) is rebuilt in the same run, from the corrected counters.
    stored = warehouse.query(
        "SELECT count() FROM events WHERE project_id = {p:UInt64}", parameters={"p": PROJECT}
    ).result_rows[0][0]
    assert stored == 50
    issues = warehouse.query(
        "SELECT sum(events) FROM issues FINAL WHERE project_id = {p:UInt64}", parameters={"p": PROJECT}
    ).result_rows[0][0]
    assert issues == 50
    # The repaired days were marked arrived: the next tick (daily counts alone) rebuilds their counts.
    daily = materialize_now(defs, instance, ["issue_daily_counts"])
    assert [o.job for o in daily] == ["issue_counts_job"] and daily[0].success
    assert differences(warehouse, PROJECT) == {}

    land(settings, event_lines(5, start=50), "batch-c")
    again = tick(defs, instance)
    assert (again["dead_attempts"], again["events_missing_found"]) == (0, 0), "an attempt was repaired twice"
    assert differences(warehouse, PROJECT) == {}
    assert ops.get_watermarks(warehouse, ["event_counters"])["event_counters"] > ops.EPOCH
