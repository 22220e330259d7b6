"""Budget metrics: names, units and how a current value is judged (no Dagster import: the API uses it)."""

from __future__ import annotations

import re

from stacklens.errors import Conflict, InvalidInput

# metric -> (what it measures, unit). Every metric is "lower is better": a budget passes when value <= budget.
BUDGET_METRICS: dict[str, tuple[str, str]] = {
    "load_time_ms": ("total page load time, p75", "ms"),
    "ttfb_ms": ("time to first byte, p75", "ms"),
    "lcp_ms": ("largest contentful paint, p75", "ms"),
    "inp_ms": ("interaction to next paint, p75", "ms"),
    "cls": ("cumulative layout shift, p75", ""),
    "js_bytes": ("JavaScript bytes per page view", "bytes"),
    "api_p95_ms": ("API call response time, p95", "ms"),
}
WINDOW_DAYS = 7
_SCOPE = re.compile(r"^(\*|/[^\s]{0,299})$")


class BudgetError(InvalidInput):
    """A budget definition is invalid; the message says which part and why."""


class DuplicateBudget(BudgetError, Conflict):
    """The metric already has a budget on that scope (change that one instead)."""


def validate_budget(metric: str, scope: str, value: float) -> tuple[str, str, float]:
    """The cleaned (metric, scope, value) or :class:`BudgetError`."""
    metric = (metric or "").strip()
    if metric not in BUDGET_METRICS:
        raise BudgetError(f"unknown metric {metric!r}; use one of {', '.join(BUDGET_METRICS)}")
    scope = (scope or "*").strip() or "*"
    if not _SCOPE.match(scope):
        raise BudgetError("scope must be * (the whole project) or a page route starting with /")
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise BudgetError("value must be a number") from exc
    if not number >= 0 or number == float("inf"):
        raise BudgetError("value must be a finite number >= 0")
    return metric, scope, number


def passes(current: float | None, budget: float) -> bool:
    """No data yet counts as passing: nothing is over budget."""
    return current is None or current <= budget
