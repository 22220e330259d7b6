"""The regroup (stacklens/issues/regroup.py) finds the tables it feeds again in the engine."""

from __future__ import annotations

from clickhouse_connect.driver.client import Client

from stacklens.warehouse.queries import run_query


def test_every_insert_time_table_keyed_by_issue_is_fed_again(warehouse: Client) -> None:
    """The regroup finds its tables in the engine: every view over `events` whose table is keyed by issue."""
    targets = {str(r["target"]) for r in run_query(warehouse, "issues/merges/fed_tables")}
    views = warehouse.query(
        "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine = 'MaterializedView'"
    ).result_rows
    assert len(views) > len(targets)  # the raw marks and release counts are not keyed by issue
    assert targets == {
        "issue_element_arrivals",
        "issue_facets_daily",
        "issue_live_counters",
        "issue_rollup",
        "issue_tags_daily",
        "issue_totals_daily",
    }, sorted(str(v[0]) for v in views)
