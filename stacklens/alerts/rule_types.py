"""The kinds of alert rule and their vocabulary: types and labels, levels, the metrics and statistics a
performance rule may watch, windows (:func:`parse_window`, :func:`format_window`), and what a rule's settings
hold.

Every threshold rule is "above" a threshold — a performance metric above a budget, more than N events (or
users) in a window, a share of failed transactions above X % — except the crash-free rate of the newest
release, which fires *below* its threshold (:data:`BELOW_TYPES`). New-issue, regression and
release-regression rules fire on each occurrence instead (a release regression once per release)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from typing_extensions import TypedDict  # typing's own is not a response model before Python 3.12

from stacklens.alerts.errors import AlertInputError
from stacklens.metrics import catalog
from stacklens.metrics.catalog import CATALOG, budget_metrics

RULE_TYPES = (
    "performance_budget",
    "new_issue",
    "regression",
    "event_frequency",
    "error_rate",
    "crash_free_rate",
    "release_regression",
    "monitor",
    "anomaly",
)
TYPE_LABELS = {
    "performance_budget": "Performance Budget",
    "new_issue": "New issue",
    "regression": "Regression",
    "event_frequency": "Event frequency",
    # Stored as error_rate since rules exist; it watches the catalog's failed_transactions_pct, not error_pct.
    "error_rate": CATALOG["failed_transactions_pct"].label,
    "crash_free_rate": "Crash-free rate",
    "release_regression": "Release regression",
    "monitor": "Monitor",
    # Fires when a metric leaves the band of what is normal for its hour (stacklens.anomalies).
    "anomaly": "Anomaly",
}
# A monitor rule is not evaluated over a window: it is told of its monitors' incidents as they open and
# close (stacklens.monitors.health), so the evaluation run leaves it out.
MONITOR_STATUSES = ("missed", "timeout", "error", "down")
LEVELS = ("fatal", "error", "warning", "info", "debug")
THRESHOLD_TYPES = ("performance_budget", "event_frequency", "error_rate", "crash_free_rate")
# Lower is worse: these fire below the threshold, warn below the warning threshold and resolve at or above the
# resolve threshold (stacklens.alerts.state.Thresholds.below).
BELOW_TYPES = ("crash_free_rate",)
# What a crash-free rate rule watches of the newest release: the metric catalog's crash-free shares (sessions
# that did not crash, users none of whose sessions crashed), the first the default.
CRASH_FREE_METRICS = ("crash_free_sessions", "crash_free_users")
# Rule types on release health: they watch the newest release, so they take no release, level or tag filter.
RELEASE_TYPES = ("crash_free_rate", "release_regression")
# The window a rule gets when the body names none: a release regression compares the newest release with the
# one before it over the release pages' default window (stacklens.releases.release_list.DEFAULT_RANGE), so the
# rule judges what the pages show.
DEFAULT_WINDOWS = {"performance_budget": "7d", "crash_free_rate": "24h", "release_regression": "30d"}
_WINDOW = re.compile(r"^\s*(\d{1,4})\s*([mhd])\s*$")
_UNIT = {"m": 60, "h": 3600, "d": 86400}
MAX_WINDOW = timedelta(days=30)
# A performance rule can watch every metric a budget can be set on, and the other way round: both are the
# catalog's budget metrics (stacklens.metrics). metric -> the statistics it allows, the default first.
METRICS: dict[str, tuple[str, ...]] = {
    k: (m.default_statistic, *(s for s in m.statistics if s != m.default_statistic))
    for k, m in budget_metrics().items()
}
STATISTICS = tuple(dict.fromkeys(s for m in budget_metrics().values() for s in m.statistics))
# Budget metric → (rule metric, statistic): "alert me when this budget fails". A key that is another name for
# a metric and statistic (api_p95_ms: api_ms p95) is stored as that metric and statistic.
BUDGET_METRIC_MAP = {k: m.same_as or (k, m.default_statistic) for k, m in budget_metrics().items()}
# A request body as the API and the form send it: JSON of any shape until :func:`clean` has read it.
RuleBody = Mapping[str, Any]


class RuleSettings(TypedDict):
    """What a rule watches and when it fires: the fields the stored rule (:class:`RuleValues`) and the API's
    rule (:class:`RuleOut`) share."""

    name: str
    type: str
    metric: str
    statistic: str
    scope: str
    threshold: float | None
    warning_threshold: float | None
    resolve_threshold: float | None
    min_samples: int
    count_kind: str
    environment: str
    filters: dict[str, str]  # release, level and tag ("key:value"), each when set
    renotify_minutes: int
    enabled: bool


class RuleValues(RuleSettings):
    """The validated column values of a rule (:func:`clean`)."""

    project_id: int
    window_seconds: int
    channel_ids: list[int]


def parse_window(value: object, field: str = "window") -> int:
    """Seconds of ``"30m"``, ``"6h"``, ``"7d"`` (or an integer of seconds); 1 minute to 30 days."""
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    elif isinstance(value, str) and (match := _WINDOW.match(value)):
        seconds = int(match.group(1)) * _UNIT[match.group(2)]
    else:
        raise AlertInputError(field, f"{value!r} is not a window; write it like 30m, 6h or 7d")
    if not 60 <= seconds <= MAX_WINDOW.total_seconds():
        raise AlertInputError(field, "must be between 1m and 30d")
    return seconds


def format_window(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def fires_below(kind: str, metric: str = "") -> bool:
    """Whether a rule fires below its threshold: a type where lower is worse (:data:`BELOW_TYPES`), or a
    performance rule on a metric where higher is better (uptime_pct: the catalog's ``better``)."""
    if kind in BELOW_TYPES:
        return True
    found = catalog.find(metric) if kind == "performance_budget" and metric else None
    return found is not None and found.better == "higher"
