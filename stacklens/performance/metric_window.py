"""A performance metric over a time window: (metric, statistic, scope, window, environment) → value + samples.

Shared by alert rules and budgets. Without an environment the value comes from ``page_hour_states`` (the
hourly states the performance marts keep, exact percentiles): a window is whole hours, ``[toStartOfHour(now -
window), now)``, and what the latest hour holds is as fresh as the last performance tick (≤ 5 minutes). With an
environment it comes from the raw ``transactions`` (the states carry no environment), to the millisecond.

Many requests are answered by **one** query: the requests are an array per project (aligned with the project
ids; ``indexOf`` finds a row's own) and
every row is ``ARRAY JOIN``-ed to the requests of its project whose scope pattern matches its page and whose
window holds its hour, so 1,000 rules cost one scan of their projects' states, not 1,000 queries.

Scopes: ``*`` (every page), an exact route (``/checkout``) or a pattern with ``*`` (``/products/*``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.errors import InvalidInput

_VIEW = "op IN ('pageload', 'navigation')"
# The queries below are composed from these constants only (never from input); every value is a
# server-side parameter.
# metric -> (label, unit, states prefix, statistics the states keep, raw expression, raw condition)
METRICS: dict[str, tuple[str, str, str, tuple[str, ...], str, str]] = {
    "load_time_ms": ("page load time", "ms", "load", ("p50", "p75", "p95", "avg"), "duration_ms", _VIEW),
    "ttfb_ms": (
        "time to first byte",
        "ms",
        "ttfb",
        ("p50", "p75", "p95", "avg"),
        "measurements['ttfb']",
        _VIEW + " AND mapContains(measurements, 'ttfb')",
    ),
    "lcp_ms": (
        "largest contentful paint",
        "ms",
        "lcp",
        ("p75",),
        "measurements['lcp']",
        _VIEW + " AND mapContains(measurements, 'lcp')",
    ),
    "inp_ms": (
        "interaction to next paint",
        "ms",
        "inp",
        ("p75",),
        "measurements['inp']",
        _VIEW + " AND mapContains(measurements, 'inp')",
    ),
    "cls": (
        "cumulative layout shift",
        "",
        "cls",
        ("p75",),
        "measurements['cls']",
        _VIEW + " AND mapContains(measurements, 'cls')",
    ),
    "api_ms": (
        "API response time",
        "ms",
        "api",
        ("p50", "p75", "p95", "avg"),
        "duration_ms",
        "op = 'http.server'",
    ),
}
STATISTICS = ("p50", "p75", "p95", "avg")
_QUANTILE_INDEX = {"p50": 0, "p75": 1, "p95": 2}


class MetricWindowError(InvalidInput):
    """An unknown metric or a statistic the metric does not keep; the message lists the valid ones."""


@dataclass(frozen=True)
class WindowRequest:
    project_id: int
    metric: str
    statistic: str
    scope: str = "*"
    window: timedelta = timedelta(hours=1)
    environment: str = ""


@dataclass(frozen=True)
class WindowValue:
    value: float | None  # None: no samples at all
    samples: int
    since: datetime
    until: datetime


def validate(metric: str, statistic: str) -> None:
    if metric not in METRICS:
        raise MetricWindowError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    if statistic not in METRICS[metric][3]:
        raise MetricWindowError(
            f"{metric} keeps the statistics {', '.join(METRICS[metric][3])}; {statistic!r} is not one of them"
        )


def like_pattern(scope: str) -> str:
    """The SQL LIKE pattern of a scope: ``*`` matches any characters; ``%`` and ``_`` match themselves."""
    if scope in ("", "*"):
        return "%"
    escaped = scope.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%")


def _since(now: datetime, window: timedelta, hourly: bool) -> datetime:
    start = now - window
    return start.replace(minute=0, second=0, microsecond=0) if hourly else start


_STATES_COLUMNS = ", ".join(
    f"sum({p}_n), {'sum(' + p + '_sum)' if len(stats) > 1 else '0'}, "
    f"{'quantilesExactInclusiveMerge(0.5, 0.75, 0.95)' if len(stats) > 1 else 'quantilesExactInclusiveMerge(0.75)'}({p}_q)"
    for _, _, p, stats, _, _ in METRICS.values()
).replace("sum(api_n)", "sum(api_calls)")

STATES_QUERY = f"""
SELECT target.1 AS request, {_STATES_COLUMNS}
FROM page_hour_states FINAL
ARRAY JOIN arrayFilter(x -> page LIKE x.2 AND hour >= x.3,
                       {{targets:Array(Array(Tuple(UInt32, String, DateTime('UTC'))))}}[indexOf({{project_ids:Array(UInt64)}}, project_id)]) AS target
WHERE project_id IN {{project_ids:Array(UInt64)}} AND hour >= {{since:DateTime('UTC')}}
  AND hour < {{until:DateTime('UTC')}}
GROUP BY request
"""  # noqa: S608 (columns from the METRICS constants; values are parameters)

_RAW_COLUMNS = ", ".join(
    f"countIf({cond}), sumIf({expr}, {cond}), quantilesExactInclusiveIf(0.5, 0.75, 0.95)({expr}, {cond})"
    for _, _, _, _, expr, cond in METRICS.values()
)
RAW_QUERY = f"""
SELECT target.1 AS request, {_RAW_COLUMNS}
FROM transactions
ARRAY JOIN arrayFilter(x -> page LIKE x.2 AND timestamp >= x.3 AND environment = x.4,
                       {{targets:Array(Array(Tuple(UInt32, String, DateTime64(3, 'UTC'), String)))}}[indexOf({{project_ids:Array(UInt64)}}, project_id)])
           AS target
WHERE project_id IN {{project_ids:Array(UInt64)}} AND timestamp >= {{since:DateTime64(3, 'UTC')}}
  AND timestamp < {{until:DateTime64(3, 'UTC')}}
GROUP BY request
"""  # noqa: S608 (columns from the METRICS constants; values are parameters)


def _pick(row: tuple[Any, ...], metric: str, statistic: str) -> tuple[float | None, int]:
    names = list(METRICS)
    base = 1 + 3 * names.index(metric)
    n, total, quantiles = int(row[base] or 0), float(row[base + 1] or 0), list(row[base + 2] or [])
    if n == 0:
        return None, 0
    if statistic == "avg":
        return total / n, n
    index = 0 if len(quantiles) == 1 else _QUANTILE_INDEX[statistic]
    value = float(quantiles[index]) if len(quantiles) > index else math.nan
    return (None if math.isnan(value) else value), n


def compute_many(
    client: Any, requests: list[WindowRequest], now: datetime | None = None
) -> list[WindowValue]:
    """The value and sample count of every request, in order (two queries at most: states and raw)."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    for request in requests:
        validate(request.metric, request.statistic)
    results: list[WindowValue | None] = [None] * len(requests)
    hourly = [i for i, r in enumerate(requests) if not r.environment]
    raw = [i for i, r in enumerate(requests) if r.environment]
    for indexes, is_hourly in ((hourly, True), (raw, False)):
        if not indexes:
            continue
        starts = {i: _since(now, requests[i].window, is_hourly) for i in indexes}
        # Each project's requests only: a row is matched against its own project's targets, not all of them.
        # Rules differing only in metric or statistic share a target (every metric is computed anyway), so a
        # state row is merged once per distinct (project, scope, window start, environment), not once per rule.
        keys: dict[tuple, int] = {}
        targets: dict[int, list[tuple]] = {}
        of_request: dict[int, int] = {}
        for i in indexes:
            r = requests[i]
            key = (r.project_id, like_pattern(r.scope), starts[i], r.environment)
            if key not in keys:
                keys[key] = len(keys)
                targets.setdefault(r.project_id, []).append(
                    (keys[key], key[1], key[2]) + (() if is_hourly else (r.environment,))
                )
            of_request[i] = keys[key]
        project_ids = sorted(targets)
        parameters = {
            "targets": [
                targets[p] for p in project_ids
            ],  # aligned with project_ids: indexOf finds a row's own
            "project_ids": project_ids,
            "since": min(starts.values()),
            "until": now,
        }
        rows = client.query(STATES_QUERY if is_hourly else RAW_QUERY, parameters=parameters).result_rows
        by_target = {int(row[0]): row for row in rows}
        for i in indexes:
            row = by_target.get(of_request[i])
            value, samples = _pick(row, requests[i].metric, requests[i].statistic) if row else (None, 0)
            results[i] = WindowValue(value, samples, starts[i], now)
    return [r for r in results if r is not None]


def compute(client: Any, request: WindowRequest, now: datetime | None = None) -> WindowValue:
    return compute_many(client, [request], now)[0]


SERIES_QUERY = f"""
SELECT point, {_STATES_COLUMNS}
FROM page_hour_states FINAL
ARRAY JOIN arrayFilter(p -> hour < p AND hour >= p - {{window_s:UInt32}}, {{points:Array(DateTime('UTC'))}}) AS point
WHERE project_id = {{project_id:UInt64}} AND page LIKE {{pattern:String}}
  AND hour >= {{since:DateTime('UTC')}} AND hour < {{until:DateTime('UTC')}}
GROUP BY point ORDER BY point
"""  # noqa: S608


def series(
    client: Any, request: WindowRequest, since: datetime, until: datetime, step: timedelta
) -> list[tuple[datetime, float | None, int]]:
    """The metric as a rule evaluated every ``step`` from ``since`` to ``until`` would have seen it (hourly
    states; the environment is ignored here: the preview is of the whole project's pages)."""
    validate(request.metric, request.statistic)
    start = since.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    points = []
    at = start
    while at <= until:
        points.append(at)
        at += step
    window_s = max(int(request.window.total_seconds()) // 3600 * 3600, 3600)
    rows = client.query(
        SERIES_QUERY,
        parameters={
            "points": points,
            "window_s": window_s,
            "project_id": request.project_id,
            "pattern": like_pattern(request.scope),
            "since": start - timedelta(seconds=window_s),
            "until": until,
        },
    ).result_rows
    by_point = {row[0].replace(tzinfo=UTC) if row[0].tzinfo is None else row[0]: row for row in rows}
    out = []
    for point in points:
        row = by_point.get(point)
        value, samples = _pick(row, request.metric, request.statistic) if row else (None, 0)
        out.append((point, value, samples))
    return out
