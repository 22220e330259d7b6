"""The performance side of a release: the rows of the Release impact view (queries/performance/releases.sql, read
by :func:`stacklens.performance.reads.releases`) with each release's verdict against the one before it, from the
same rules as the release health pages (:mod:`stacklens.releases.verdicts`) — the performance figures only: load
time p75 and API time p95 with their confidence intervals, JavaScript per page view and errors per 1,000 page
loads.

The rows keep the view's columns (release, first seen, page loads, load p75, …, each with its change against the
previous release) and add ``errors_per_1k_page_loads``, the intervals (``load_p75_low`` / ``_high``,
``api_p95_low`` / ``_high``) and ``verdict`` (``{"regression", "reasons", …}``); ``regression`` is the verdict as
one line ("shop@1.3.0: JavaScript per page view …"), '' when it is not one.
"""

from __future__ import annotations

from typing import Any

from stacklens.releases.stats import QuantileInterval, interval_from_levels
from stacklens.releases.verdicts import RULE_BY_KEY, Figures, verdict

# The figures the performance view judges (the session rates are the release health pages').
PERFORMANCE_RULES = tuple(
    RULE_BY_KEY[k] for k in ("errors_per_1k_page_loads", "load_p75", "api_p95", "js_bytes_per_view")
)


def _num(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if number != number else number


def change_pct(current: float | None, previous: float | None) -> float | None:
    if current is None or previous is None or previous == 0:
        return None
    return 100.0 * (current - previous) / previous


# The levels queries/performance/releases.sql reads the load time and the API time at (its `load_levels`,
# `api_levels`): p75 and p95 among them, dense near them, so the confidence intervals of :mod:`.stats` are read at
# nearly their exact ranks (one pass of the engine's quantiles instead of sending each release's histogram).
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
    return interval_from_levels(levels, [_num(v) for v in values], n, q)


def figures(row: dict[str, Any]) -> Figures:
    """The performance figures of one row as the verdict compares them."""
    return Figures(
        version=row["release"],
        page_loads=row["views"],
        error_events=row["error_events"],
        load_p75=row["_load"],
        api_p95=row["_api"],
        js_bytes_per_view=row["js_bytes_per_view"],
    )


def _row(raw: dict[str, Any]) -> dict[str, Any]:
    views = int(raw["views"])
    load = interval(LOAD_LEVELS, raw.get("load_levels"), views, 0.75)
    api = interval(API_LEVELS, raw.get("api_levels"), int(raw["api_calls"]), 0.95)
    errors = int(raw["error_events"])
    return {
        "release": raw["release"],
        "first_seen": raw["first_seen"],
        "views": views,
        "load_p75": _num(raw["load_p75"]) if views else None,
        "load_p75_low": load.low if load else None,
        "load_p75_high": load.high if load else None,
        "js_bytes_per_view": _num(raw["js_bytes_per_view"]) if views else None,
        "api_calls": int(raw["api_calls"]),
        "api_p95": _num(raw["api_p95"]),
        "api_p95_low": api.low if api else None,
        "api_p95_high": api.high if api else None,
        "api_error_pct": _num(raw["api_error_pct"]),
        "error_events": errors,
        "errors_per_1k_page_loads": 1000.0 * errors / views if views else None,
        "new_issues": int(raw["new_issues"]),
        # The percentiles with their intervals: what the verdict compares.
        "_load": load,
        "_api": api,
    }


def release_rows(raws: list[dict[str, Any]], with_page_loads_only: bool = True) -> list[dict[str, Any]]:
    """The view's rows (in the query's order: by first seen) with changes and verdicts against the row before;
    ``with_page_loads_only`` leaves out releases that only have error events in the window."""
    out: list[dict[str, Any]] = []
    before: dict[str, Any] | None = None
    for raw in raws:
        row = _row(raw)
        if with_page_loads_only and not row["views"]:
            continue
        row["previous_release"] = before["release"] if before else ""
        for key in ("load_p75", "js_bytes_per_view", "api_p95", "error_events", "new_issues"):
            row[f"{key}_change_pct"] = change_pct(row[key], before[key] if before else None)
        judged = verdict(figures(row), figures(before) if before else None, PERFORMANCE_RULES)
        row["verdict"] = judged.as_dict()
        row["regression"] = f"{row['release']}: " + "; ".join(judged.reasons) if judged.regression else ""
        out.append(row)
        before = row
    for row in out:
        del row["_load"], row["_api"]
    return out
