"""The metrics alert rules may name, with the statistics each allows, and their validation.

How a metric's value over a window is read — from the same states, windows and rounding as the performance
views, for rules, budgets and their previews alike — is :mod:`stacklens.performance.window_values`; its names are
re-exported here for the callers that import them from this module.
"""

from __future__ import annotations

from stacklens.errors import InvalidInput
from stacklens.metrics.catalog import CATALOG, EXACT_QUANTILES, Metric
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

_VIEW = "op IN ('pageload', 'navigation')"


def _definition(metric: Metric) -> tuple[str, str, str, tuple[str, ...], str, str]:
    """(label, unit, states prefix, statistics the states keep, raw expression, raw condition) of a catalog
    metric held in ``page_hour_states``: the prefix of its ``*_q`` column, the raw column of ``transactions``."""
    hour = next(s for s in metric.states if s.table == "page_hour_states")
    expression = next(s.columns[0] for s in metric.states if s.table == "transactions")
    condition = "op = 'http.server'" if metric.kind == "api_calls" else _VIEW
    if expression.startswith("measurements["):
        condition += f" AND mapContains(measurements, {expression.removeprefix('measurements[').rstrip(']')})"
    return (
        metric.label,
        metric.unit.symbol,
        hour.columns[-1].removesuffix("_q"),
        metric.statistics,
        expression,
        condition,
    )


# The queries below are composed from these constants only (never from input); every value is a
# server-side parameter. The metrics are the catalog's (stacklens.metrics) that budgets and rules may name and
# whose exact hourly states page_hour_states keeps; api_p95_ms is api_ms with p95 (budget_eval maps it).
# metric -> (label, unit, states prefix, statistics the states keep, raw expression, raw condition)
METRICS: dict[str, tuple[str, str, str, tuple[str, ...], str, str]] = {
    key: _definition(m)
    for key, m in CATALOG.items()
    if m.budget
    and m.same_as is None
    and any(s.table == "page_hour_states" and s.representation == EXACT_QUANTILES for s in m.states)
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
