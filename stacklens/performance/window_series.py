"""One metric window evaluated at many times in one query — a budget's daily history, an alert rule's 30-day
preview — each time exactly as :func:`stacklens.performance.window_values.compute_many` evaluates it: the same
states, the window ending there in whole minutes, tiled as a view tiles it. The rows of the scope and
filters are merged per period first (the histograms with ``sumMap``: the same (value, count) pairs, so the
same percentiles to the bit), then each period counts for the times whose tiling holds it."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from stacklens.performance.window_values import (
    API_CALLS,
    INP_PARTS,
    INTERACTIONS,
    MONITOR_CHECKS,
    PAGELOADS,
    SOURCES,
    TRANSACTIONS,
    Point,
    WindowRequest,
    columns,
    like_pattern,
    pick,
    source,
    utc,
    window_filters,
)
from stacklens.view_filters import Period, ViewFilters
from stacklens.warehouse.queries import load_query

_SERIES = {
    PAGELOADS: "performance/series_pageloads",
    API_CALLS: "performance/series_api_calls",
    TRANSACTIONS: "performance/series_failed_transactions",
    MONITOR_CHECKS: "performance/series_monitor_checks",
    INTERACTIONS: "performance/series_inp_interactions",
}
# series_api_calls.sql's ``{total}``: the calls answered 4xx or 5xx for the error rate, else the durations.
_API_TOTAL = {True: "s4xx + s5xx", False: "duration_sum"}


def series(client: Any, request: WindowRequest, points: list[datetime]) -> list[Point]:
    """The request's value as an evaluation at each of ``points`` saw it (its window ending there), in one
    query."""
    kind = source(request.metric, request.statistic).kind
    points = [utc(p) for p in points]
    if not points:
        return []
    windows = [window_filters(request, p) for p in points]
    parameters: dict[str, Any] = {
        "project_id": request.project_id,
        "pattern": like_pattern(request.scope),
        "environment": request.environment,
        "release": request.release,
        "browser": request.browser,
        "since": min(w.since for w in windows),
        "until": max(w.until for w in windows),
    }
    text = load_query(_SERIES[kind])
    if kind in (TRANSACTIONS, MONITOR_CHECKS, INTERACTIONS):
        parameters["points"] = [(n, w.since, w.until) for n, w in enumerate(windows, 1)]
    if kind == INTERACTIONS:
        parameters["part"] = INP_PARTS[request.metric]
    else:
        parameters.update(_memberships(windows))
    if kind == PAGELOADS:
        count, total, histogram = columns(SOURCES[request.metric])
        total = total if request.statistic == "avg" else "0"  # a percentile needs no sum
        text = text.replace("{count}", count).replace("{total}", total).replace("{histogram}", histogram)
    if kind == API_CALLS:
        text = text.replace("{total}", _API_TOTAL[SOURCES[request.metric].share])
    rows = client.query(text, parameters=parameters).result_rows
    by_point = {int(row[0]): tuple(row) for row in rows}
    out: list[Point] = []
    for n, at in enumerate(points, 1):
        value, samples = pick(request, by_point.get(n))
        out.append((at, value, samples))
    return out


def _memberships(windows: list[ViewFilters]) -> dict[str, Any]:
    """The periods tiling the windows (numbered from 1) as series_*.sql takes them: each hour, day or block
    with the points it counts for, and the runs of one-minute periods per point and hour (an edge hour's
    minutes)."""
    members: dict[Period, list[int]] = defaultdict(list)
    runs: dict[tuple[int, datetime], list[datetime]] = {}
    for n, window in enumerate(windows, 1):
        for grain, start in window.periods(minutes=True)["periods"]:
            if grain != "minute":
                members[(grain, start)].append(n)
            else:
                run = runs.setdefault((n, start.replace(minute=0)), [start, start])
                run[0], run[1] = min(run[0], start), max(run[1], start)
    minute_ranges = [(n, hour, a, b + timedelta(minutes=1)) for (n, hour), (a, b) in runs.items()]
    return {
        "periods": list(members),
        "members": list(members.values()),
        "minute_hours": sorted({hour for _, hour, _, _ in minute_ranges}),
        "minute_ranges": minute_ranges,
    }
