"""Budget definitions: the metrics, their statistics and units, and the validation of a budget (no Dagster
import: the API, the CLI and the dashboard use it). How a budget is judged is
:mod:`stacklens.performance.budget_eval`.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Collection
from dataclasses import dataclass

from stacklens.errors import Conflict, InvalidInput
from stacklens.metrics.catalog import budget_metrics
from stacklens.metrics.definition import Metric


@dataclass(frozen=True)
class BudgetMetric:
    label: str
    unit: str
    statistics: tuple[str, ...]  # the first is the default; one entry = the statistic is part of the metric
    source: str  # "window": a timing's or the API calls' states; "resources": bytes per page view
    better: str = "lower"  # "higher": the budget is a floor (uptime), passed at or above it


def _source(metric: Metric) -> str:
    """What budget_eval computes the metric from (stacklens.performance.window_values, over the states the
    catalog says budgets read): bytes per page view (the page-load states' byte sums over their page
    loads), or a timing's or the API calls' states (percentiles, averages, the error rate's share of calls
    answered 4xx or 5xx)."""
    return "resources" if metric.kind == "resources" else "window"


# The budget metrics are the catalog's (stacklens.metrics); this is the shape budget_eval, the pages and the
# API read. A budget passes when the current value is at most the budget, or at least it for a metric where
# higher is better (uptime_pct: the catalog's ``better``, stacklens.performance.budget_eval.judge).
METRICS: dict[str, BudgetMetric] = {
    key: BudgetMetric(
        m.label,
        m.unit.symbol,
        (m.default_statistic, *(s for s in m.statistics if s != m.default_statistic)),
        _source(m),
        m.better,
    )
    for key, m in budget_metrics().items()
}
# The form's default statistic first, then every other one a budget metric allows, in the catalog's order.
STATISTICS = (
    "p75",
    *(s for s in dict.fromkeys(s for m in budget_metrics().values() for s in m.statistics) if s != "p75"),
)
# metric -> (description, unit): the shape the API's and CLI's texts have used since budgets exist.
BUDGET_METRICS: dict[str, tuple[str, str]] = {k: (m.label, m.unit) for k, m in METRICS.items()}
WINDOW_DAYS = 7
MIN_SAMPLES = 20
FIXED_STATISTIC = frozenset(k for k, m in budget_metrics().items() if m.fixed_statistic)
MAX_WINDOW_DAYS = 30
_SCOPE = re.compile(r"^(\*|/[^\s]{0,299})$")
# An uptime budget's scope is an uptime monitor's slug (or a pattern of slugs with *), not a page route.
_MONITOR_SCOPE = re.compile(r"^(\*|[A-Za-z0-9_*-]{1,100})$")
MONITOR_KIND = "monitor_checks"


class BudgetError(InvalidInput):
    """A budget definition is invalid; ``field`` names the part, the message says why."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field


class DuplicateBudget(BudgetError, Conflict):
    """The metric already has a budget on that scope (change that one instead)."""


@dataclass(frozen=True)
class BudgetDefinition:
    metric: str
    scope: str
    value: float
    statistic: str
    window_days: int
    min_samples: int


def scope_matches(scope: str, page: str) -> bool:
    """Whether a page route is in a scope: ``*`` is every page, ``*`` inside a route matches any characters
    (the same rule as :func:`stacklens.performance.window_values.like_pattern`)."""
    if scope == "*":
        return True
    return fnmatch.fnmatchcase(page, scope.replace("[", "[[]"))


def _integer(value: object, field: str, low: int, high: int) -> int:
    try:
        number = float(str(value).strip().removesuffix("d")) if isinstance(value, str) else float(value)  # type: ignore[arg-type]  # any input: float() refuses it below
    except (TypeError, ValueError) as exc:
        raise BudgetError(f"must be a whole number, not {value!r}", field) from exc
    if not math.isfinite(number) or number != int(number) or not low <= number <= high:
        raise BudgetError(f"must be a whole number from {low} to {high}, not {value!r}", field)
    return int(number)


def validate_budget(
    metric: str,
    scope: str,
    value: object,
    statistic: str | None = None,
    window_days: object = WINDOW_DAYS,
    min_samples: object = MIN_SAMPLES,
    pages_seen: Collection[str] | None = None,
) -> BudgetDefinition:
    """The cleaned definition or :class:`BudgetError` naming the field. ``pages_seen`` (the project's page
    routes with data) refuses a route pattern that matches none of them; ``None`` skips that check."""
    metric = (metric or "").strip()
    if metric not in METRICS:
        raise BudgetError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}", "metric")
    spec = METRICS[metric]
    scope = (scope or "*").strip() or "*"
    if budget_metrics()[metric].kind == MONITOR_KIND:
        if not _MONITOR_SCOPE.match(scope):
            raise BudgetError("must be * (every uptime check) or an uptime monitor's slug", "scope")
        pages_seen = None  # slugs, not pages: an unknown one is a budget without samples
    elif not _SCOPE.match(scope):
        raise BudgetError(
            "must be * (all pages) or a page route starting with /, such as /checkout or /products/*", "scope"
        )
    if pages_seen is not None and scope != "*" and not any(scope_matches(scope, p) for p in pages_seen):
        raise BudgetError(f"{scope!r} matches no page seen in this project", "scope")
    try:
        number = float(value)  # type: ignore[arg-type]  # any input: float() refuses it below
    except (TypeError, ValueError) as exc:
        raise BudgetError(f"must be a number, not {value!r}", "value") from exc
    if not math.isfinite(number) or number < 0:
        raise BudgetError(f"must be a finite number >= 0, not {value!r}", "value")
    if spec.unit == "%" and number > 100:
        raise BudgetError(f"is a percentage: at most 100, not {value!r}", "value")
    stat = (statistic or "").strip() or spec.statistics[0]
    if stat not in STATISTICS:
        raise BudgetError(f"unknown statistic {stat!r}; use one of {', '.join(STATISTICS)}", "statistic")
    if metric in FIXED_STATISTIC:
        # The statistic is part of the metric (API p95, bytes per view, error %): whatever the form sends
        # (its default is p75), the metric's own is the one evaluated.
        stat = spec.statistics[0]
    elif stat not in spec.statistics:
        raise BudgetError(
            f"{metric} keeps {', '.join(spec.statistics)}; {stat!r} is not one of them", "statistic"
        )
    window = _integer(window_days, "window", 1, MAX_WINDOW_DAYS)
    samples = _integer(min_samples, "min_samples", 1, 1_000_000)
    return BudgetDefinition(metric, scope, number, stat, window, samples)
