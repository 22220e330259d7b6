"""The `event_counters` step: every insert-time table it keeps is an asset of its own name, each table that
counts events has a check built from its comparison query; in a scheduled tick a batch whose events were
stored before a crash cut its views off is counted again, the checks show what was compared and added back,
the marts built on the tables follow, and a table left short after the run fails its own check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from clickhouse_connect.driver.client import Client

from pipelines import warehouse_ops as ops
from pipelines.assets import event_counters as step
from pipelines.embedded import materialize_now
from pipelines.jobs import INSERT_TIME_ASSETS
from stacklens.issues import counters
from stacklens.settings import Settings
from stacklens.warehouse.queries import QUERIES_DIR
from tests.pipelines.counter_figures import differences
from tests.stacklens.issues.crashed_landing import PROJECT, event_lines, land, land_with_views_lost

COUNTED = [t.name for t in counters.COUNTED_TABLES]


def check_key(table: str) -> str:
    return f"{table}:{table}_matches_events"


def test_each_insert_time_table_is_an_asset_and_each_counted_one_has_its_check(defs: dg.Definitions) -> None:
    graph = defs.resolve_asset_graph()
    owned = {k.to_user_string() for k in graph.get_all_asset_keys() if graph.get(k).group_name == step.GROUP}
    kept = {t.name for t in step.TABLES}
    assert kept == set(INSERT_TIME_ASSETS) and kept <= owned
    assert set(COUNTED) == {
        "issue_live_counters",
        "issue_totals_daily",
        "issue_facets_daily",
        "issue_tags_daily",
        "release_error_counts",
    }
    checks = {k.to_user_string() for k in graph.asset_check_keys}
    assert {check_key(t) for t in COUNTED} <= checks
    for table in COUNTED:  # each check is its table's comparison (and the repair that goes with it)
        assert (QUERIES_DIR / "pipelines" / f"{table}_compare.sql").is_file()
        assert (QUERIES_DIR / "pipelines" / f"{table}_repair.sql").is_file()
    job = defs.resolve_job_def("issues_job")
    assert {n.name for n in job.graph.nodes} == {"event_counters", "issues", "related_issues"}
    # The marts read after the step: the issue list's mart and related issues depend on its tables.
    issues = graph.get(dg.AssetKey("issues"))
    assert {"issue_live_counters", "issue_rollup", "issue_element_arrivals"} <= {
        k.to_user_string() for k in issues.parent_keys
    }


def tick(defs: dg.Definitions, instance: dg.DagsterInstance) -> dict[str, dict[str, Any]]:
    """What `stacklens pipelines run` does for the issues; per counted table its check's metadata."""
    outcomes = materialize_now(defs, instance, ["issues"])
    assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes]
    assert set(INSERT_TIME_ASSETS) <= {a for o in outcomes for a in o.assets}
    out = {}
    for table in COUNTED:
        record = instance.get_latest_asset_check_evaluation_record(
            dg.AssetCheckKey(dg.AssetKey(table), f"{table}_matches_events")
        )
        assert record is not None and record.event is not None
        evaluation = record.event.asset_check_evaluation
        assert evaluation is not None
        out[table] = {"passed": evaluation.passed, **{k: v.value for k, v in evaluation.metadata.items()}}
    return out


def test_a_tick_counts_a_crashed_batch_again_and_each_check_shows_it(
    settings: Settings, warehouse: Client, defs: dg.Definitions, instance: dg.DagsterInstance
) -> None:
    land(settings, event_lines(30), "batch-a")
    quiet = tick(defs, instance)
    assert all(c["passed"] and c["keys_compared"] == 0 for c in quiet.values()), quiet
    assert differences(warehouse, PROJECT) == {}

    lost = event_lines(20, start=30)
    land_with_views_lost(settings, warehouse, lost, "batch-b")
    assert land(settings, lost, "batch-b").duplicates == 20
    assert "issue_live_counters" in differences(warehouse, PROJECT)

    repaired = tick(defs, instance)

    for table in COUNTED:  # each counted table missed the 20 events, and counts them after the repair
        found = repaired[table]
        assert found["passed"] and found["events_missing"] == 20, (table, found)
        assert found["events_missing_after_repair"] == 0 and found["keys_short"] > 0
        assert found["dead_attempt_rows"] == 20
    assert repaired["issue_live_counters"]["keys_compared"] == 3  # the three issues of the lost batch
    # The issues mart (events, users affected) is rebuilt in the same run, from the corrected counters.
    issues = warehouse.query(
        "SELECT sum(events) FROM issues FINAL WHERE project_id = {p:UInt64}", parameters={"p": PROJECT}
    ).result_rows[0][0]
    assert issues == 50
    assert differences(warehouse, PROJECT) == {}

    land(settings, event_lines(5, start=50), "batch-c")
    again = tick(defs, instance)
    assert all(c["events_missing"] == 0 for c in again.values()), "an attempt was repaired twice"
    assert differences(warehouse, PROJECT) == {}
    assert ops.get_watermarks(warehouse, [step.STEP])[step.STEP] > ops.EPOCH


def test_a_table_left_short_fails_its_own_check(
    settings: Settings,
    warehouse: Client,
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The daily totals lose a batch's block and their repair does not take: their check fails with the events
    still missing, and the other tables' checks pass; the run itself succeeds (a check reports, the marts
    go on)."""
    land(settings, event_lines(10), "batch-a")
    lost = event_lines(12, start=10)
    land_with_views_lost(settings, warehouse, lost, "batch-b", ["issue_totals_daily_mv"])
    assert land(settings, lost, "batch-b").duplicates == 12  # the resend: the attempt before it is dead
    repair = counters._repair

    def repair_all_but_the_totals(client: Client, table: counters.CountedTable, short: list[Any]) -> None:
        if table.name != "issue_totals_daily":
            repair(client, table, short)

    monkeypatch.setattr(counters, "_repair", repair_all_but_the_totals)

    found = tick(defs, instance)

    assert not found["issue_totals_daily"]["passed"]
    assert found["issue_totals_daily"]["events_missing_after_repair"] == 12
    assert all(
        found[t]["passed"] and found[t]["events_missing"] == 0 for t in COUNTED if t != "issue_totals_daily"
    )
    assert set(differences(warehouse, PROJECT)) == {"issue_totals_daily"}


def test_the_step_module_names_a_query_file_per_check() -> None:
    names = {p.stem for p in Path(QUERIES_DIR, "pipelines").glob("*_compare.sql")}
    assert names == {f"{t}_compare" for t in COUNTED}
