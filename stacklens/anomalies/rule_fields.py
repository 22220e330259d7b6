"""An anomaly rule's vocabulary and fields (docs/alerts.md, "Anomaly rules"): the metrics it can watch, its
seasonality, sensitivity, direction and minimum count, read from a request body with every refusal naming
the field and what is allowed (:func:`anomaly_fields`).

Metrics: every metric of the catalog the performance views read per hour (LCP, INP, TTFB p75 per page, API
p95 per endpoint, error %, JavaScript bytes, uptime …), ``events`` and ``users`` (error events, and the
distinct users they hit, per project or per issue) and ``crash_free_sessions``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stacklens.alerts.errors import AlertInputError
from stacklens.anomalies.decide import DIRECTIONS
from stacklens.metrics.catalog import CATALOG, budget_metrics
from stacklens.performance.window_values import SOURCES

SEASONALITIES = ("auto", "daily", "weekly", "none")
# Sensitivity → k, the band's half-width in robust standard deviations. Measured on generated series
# (tests/stacklens/anomalies/test_model.py): at 5, twenty normal four-week series of Poisson counts with a
# weekly shape fire 0.08 times per series-month; at 3.5 a 3x spike on a count of 20 still fires.
SENSITIVITIES = {"low": 7.0, "medium": 5.0, "high": 3.5}
COUNTED = ("events", "users")  # error events and their distinct users, per project or per issue
SESSIONS = "crash_free_sessions"
UPTIME = "uptime_pct"
# The catalog's metrics an anomaly rule can watch: those the views read per hour (window_values' sources).
PERFORMANCE: dict[str, tuple[str, ...]] = {
    k: (m.default_statistic, *(s for s in m.statistics if s != m.default_statistic))
    for k, m in budget_metrics().items()
    if k in SOURCES
}
METRICS = (*COUNTED, SESSIONS, UPTIME, *(k for k in PERFORMANCE if k != UPTIME))
ALIASES = {"error_events": "events"}
# A bucket with fewer than this many samples (events, page loads, calls, sessions, probes) never fires.
DEFAULT_MIN_COUNT = {"events": 10, "users": 5, SESSIONS: 100, UPTIME: 10}
DEFAULT_MIN_COUNT_PERFORMANCE = 20  # as a performance budget's minimum samples
DAYS_RANGE = (7, 28)  # a backtest's window
DEFAULT_DAYS = 14
# The shortest backtest each seasonality can be judged on: two of its seasons.
MIN_DAYS = {"weekly": 14, "daily": 2, "none": 1, "auto": 2}
_ISSUE = re.compile(r"^(issue:)?(\d{1,18})$")
_ROUTE = re.compile(r"^(\*|/\S*)$")
_MONITOR = re.compile(r"^(\*|[A-Za-z0-9_*-]{1,100})$")


@dataclass(frozen=True)
class AnomalyFields:
    """The validated fields of an anomaly rule, as the rule's columns keep them (settings in ``filters``)."""

    metric: str
    statistic: str
    scope: str  # "*", a route or pattern, an issue id, an uptime check's slug
    seasonality: str
    sensitivity: str
    direction: str
    min_count: int

    @property
    def filters(self) -> dict[str, str]:
        return {"seasonality": self.seasonality, "sensitivity": self.sensitivity, "direction": self.direction}

    @property
    def k(self) -> float:
        return SENSITIVITIES[self.sensitivity]

    @property
    def counts(self) -> bool:
        """Whether the values are counts (Poisson's spread) rather than measures."""
        return self.metric in COUNTED


def _choice(body: Mapping[str, Any], field: str, allowed: tuple[str, ...], default: str) -> str:
    value = body.get(field)
    if value is None or value == "":
        return default
    if value not in allowed:
        raise AlertInputError(field, f"unknown {field} {value!r}; use one of {', '.join(allowed)}")
    return str(value)


def anomaly_fields(body: Mapping[str, Any]) -> AnomalyFields:
    """The fields of an anomaly rule from a request body; :class:`AlertInputError` names a bad one."""
    asked = body.get("metric")
    metric = ALIASES.get(asked, asked) if isinstance(asked, str) else asked
    if not isinstance(metric, str) or metric not in METRICS:
        raise AlertInputError("metric", f"unknown metric {asked!r}; use one of {', '.join(METRICS)}")
    statistic = ""
    if metric in PERFORMANCE:
        spec = CATALOG[metric]
        statistic = body.get("statistic") or spec.default_statistic
        if spec.fixed_statistic:
            statistic = spec.default_statistic
        if statistic not in PERFORMANCE[metric]:
            raise AlertInputError(
                "statistic",
                f"{metric} keeps {', '.join(PERFORMANCE[metric])}; {statistic!r} is not one of them",
            )
        if spec.same_as is not None:  # another name for a metric and statistic (api_p95_ms: api_ms p95)
            metric, statistic = spec.same_as
    raw_scope = body.get("scope")
    scope = "*" if raw_scope in (None, "") else raw_scope
    if not isinstance(scope, str | int) or isinstance(scope, bool):
        raise AlertInputError("scope", "must be text")
    scope = str(scope).strip()
    if metric in COUNTED:
        found = _ISSUE.match(scope)
        if scope != "*" and found is None:
            raise AlertInputError("scope", f"{metric} are counted per project (*) or per issue (its id)")
        scope = found.group(2) if found else "*"
    elif metric == SESSIONS and scope != "*":
        raise AlertInputError("scope", "crash-free sessions are watched per project: use *")
    elif metric != SESSIONS and len(scope) > 300:
        raise AlertInputError("scope", "must be at most 300 characters")
    elif CATALOG[metric].kind == "monitor_checks" and not _MONITOR.match(scope):
        raise AlertInputError("scope", "an uptime metric's scope is * or an uptime check's slug")
    elif metric in PERFORMANCE and CATALOG[metric].kind != "monitor_checks" and not _ROUTE.match(scope):
        raise AlertInputError(
            "scope", "* for every page or endpoint, a route (/checkout) or a pattern (/p/*)"
        )
    seasonality = _choice(body, "seasonality", SEASONALITIES, "auto")
    sensitivity = _choice(body, "sensitivity", tuple(SENSITIVITIES), "medium")
    # Lower is worse for a crash-free rate and uptime: they watch drops unless told otherwise.
    default_direction = "down" if metric in (SESSIONS, UPTIME) else "up"
    direction = _choice(body, "direction", DIRECTIONS, default_direction)
    default_count = DEFAULT_MIN_COUNT.get(metric, DEFAULT_MIN_COUNT_PERFORMANCE)
    min_count = _whole(body.get("min_count", body.get("min_samples")), "min_count", default_count)
    return AnomalyFields(metric, statistic, scope, seasonality, sensitivity, direction, min_count)


def _whole(value: object, field: str, default: int) -> int:
    if value is None or value == "":
        return default
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise AlertInputError(field, f"must be a whole number from 0 to 1000000 (got {value!r})")
    try:
        number = float(value)
    except ValueError as exc:
        raise AlertInputError(field, f"must be a whole number from 0 to 1000000 (got {value!r})") from exc
    if not number.is_integer() or not 0 <= number <= 1_000_000:
        raise AlertInputError(field, f"must be a whole number from 0 to 1000000 (got {value!r})")
    return int(number)


def backtest_days(value: object, seasonality: str) -> int:
    """A backtest's ``days``: 7 to 28, and at least two seasons of the rule's seasonality."""
    if value is None or value == "":
        value = max(DEFAULT_DAYS, MIN_DAYS[seasonality])
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise AlertInputError(
            "days", f"must be a whole number of days from {DAYS_RANGE[0]} to {DAYS_RANGE[1]}"
        )
    try:
        days = float(value)
    except ValueError as exc:
        raise AlertInputError(
            "days", f"must be a whole number of days from {DAYS_RANGE[0]} to {DAYS_RANGE[1]}"
        ) from exc
    if not days.is_integer() or not DAYS_RANGE[0] <= days <= DAYS_RANGE[1]:
        raise AlertInputError(
            "days", f"must be a whole number of days from {DAYS_RANGE[0]} to {DAYS_RANGE[1]}"
        )
    if days < MIN_DAYS[seasonality]:
        raise AlertInputError(
            "days",
            f"{int(days)} days is shorter than two seasons of {seasonality} seasonality; "
            f"use at least {MIN_DAYS[seasonality]} days (up to {DAYS_RANGE[1]})",
        )
    return int(days)


def history_seconds(value: object, seasonality: str) -> int:
    """A rule's ``window``: the history it learns from, at least two seasons (default 28 days)."""
    from stacklens.alerts.rule_types import parse_window

    seconds = parse_window(value or "28d")
    if seconds < MIN_DAYS[seasonality] * 86400:
        raise AlertInputError(
            "window",
            f"an anomaly rule with {seasonality} seasonality learns from at least two seasons: "
            f"use a window of at least {MIN_DAYS[seasonality]}d (up to 30d)",
        )
    return seconds


def stored_fields(
    metric: str, statistic: str, scope: str, filters: Mapping[str, Any], min_count: int
) -> AnomalyFields:
    """The fields of a stored rule (its columns), defaults for anything missing."""
    return AnomalyFields(
        metric,
        statistic,
        scope,
        str(filters.get("seasonality") or "auto"),
        str(filters.get("sensitivity") or "medium"),
        str(filters.get("direction") or ("down" if metric in (SESSIONS, UPTIME) else "up")),
        min_count,
    )
