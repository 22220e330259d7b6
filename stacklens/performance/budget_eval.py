"""How a budget is judged: its current value, its status (pass / fail / insufficient data), and its value day
by day over the last 30 days. The one implementation behind the `budget_status` asset, the API, the CLI and
the budgets page.

Timing metrics come from :mod:`stacklens.performance.metric_window` (the hourly states the alerts read too);
the byte budgets from ``resource_hour_states`` over the page views of ``page_hour_states``; FCP and error %
from the raw ``transactions`` (the states keep neither). Every window is whole hours:
``[toStartOfHour(at - window), at)``, as metric_window's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.performance import metric_window
from stacklens.performance.budget_rules import METRICS

HISTORY_DAYS = 30
PASS, FAIL, INSUFFICIENT = "pass", "fail", "insufficient_data"
# Budget metric -> metric_window metric (the statistic is the budget's).
_WINDOW_METRICS = {"api_p95_ms": "api_ms"}
_POINTS = "arrayFilter(p -> hour < p AND hour >= toStartOfHour(p - {window_s:UInt32}), {points:Array(DateTime('UTC'))})"
RESOURCE_SERIES = f"""
SELECT point, sumIf(total_bytes, resource_type = 'JavaScript'), sum(total_bytes)
FROM resource_hour_states FINAL ARRAY JOIN {_POINTS} AS point
WHERE project_id = {{project_id:UInt64}} AND page LIKE {{pattern:String}}
  AND hour >= {{since:DateTime('UTC')}} AND hour < {{until:DateTime('UTC')}}
GROUP BY point
"""  # noqa: S608 (constants only; values are parameters)
VIEW_SERIES = f"""
SELECT point, sum(views) FROM page_hour_states FINAL ARRAY JOIN {_POINTS} AS point
WHERE project_id = {{project_id:UInt64}} AND page LIKE {{pattern:String}}
  AND hour >= {{since:DateTime('UTC')}} AND hour < {{until:DateTime('UTC')}}
GROUP BY point
"""  # noqa: S608
RAW_SERIES = """
SELECT point, countIf(has_fcp), sumIf(fcp, has_fcp), quantilesExactInclusiveIf(0.5, 0.75, 0.95)(fcp, has_fcp),
       count(), countIf(status NOT IN ('ok', 'cancelled', 'unknown', '') OR http_status >= 500)
FROM
(
    SELECT timestamp, measurements['fcp'] AS fcp, status, http_status,
           op IN ('pageload', 'navigation') AND mapContains(measurements, 'fcp') AS has_fcp
    FROM transactions
    WHERE project_id = {project_id:UInt64} AND page LIKE {pattern:String}
      AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
)
ARRAY JOIN arrayFilter(p -> timestamp < p AND timestamp >= toStartOfHour(p - {window_s:UInt32}),
                       {points:Array(DateTime64(3, 'UTC'))}) AS point
GROUP BY point
"""


@dataclass(frozen=True)
class BudgetSpec:
    id: int
    project_id: int
    metric: str
    statistic: str
    scope: str
    value: float
    window_days: int
    min_samples: int


@dataclass(frozen=True)
class Evaluation:
    value: float | None  # None: no samples in the window
    samples: int
    status: str  # pass | fail | insufficient_data
    margin: float | None  # budget - value: positive = headroom, negative = over budget
    failing_since: datetime | None  # the first daily evaluation of the current failing run


Point = tuple[datetime, float | None, int]


def judge(value: float | None, samples: int, budget: float, min_samples: int) -> str:
    """Fewer samples than the minimum (or none) is insufficient data — never a pass."""
    if value is None or samples < min_samples:
        return INSUFFICIENT
    return PASS if value <= budget else FAIL


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _window_request(spec: BudgetSpec) -> metric_window.WindowRequest:
    return metric_window.WindowRequest(
        spec.project_id,
        _WINDOW_METRICS.get(spec.metric, spec.metric),
        spec.statistic,
        spec.scope,
        timedelta(days=spec.window_days),
    )


def _other_series(client: Any, spec: BudgetSpec, points: list[datetime]) -> list[Point]:
    """The byte budgets, FCP and error % at each point (one or two queries)."""
    points = [_utc(p).replace(microsecond=0) for p in points]  # as the DateTime parameters carry them
    window_s = spec.window_days * 86400
    parameters = {
        "points": points,
        "window_s": window_s,
        "project_id": spec.project_id,
        "pattern": metric_window.like_pattern(spec.scope),
        "since": min(points) - timedelta(seconds=window_s + 3600),
        "until": max(points),
    }
    out: list[Point] = []
    if METRICS[spec.metric].source == "resources":
        sizes = {_utc(r[0]): r for r in client.query(RESOURCE_SERIES, parameters=parameters).result_rows}
        views = {_utc(r[0]): int(r[1]) for r in client.query(VIEW_SERIES, parameters=parameters).result_rows}
        column = 1 if spec.metric == "js_bytes" else 2
        for at in points:
            n = views.get(at, 0)
            total = float(sizes[at][column]) if at in sizes else 0.0
            out.append((at, total / n if n else None, n))
        return out
    rows = {_utc(r[0]): r for r in client.query(RAW_SERIES, parameters=parameters).result_rows}
    for at in points:
        row = rows.get(at)
        if row is None:
            out.append((at, None, 0))
        elif spec.metric == "error_pct":
            n = int(row[4])
            out.append((at, 100.0 * int(row[5]) / n if n else None, n))
        else:
            n = int(row[1])
            if not n:
                out.append((at, None, 0))
            elif spec.statistic == "avg":
                out.append((at, float(row[2]) / n, n))
            else:
                out.append((at, float(row[3][{"p50": 0, "p75": 1, "p95": 2}[spec.statistic]]), n))
    return out


def current_values(client: Any, specs: list[BudgetSpec], now: datetime) -> list[tuple[float | None, int]]:
    """Each budget's value and sample count over its window ending ``now`` (timing budgets: one query)."""
    window_specs = [s for s in specs if METRICS[s.metric].source == "window"]
    computed = metric_window.compute_many(client, [_window_request(s) for s in window_specs], now)
    by_id = {id(s): (w.value, w.samples) for s, w in zip(window_specs, computed, strict=True)}
    out = []
    for spec in specs:
        if id(spec) in by_id:
            out.append(by_id[id(spec)])
        else:
            _, value, samples = _other_series(client, spec, [now])[0]
            out.append((value, samples))
    return out


def daily_points(now: datetime, days: int = HISTORY_DAYS) -> list[datetime]:
    """Midnight UTC of each of the last ``days`` days, and today's."""
    today = _utc(now).replace(hour=0, minute=0, second=0, microsecond=0)
    return [today - timedelta(days=d) for d in range(days, -1, -1)]


def history(client: Any, spec: BudgetSpec, now: datetime | None = None) -> list[Point]:
    """The budget's windowed value as a daily evaluation would have seen it over the last 30 days."""
    points = daily_points(now or datetime.now(UTC))
    if METRICS[spec.metric].source == "window":
        found = metric_window.series(client, _window_request(spec), points[0], points[-1], timedelta(days=1))
        return [(_utc(at), value, samples) for at, value, samples in found]
    return _other_series(client, spec, points)


def failed_days(spec: BudgetSpec, points: list[Point]) -> tuple[int, int]:
    """How many of the daily evaluations would have failed, and how many had enough samples to judge."""
    verdicts = [judge(v, n, spec.value, spec.min_samples) for _, v, n in points]
    return verdicts.count(FAIL), sum(1 for v in verdicts if v != INSUFFICIENT)


def failing_since(spec: BudgetSpec, points: list[Point], now: datetime) -> datetime:
    """The first daily evaluation of the failing run that ends now (today's midnight when only today fails)."""
    since = _utc(now).replace(hour=0, minute=0, second=0, microsecond=0)
    for at, value, samples in reversed(points):
        if judge(value, samples, spec.value, spec.min_samples) != FAIL:
            break
        since = min(since, at)
    return since


def evaluate(client: Any, specs: list[BudgetSpec], now: datetime | None = None) -> list[Evaluation]:
    """Every budget's current value, status and margin; a failing one also since when (its daily history)."""
    now = _utc(now or datetime.now(UTC))
    out = []
    for spec, (value, samples) in zip(specs, current_values(client, specs, now), strict=True):
        status = judge(value, samples, spec.value, spec.min_samples)
        since = failing_since(spec, history(client, spec, now), now) if status == FAIL else None
        margin = None if value is None else spec.value - value
        out.append(Evaluation(value, samples, status, margin, since))
    return out
