"""A change between two values of one aggregate, as every face of a dashboard words and colours it (the
number widget, the shared snapshot, the summary and the PDF; docs/explore.md, "What a widget draws"):

- a percentage (crash-free sessions, an error share) changes by **points**: ``+0.1 pp`` is 99.8 % → 99.9 %;
  any other value by its **relative** change: ``+0.1 %`` is 2,000 ms → 2,002 ms. The two are never both
  written ``%``;
- its tone follows the metric's good direction in the catalog (``Metric.better``): a rise of crash-free
  sessions is ``good``, a rise of LCP ``bad``; traffic (page loads, sessions, users) is neither, ``neutral``;
  a count of errors is better lower."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stacklens.explore.compare import change_pct
from stacklens.explore.query import Aggregate
from stacklens.metrics.catalog import find, get
from stacklens.metrics.units import COUNT, PERCENT

GOOD, BAD, NEUTRAL = "good", "bad", "neutral"


@dataclass(frozen=True)
class Change:
    delta: float  # points for a percentage, else per cent of the value before
    points: bool  # True: ``delta`` is percentage points
    tone: str  # GOOD, BAD or NEUTRAL

    @property
    def text(self) -> str:
        return f"{self.delta:+,.1f} {'pp' if self.points else '%'}"

    @property
    def arrow(self) -> str:
        return "▲" if self.delta > 0 else ("▼" if self.delta < 0 else "=")


def better(aggregate: Aggregate) -> str:
    """``"higher"``, ``"lower"`` or ``""`` (a count of rows or users: no direction is good)."""
    if aggregate.fn in ("count", "unique_users") and not aggregate.metric:
        return ""
    if aggregate.fn == "unique_users":
        return ""
    if aggregate.fn == "rate_per_1k":
        rate = find("error_events")
        return rate.better if rate is not None else "lower"
    metric = get(aggregate.metric)
    if aggregate.fn == "count" and not metric.fixed_statistic:
        return ""  # how many values were reported: not better either way
    if metric.unit.key == COUNT.key and metric.higher_is_better is None and metric.thresholds is None:
        # Traffic (sessions, users, page loads) is neither good nor bad; a count of errors is lower-better.
        return "lower" if metric.kind == "errors" else ""
    return metric.better


def is_percent(aggregate: Aggregate) -> bool:
    if aggregate.fn in ("count", "unique_users", "rate_per_1k") or not aggregate.metric:
        return False
    return get(aggregate.metric).unit.key == PERCENT.key


def change_of(aggregate: Aggregate, now: Any, before: Any) -> Change | None:
    """The change from ``before`` to ``now`` (None when either is missing, or a relative change from 0)."""
    if not isinstance(now, int | float) or not isinstance(before, int | float):
        return None
    points = is_percent(aggregate)
    if points:
        delta: float | None = float(now) - float(before)
    else:
        delta = change_pct(now, before)
    if delta is None:
        return None
    direction = better(aggregate)
    if not direction or abs(delta) < 0.05:  # what rounds to +0.0 is no change
        tone = NEUTRAL
    else:
        tone = GOOD if (delta > 0) == (direction == "higher") else BAD
    return Change(delta, points, tone)
