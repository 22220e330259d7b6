"""The metrics budgets and alert rules may name with a percentile, the statistics each allows, and their validation.

How a metric's value over a window is read — from the same states, windows and rounding as the performance
views, for rules, budgets and their previews alike — is :mod:`stacklens.performance.window_values`; its names are
re-exported here for the callers that import them from this module.
"""

from __future__ import annotations

from stacklens.errors import InvalidInput
from stacklens.metrics.catalog import CATALOG
from stacklens.metrics.definition import LOG_HISTOGRAM, Metric
from stacklens.performance.window_series import series
from stacklens.performance.window_values import (
    WindowRequest,
    WindowValue,
    compute,
    compute_many,
    like_pattern,
)

__all__ = [
    "METRICS",
    "STATISTICS",
    "MetricWindowError",
    "WindowRequest",
    "WindowValue",
    "compute",
    "compute_many",
    "like_pattern",
    "series",
    "validate",
]


def _definition(metric: Metric) -> tuple[str, str, str, tuple[str, ...], str, str]:
    """(label, unit, state table, statistics, count column, histogram column) of a catalog metric whose
    percentiles budgets and rules read from a 1 % log-histogram state (``pageload_periods`` for the page-load
    timings, ``endpoint_call_periods`` for the API response time)."""
    state = next(s for s in metric.states if s.representation == LOG_HISTOGRAM and s.read_by_rules)
    return (
        metric.label,
        metric.unit.symbol,
        state.table,
        metric.statistics,
        state.columns[0],
        state.columns[-1],
    )


# The metrics of the catalog (stacklens.metrics) that budgets and rules may name with a percentile: those whose
# states keep a 1 % log histogram that budgets and rules read (the views' own states); api_p95_ms is api_ms with
# p95 (budget_eval maps it). The bytes per page view and the error rate allow their average only.
# metric -> (label, unit, state table, statistics, count column, histogram column)
METRICS: dict[str, tuple[str, str, str, tuple[str, ...], str, str]] = {
    key: _definition(m)
    for key, m in CATALOG.items()
    if m.budget
    and m.same_as is None
    and any(s.representation == LOG_HISTOGRAM and s.read_by_rules for s in m.states)
}
STATISTICS = tuple(dict.fromkeys(s for m in METRICS.values() for s in m[3]))


class MetricWindowError(InvalidInput):
    """An unknown metric or a statistic the metric does not keep; the message lists the valid ones."""


def validate(metric: str, statistic: str) -> None:
    if metric not in METRICS:
        raise MetricWindowError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    if statistic not in METRICS[metric][3]:
        raise MetricWindowError(
            f"{metric} keeps the statistics {', '.join(METRICS[metric][3])}; {statistic!r} is not one of them"
        )
