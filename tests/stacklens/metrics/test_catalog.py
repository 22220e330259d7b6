"""The metric catalog: every metric once, with consistent statistics, thresholds and states; the states it
names are real tables and columns of the migrated warehouse; and the budget, rule and score definitions are
views of it (the existing keys stay valid)."""

from __future__ import annotations

import math
import random

import pytest

from stacklens.alerts import rules
from stacklens.metrics.catalog import ALIASES, CATALOG, UnknownMetric, budget_metrics, find, get, web_vitals
from stacklens.metrics.statistics import HISTOGRAM_BUCKET_RATIO, QUANTILE_RELATIVE_ERROR, STATISTICS
from stacklens.performance import budget_rules, metric_window, score

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


def test_the_error_rate_has_one_definition_and_no_other_metric_is_called_so() -> None:
    # error_pct (endpoints view, budgets, rules) and api_error_pct (the releases view's browser calls) are one
    # definition over the API-call states; the error_rate rule type watches failed transactions, named so.
    labels = [m.label for m in CATALOG.values()]
    assert len(labels) == len(set(labels))
    assert {k for k, m in CATALOG.items() if "error rate" in m.label.lower()} == {
        "error_pct",
        "api_error_pct",
    }
    definition = (
        "Share of API calls answered with an HTTP 4xx or 5xx status, over all calls of the scope (calls without a "
        "status count in the denominator only)."
    )
    assert CATALOG["error_pct"].description.startswith(definition)
    assert CATALOG["api_error_pct"].description.startswith(definition)
    assert [(s.table, s.read_by_rules) for s in CATALOG["error_pct"].states] == [
        ("endpoint_call_periods", True)
    ]
    assert {"s4xx", "s5xx", "calls"} <= set(CATALOG["error_pct"].states[0].columns)
    assert [s.columns for s in CATALOG["api_error_pct"].states] == [("api_calls", "api_errors")]
    failed = CATALOG["failed_transactions_pct"]
    assert failed.label == rules.TYPE_LABELS["error_rate"] == "Failed transactions" and not failed.budget
    assert not any("error rate" in label.lower() for label in rules.TYPE_LABELS.values())


def test_web_vital_thresholds_are_googles_and_the_score_bands_lighthouses() -> None:
    assert {
        name: (m.thresholds.good, m.thresholds.poor) for name, m in web_vitals().items() if m.thresholds
    } == {
        "lcp": (2500.0, 4000.0),
        "inp": (200.0, 500.0),
        "cls": (0.1, 0.25),
        "fcp": (1800.0, 3000.0),
        "ttfb": (800.0, 1800.0),
    }
    assert {n: (m.thresholds.good, m.thresholds.poor) for n, m in web_vitals().items()} == score.THRESHOLDS
    lcp = CATALOG["lcp_ms"].thresholds
    assert lcp is not None
    assert [lcp.rating(v) for v in (2500, 2500.1, 4000, 4000.1, None)] == [
        "good",
        "needs improvement",
        "needs improvement",
        "poor",
        "",
    ]
    assert [score.score_rating(v) for v in (90, 89.9, 50, 49.9, None)] == [
        "good",
        "needs improvement",
        "needs improvement",
        "poor",
        "",
    ]


def test_budget_rule_and_window_definitions_are_views_of_the_catalog() -> None:
    assert list(budget_rules.METRICS) == list(budget_metrics()) == list(rules.METRICS)
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
    }
    assert {"api_p95_ms", "js_bytes", "transfer_bytes", "error_pct"} == budget_rules.FIXED_STATISTIC
    for key, (label, unit, _, statistics, _, _) in metric_window.METRICS.items():
        assert (label, unit, statistics) == (
            CATALOG[key].label,
            CATALOG[key].unit.symbol,
            CATALOG[key].statistics,
        )


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


def test_the_stated_percentile_error_bounds_the_log_histogram_representation() -> None:
    # The states keep a value as the bucket round(ln(v) * 100) (buckets 1 % apart); a percentile of the bucket
    # centres is within the catalog's stated error of the exact percentile, for skewed and narrow data alike.
    assert HISTOGRAM_BUCKET_RATIO == QUANTILE_RELATIVE_ERROR == 0.01
    assert CATALOG["lcp_ms"].error == QUANTILE_RELATIVE_ERROR and CATALOG["page_loads"].error == 0.0
    rng = random.Random(7)
    for values in (
        [rng.lognormvariate(7.5, 0.6) for _ in range(5000)],
        [rng.uniform(1800, 2200) for _ in range(400)],
        [rng.uniform(0.01, 0.4) for _ in range(300)],
    ):
        exact_sorted = sorted(values)
        kept = sorted(math.exp(round(math.log(v) * 100) / 100) for v in values)
        for q in (0.5, 0.75, 0.9, 0.95, 0.99):
            rank = q * (len(values) - 1)
            low, frac = int(rank), rank - int(rank)
            high = min(low + 1, len(values) - 1)
            exact = exact_sorted[low] + (exact_sorted[high] - exact_sorted[low]) * frac
            approx = kept[low] + (kept[high] - kept[low]) * frac
            assert abs(approx - exact) <= QUANTILE_RELATIVE_ERROR * exact, (q, approx, exact)
