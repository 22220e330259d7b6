"""The performance side of a release: the rows of the Release impact view (queries/performance/releases.sql,
read by :func:`stacklens.performance.page_load_reads.releases`) with each release's verdict against the one
before it, from the same rules as the release health pages (:mod:`stacklens.releases.verdicts`) — the
performance figures only: load time p75 and API time p95 with their confidence intervals, JavaScript per page
view and errors per 1,000 page loads.

The rows keep the view's columns (release, first seen, page loads, load p75, …, each with its change
against the previous release) and add ``errors_per_1k_page_loads``, the intervals (``load_p75_low`` /
``_high``, ``api_p95_low`` / ``_high``) and ``verdict`` (``{"regression", "reasons", …}``); ``regression``
is the verdict as one line ("shop@1.3.0: JavaScript per page view …"), '' when it is not one."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from typing_extensions import TypedDict

from stacklens.releases.stats import QuantileInterval, interval_from_levels
from stacklens.releases.verdicts import RULE_BY_KEY, Figures, verdict
from stacklens.warehouse.queries import float_or_none

# The figures the performance view judges (the session rates are the release health pages').
PERFORMANCE_RULES = tuple(
    RULE_BY_KEY[k] for k in ("errors_per_1k_page_loads", "load_p75", "api_p95", "js_bytes_per_view")
)


def change_pct(current: float | None, previous: float | None) -> float | None:
    if current is None or previous is None or previous == 0:
        return None
    return 100.0 * (current - previous) / previous


# The levels queries/performance/releases.sql reads the load time and the API time at (its `load_levels`,
# `api_levels`): p75 and p95 among them, dense near them, so the confidence intervals of :mod:`.stats` are
# read at nearly their exact ranks (one pass of the engine's quantiles instead of sending each release's
# histogram).
LOAD_LEVELS = (
    0.5,
    0.6,
    0.65,
    0.68,
    0.7,
    0.71,
    0.72,
    0.73,
    0.735,
    0.74,
    0.745,
    0.7475,
    0.75,
    0.7525,
    0.755,
    0.76,
    0.765,
    0.77,
    0.78,
    0.79,
    0.8,
    0.82,
    0.85,
    0.9,
    1.0,
)
API_LEVELS = (
    0.8,
    0.85,
    0.88,
    0.9,
    0.91,
    0.92,
    0.93,
    0.935,
    0.94,
    0.945,
    0.9475,
    0.95,
    0.9525,
    0.955,
    0.96,
    0.965,
    0.97,
    0.975,
    0.98,
    0.985,
    0.99,
    0.995,
    1.0,
)


def interval(levels: tuple[float, ...], values: Any, n: int, q: float) -> QuantileInterval | None:
    """The q-quantile's 95 % interval from the query's values at ``levels``; None without samples."""
    if not n or not values:
        return None
    return interval_from_levels(levels, [float_or_none(v) for v in values], n, q)


class ReleaseFigures(TypedDict):
    """A release's performance figures over the window: page loads, load p75 with its 95 % interval,
    JavaScript per page view, API calls with their p95 (and interval) and error share, error events (and
    per 1,000 page loads), new issues."""

    release: str
    first_seen: datetime
    views: int
    load_p75: float | None
    load_p75_low: float | None
    load_p75_high: float | None
    js_bytes_per_view: float | None
    api_calls: int
    api_p95: float | None
    api_p95_low: float | None
    api_p95_high: float | None
    api_error_pct: float | None
    error_events: int
    errors_per_1k_page_loads: float | None
    new_issues: int


class ReleaseRow(ReleaseFigures):
    """A row of the Release impact view: the release's figures, each against the release before it, and its
    verdict (``Verdict.as_dict()``; ``regression`` is it as one line, '' when it is not one)."""

    previous_release: str
    load_p75_change_pct: float | None
    js_bytes_per_view_change_pct: float | None
    api_p95_change_pct: float | None
    error_events_change_pct: float | None
    new_issues_change_pct: float | None
    verdict: dict[str, Any]
    regression: str


def _measured(raw: dict[str, Any]) -> tuple[ReleaseFigures, Figures]:
    """The figures of one row of releases.sql, and what the verdict compares of them (the percentiles with
    their intervals)."""
    views = int(raw["views"])
    load = interval(LOAD_LEVELS, raw.get("load_levels"), views, 0.75)
    api = interval(API_LEVELS, raw.get("api_levels"), int(raw["api_calls"]), 0.95)
    errors = int(raw["error_events"])
    row: ReleaseFigures = {
        "release": raw["release"],
        "first_seen": raw["first_seen"],
        "views": views,
        "load_p75": float_or_none(raw["load_p75"]) if views else None,
        "load_p75_low": load.low if load else None,
        "load_p75_high": load.high if load else None,
        "js_bytes_per_view": float_or_none(raw["js_bytes_per_view"]) if views else None,
        "api_calls": int(raw["api_calls"]),
        "api_p95": float_or_none(raw["api_p95"]),
        "api_p95_low": api.low if api else None,
        "api_p95_high": api.high if api else None,
        "api_error_pct": float_or_none(raw["api_error_pct"]),
        "error_events": errors,
        "errors_per_1k_page_loads": 1000.0 * errors / views if views else None,
        "new_issues": int(raw["new_issues"]),
    }
    judged = Figures(
        version=row["release"],
        page_loads=views,
        error_events=errors,
        load_p75=load,
        api_p95=api,
        js_bytes_per_view=row["js_bytes_per_view"],
    )
    return row, judged


def interval_of(
    value: float | None, low: float | None, high: float | None, n: int
) -> QuantileInterval | None:
    """A percentile with its 95 % interval over ``n`` samples, from a row's columns; None when one is
    missing."""
    return None if value is None or low is None or high is None else QuantileInterval(value, low, high, n)


def performance_figures(row: ReleaseFigures) -> Figures:
    """What a verdict compares of a row's figures: page loads, errors, the two percentiles with their 95 %
    intervals, JavaScript per page view."""
    interval = interval_of
    views, calls = int(row["views"] or 0), int(row["api_calls"] or 0)
    return Figures(
        version=row["release"],
        page_loads=views,
        error_events=int(row["error_events"] or 0),
        load_p75=interval(row["load_p75"], row["load_p75_low"], row["load_p75_high"], views),
        api_p95=interval(row["api_p95"], row["api_p95_low"], row["api_p95_high"], calls),
        js_bytes_per_view=row["js_bytes_per_view"],
    )


def release_rows(raws: list[dict[str, Any]], with_page_loads_only: bool = True) -> list[ReleaseRow]:
    """The view's rows (in the query's order: by first seen) with changes and verdicts against the row before;
    ``with_page_loads_only`` leaves out releases that only have error events in the window."""
    out: list[ReleaseRow] = []
    before: tuple[ReleaseFigures, Figures] | None = None
    for raw in raws:
        row, figures = _measured(raw)
        if with_page_loads_only and not row["views"]:
            continue
        prev, prev_figures = before if before else (None, None)
        judged = verdict(figures, prev_figures, PERFORMANCE_RULES)
        out.append(
            {
                **row,
                "previous_release": prev["release"] if prev else "",
                "load_p75_change_pct": change_pct(row["load_p75"], prev["load_p75"] if prev else None),
                "js_bytes_per_view_change_pct": change_pct(
                    row["js_bytes_per_view"], prev["js_bytes_per_view"] if prev else None
                ),
                "api_p95_change_pct": change_pct(row["api_p95"], prev["api_p95"] if prev else None),
                "error_events_change_pct": change_pct(
                    row["error_events"], prev["error_events"] if prev else None
                ),
                "new_issues_change_pct": change_pct(row["new_issues"], prev["new_issues"] if prev else None),
                "verdict": judged.as_dict(),
                "regression": f"{row['release']}: " + "; ".join(judged.reasons) if judged.regression else "",
            }
        )
        before = row, figures
    return out
