"""What a metric is (:class:`Metric`): its unit, statistics, thresholds and the warehouse states that
hold it (:class:`State`), and how a state keeps it; the catalog's metrics are defined with these, one module
per kind of data (:mod:`stacklens.metrics.catalog`)."""

from __future__ import annotations

from dataclasses import dataclass

from stacklens.metrics.statistics import STATISTICS, Statistic
from stacklens.metrics.units import Unit

# How a state keeps a metric: what a value read from it can be trusted to.
LOG_HISTOGRAM = "log_histogram_1pct"  # 1 % log-histogram buckets: percentiles within QUANTILE_RELATIVE_ERROR
SUM_COUNT = "sum_count"  # sums and counts: exact averages, totals and counts
RAW_ROWS = "raw_rows"  # the raw table itself, read per request
UNIQ_STATES = "uniq_combined64"  # distinct-count states: exact up to ~128 distinct values, within ~2 % beyond


@dataclass(frozen=True)
class State:
    """A warehouse table (and its columns) that holds a metric, and who reads the metric from it."""

    table: str
    columns: tuple[str, ...]
    representation: str
    read_by: str

    @property
    def read_by_rules(self) -> bool:
        """Whether budgets and alert rules (and their previews) read the metric from this state."""
        return "alert rules" in self.read_by


@dataclass(frozen=True)
class Thresholds:
    """Good up to ``good`` and poor above ``poor`` (or, when higher is better, good from ``good`` and poor
    below ``poor``); ``source`` says whose bands they are."""

    good: float
    poor: float
    source: str
    higher_is_better: bool = False

    def rating(self, value: float | None) -> str:
        """good / needs improvement / poor; '' without a value."""
        if value is None:
            return ""
        if self.higher_is_better:
            return "good" if value >= self.good else ("needs improvement" if value >= self.poor else "poor")
        return "good" if value <= self.good else ("needs improvement" if value <= self.poor else "poor")


@dataclass(frozen=True)
class Metric:
    key: str
    label: str  # "Largest contentful paint (LCP)"
    short_label: str  # "LCP": table headers, axis titles
    unit: Unit
    statistics: tuple[str, ...]  # what budgets, rules and views may ask of it, in the catalog's order
    default_statistic: str
    description: str
    column_stem: str  # the start of its CSV column / axis names: "lcp" → lcp_p75_ms
    states: tuple[State, ...]
    thresholds: Thresholds | None = None
    aliases: tuple[str, ...] = ()
    decimals: int | None = None  # digits after the point when the unit's default does not suit
    fixed_statistic: bool = False  # the statistic is part of the metric (API p95, bytes per view, error %)
    budget: bool = (
        False  # a budget can be set on it, and so an alert rule (stacklens.alerts.rule_types.METRICS)
    )
    same_as: tuple[str, str] | None = None  # (metric, statistic) this key is another name for
    kind: str = "pageloads"  # the data it is computed from: pageloads, resources, api_calls, errors
    # Which way is good: None takes the thresholds' direction, else lower (times, bytes, error shares and
    # counts); True for the shares where more is better (uptime, crash-free, cache hits, the score). A budget
    # on it passes at or above its limit, and a rule on it fires below (docs/performance.md).
    higher_is_better: bool | None = None

    @property
    def better(self) -> str:
        """``"higher"`` or ``"lower"``: the direction in which the metric's values are good."""
        higher = self.higher_is_better
        if higher is None:
            higher = self.thresholds.higher_is_better if self.thresholds is not None else False
        return "higher" if higher else "lower"

    def passes(self, value: float, limit: float) -> bool:
        """Whether ``value`` is within a budget of ``limit``: at most it, or at least it when higher is
        better."""
        return value >= limit if self.better == "higher" else value <= limit

    @property
    def statistic_objects(self) -> tuple[Statistic, ...]:
        return tuple(STATISTICS[s] for s in self.statistics)

    @property
    def error(self) -> float:
        """The largest relative error of a value the views read (0 = exact); percentiles from 1 %
        histograms."""
        histogram = any(s.representation == LOG_HISTOGRAM for s in self.states)
        return max((s.error for s in self.statistic_objects if histogram), default=0.0)


# Who reads a state (stacklens.performance.window_values reads for budgets, alert rules and their previews
# exactly what the views read, over the same windows).
USED_BY_VIEWS = "performance views"
USED_BY_RULES = "budgets and alert rules"
USED_BY_ALL = "performance views, budgets and alert rules"
TIMING_STATISTICS = ("p50", "p75", "p95", "avg")
