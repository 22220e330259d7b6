"""The metric catalog: every metric once, with consistent statistics, thresholds and states; the states it
names are real tables and columns of the migrated warehouse; and the budget, rule and score definitions are
views of it (the existing keys stay valid)."""

from __future__ import annotations

import pytest

from stacklens.alerts import rule_types
from stacklens.metrics.catalog import ALIASES, CATALOG, UnknownMetric, budget_metrics, find, get
from stacklens.metrics.statistics import STATISTICS
from stacklens.performance import budget_rules

# The keys budgets and alert rules have stored since they exist: they must keep working.
STORED_KEYS = (
    "load_time_ms",
    "lcp_ms",
    "inp_ms",
    "cls",
    "fcp_ms",
    "ttfb_ms",
    "js_bytes",
    "transfer_bytes",
    "api_p95_ms",
    "error_pct",
    "api_ms",
    "uptime_pct",  # issue 64: an uptime budget (a floor: higher is better)
    # issue 69: the INP parts and the third parties' script time
    "inp_input_delay_ms",
    "inp_processing_ms",
    "inp_presentation_ms",
    "inp_third_party_ms",
)


def test_every_metric_is_defined_once_and_consistently() -> None:
    assert len({m.key for m in CATALOG.values()}) == len(CATALOG)
    assert not set(ALIASES) & set(CATALOG), "an alias shadows a metric key"
    stems = [m.column_stem for m in CATALOG.values() if m.same_as is None]
    assert len(stems) == len(set(stems)), "two metrics would name their columns alike"
    for metric in CATALOG.values():
        assert metric.statistics and metric.default_statistic in metric.statistics, metric.key
        assert set(metric.statistics) <= set(STATISTICS), metric.key
        assert metric.states and metric.label and metric.short_label and metric.description, metric.key
        if metric.fixed_statistic:
            assert len(metric.statistics) == 1, metric.key
        if metric.same_as is not None:
            base, statistic = metric.same_as
            assert statistic in CATALOG[base].statistics and metric.unit == CATALOG[base].unit
    for key in STORED_KEYS:
        assert get(key).key == key
    assert get("lcp") is CATALOG["lcp_ms"] and find("speed") is None
    with pytest.raises(UnknownMetric, match="unknown metric 'speed'; use one of load_time_ms"):
        get("speed")


def test_budget_rule_and_window_definitions_are_views_of_the_catalog() -> None:
    assert list(budget_rules.METRICS) == list(budget_metrics()) == list(rule_types.METRICS)
    assert set(STORED_KEYS) == set(budget_rules.METRICS)
    for key, budget in budget_rules.METRICS.items():
        metric = CATALOG[key]
        assert (budget.label, budget.unit) == (metric.label, metric.unit.symbol)
        assert budget.statistics[0] == metric.default_statistic
        assert set(budget.statistics) == set(metric.statistics)
        assert budget_rules.BUDGET_METRICS[key] == (metric.label, metric.unit.symbol)
    # The units budgets have always answered with.
    assert {k: u for k, (_, u) in budget_rules.BUDGET_METRICS.items()} == {
        "load_time_ms": "ms",
        "ttfb_ms": "ms",
        "fcp_ms": "ms",
        "lcp_ms": "ms",
        "inp_ms": "ms",
        "cls": "",
        "api_ms": "ms",
        "api_p95_ms": "ms",
        "error_pct": "%",
        "js_bytes": "bytes",
        "transfer_bytes": "bytes",
        "uptime_pct": "%",
        "inp_input_delay_ms": "ms",
        "inp_processing_ms": "ms",
        "inp_presentation_ms": "ms",
        "inp_third_party_ms": "ms",
    }
    assert {
        "api_p95_ms",
        "js_bytes",
        "transfer_bytes",
        "error_pct",
        "uptime_pct",
    } == budget_rules.FIXED_STATISTIC


def test_every_state_the_catalog_names_is_a_table_and_columns_of_the_warehouse(client) -> None:
    rows = client.query(
        "SELECT table, name FROM system.columns WHERE database = currentDatabase()"
    ).result_rows
    columns: dict[str, set[str]] = {}
    for table, name in rows:
        columns.setdefault(str(table), set()).add(str(name))
    for metric in CATALOG.values():
        for state in metric.states:
            assert state.table in columns, (metric.key, state.table)
            for column in state.columns:
                base = column.split("[", 1)[0]  # measurements['lcp'] is a key of the measurements map
                assert base in columns[state.table], (metric.key, state.table, column)
