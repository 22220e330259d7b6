"""A metric over a time window — (metric, statistic, scope, window, filters) at a time → value and samples —
read from the states the performance views read, so a budget, an alert rule, their previews and the views give
the same number for the same metric, scope, filters and window.

One window evaluation everywhere: the window ``[at - window, at)`` widened to whole UTC minutes (since down,
until up) and tiled by :meth:`stacklens.view_filters.ViewFilters.periods` — the minutes of its partial edge
hours, its other whole hours, its whole days as blocks — exactly as a view cuts ``since=at -
window&until=at``. Values:

- page-load metrics from ``pageload_periods`` (counts and sums exact; percentiles from the merged 1 % log
  histograms, within 0.5 % of the exact ones; an average without a stored sum — LCP, INP, CLS, FCP — is the
  histograms' weighted mean, within 0.5 % too); bytes per page load from the same rows;
- the API response time and the error rate (``error_pct``: calls answered 4xx or 5xx over all calls) from
  ``endpoint_call_periods`` (the server side's calls; the scope matches the route), as the endpoints view
  reads them;
- the share of failed transactions (``failed_transactions_pct``, what an ``error_rate`` alert rule and its
  preview watch) from the raw ``transactions`` (no state keeps a transaction's status);
- uptime (``uptime_pct``: ok probes over all probes, as the monitor's page counts it) from the raw
  ``monitor_checks``; its scope matches the uptime monitor's slug, not a page.

Many windows at one time are one query (:func:`compute_many`: 1,000 rules, one read of their projects'
periods, page loads and API calls together; the failed transactions a second one); one window at many times
is one query too (:func:`stacklens.performance.window_series.series`: a budget's daily history, an alert
rule's preview). Scopes: ``*`` (everything), a route (``/checkout``) or a pattern with ``*``
(``/products/*``)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.errors import InvalidInput
from stacklens.metrics.statistics import percentile_value
from stacklens.view_filters import GRAIN_MINUTES, Period, ViewFilters
from stacklens.warehouse.queries import load_query

PAGELOADS, API_CALLS, TRANSACTIONS = "pageloads", "api_calls", "transactions"
MONITOR_CHECKS = "monitor_checks"
INTERACTIONS = "interactions"  # inp_interactions: the INP parts (docs/performance.md, "INP causes")
QUANTILES = ("p50", "p75", "p90", "p95", "p99")  # the levels the queries compute, in their order
_TIMINGS = (*QUANTILES, "avg")
# A window's tiling is one bit of a 64-bit mask in window_states.sql: more distinct windows go in further
# queries.
_BITS = 64


@dataclass(frozen=True)
class Source:
    """Where a metric's values come from: the kind of state and, for the page-load states, its columns — the
    count, the sum ('' : the histogram's weighted sum, within 0.5 % of the exact sum) and the 1 % log
    histogram ('' : none; the average is then the only statistic). A ``share`` is 100 × the counted rows
    over the samples (the API calls answered 4xx or 5xx, the failed transactions)."""

    kind: str
    statistics: tuple[str, ...]
    count: str = ""
    total: str = ""
    histogram: str = ""
    share: bool = False


# Metric key -> its source (constant column names of pageload_periods; the queries are written from them).
SOURCES: dict[str, Source] = {
    "load_time_ms": Source(PAGELOADS, _TIMINGS, "views", "load_sum", "load_hist"),
    "ttfb_ms": Source(PAGELOADS, _TIMINGS, "ttfb_n", "ttfb_sum", "ttfb_hist"),
    "dom_ready_ms": Source(PAGELOADS, _TIMINGS, "dom_n", "dom_sum", "dom_hist"),
    "lcp_ms": Source(PAGELOADS, _TIMINGS, "lcp_n", "", "lcp_hist"),
    "inp_ms": Source(PAGELOADS, _TIMINGS, "inp_n", "", "inp_hist"),
    "cls": Source(PAGELOADS, _TIMINGS, "cls_n", "", "cls_hist"),
    "fcp_ms": Source(PAGELOADS, _TIMINGS, "fcp_n", "", "fcp_hist"),
    "js_bytes": Source(PAGELOADS, ("avg",), "views", "toFloat64(js_bytes)"),
    "transfer_bytes": Source(PAGELOADS, ("avg",), "views", "toFloat64(total_bytes)"),
    "api_ms": Source(API_CALLS, _TIMINGS),
    "api_p95_ms": Source(API_CALLS, ("p95",)),
    "error_pct": Source(API_CALLS, ("avg",), share=True),
    "failed_transactions_pct": Source(TRANSACTIONS, ("avg",), share=True),
    "uptime_pct": Source(MONITOR_CHECKS, ("avg",), share=True),
    "inp_input_delay_ms": Source(INTERACTIONS, _TIMINGS),
    "inp_processing_ms": Source(INTERACTIONS, _TIMINGS),
    "inp_presentation_ms": Source(INTERACTIONS, _TIMINGS),
    "inp_third_party_ms": Source(INTERACTIONS, _TIMINGS),
}
# An INP part's code in window_inp_interactions.sql and series_inp_interactions.sql (the column it reads).
INP_PARTS = {
    "inp_input_delay_ms": 1,
    "inp_processing_ms": 2,
    "inp_presentation_ms": 3,
    "inp_third_party_ms": 4,
}
# An API target's code in window_states.sql (its 7th field): 1 sums the calls answered 4xx or 5xx, 0 the
# durations.
_API_CODES = {key: 1 for key, found in SOURCES.items() if found.kind == API_CALLS and found.share}
_NO_HISTOGRAM = "(CAST([], 'Array(Float32)'), CAST([], 'Array(UInt32)'))"


def columns(found: Source) -> tuple[str, str, str]:
    """(count, sum, histogram) expressions of a page-load metric."""
    histogram = found.histogram or _NO_HISTOGRAM
    total = found.total or f"arraySum(arrayMap((k, c) -> k * c, {histogram}.1, {histogram}.2))"
    return found.count, total, histogram


# The page-load metrics' codes in window_states.sql's {metric_columns}: their 1-based positions here.
_PAGELOAD_METRICS = [k for k, v in SOURCES.items() if v.kind == PAGELOADS]
_CODES = {key: n for n, key in enumerate(_PAGELOAD_METRICS, 1)}


def metric_columns(metrics: list[str], averaged: set[str] | frozenset[str] = frozenset()) -> str:
    """window_states.sql's ``{metric_columns}`` for targets of these page-load metrics: each target's metric
    picks its count, histogram and sum (a ``multiIf`` on its code; the plain columns for one metric). Only the
    batch's metrics: every branch is more for the engine to analyse (all nine: ~15 ms of a 60 ms query); and a
    histogram's weighted sum only for a metric asked for its average (``averaged``)."""
    chosen = [k for k in _PAGELOAD_METRICS if k in metrics] or _PAGELOAD_METRICS[:1]

    def expression(key: str, part: int) -> str:
        found = SOURCES[key]
        return "0" if part == 1 and not found.total and key not in averaged else columns(found)[part]

    def pick(part: int, alias: str) -> str:
        branches = "".join(f"metric = {_CODES[k]}, {expression(k, part)}, " for k in chosen[1:])
        last = expression(chosen[0], part)
        return f"multiIf({branches}{last}) AS {alias}" if branches else f"{last} AS {alias}"

    return ", ".join((pick(0, "samples"), pick(2, "hist"), pick(1, "total")))


class WindowError(InvalidInput):
    """A metric no state holds, or a statistic the metric does not have."""


@dataclass(frozen=True)
class WindowRequest:
    project_id: int
    metric: str
    statistic: str
    scope: str = "*"
    window: timedelta = timedelta(hours=1)
    environment: str = ""
    release: str = ""
    browser: str = ""


@dataclass(frozen=True)
class WindowValue:
    value: float | None  # None: no samples at all
    samples: int
    since: datetime  # the window's bounds as evaluated (whole minutes)
    until: datetime


Point = tuple[datetime, float | None, int]  # (evaluated at, value, samples)


def like_pattern(scope: str) -> str:
    """The SQL LIKE pattern of a scope: ``*`` matches any characters; ``%`` and ``_`` match themselves."""
    if scope in ("", "*"):
        return "%"
    escaped = scope.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%")


def source(metric: str, statistic: str) -> Source:
    """The metric's source; :class:`WindowError` naming what is valid when no state holds it."""
    found = SOURCES.get(metric)
    if found is None:
        raise WindowError(f"unknown metric {metric!r}; use one of {', '.join(SOURCES)}")
    if statistic not in found.statistics:
        raise WindowError(f"{metric} has the statistics {', '.join(found.statistics)}; not {statistic!r}")
    return found


def window_filters(request: WindowRequest, at: datetime) -> ViewFilters:
    """The window a request evaluated at ``at`` covers: what a view shows for ``since=at -
    window&until=at`` and the request's filters (whole minutes, tiled by :meth:`ViewFilters.periods`)."""
    at = utc(at)
    return ViewFilters(
        since=at - request.window,
        until=at,
        environment=request.environment,
        release=request.release,
        browser=request.browser,
    )


def bounds(at: datetime, window: timedelta) -> tuple[datetime, datetime]:
    """``(since, until)`` of the window ending at ``at``: widened to whole minutes, as every window is cut."""
    cut = ViewFilters(since=utc(at) - window, until=utc(at))
    return cut.since, cut.until


def value_of(statistic: str, samples: int, total: float, quantiles: list[Any] | None) -> float | None:
    """A statistic from a query's (samples, total, quantiles)."""
    if samples <= 0:
        return None
    if statistic == "avg":
        return total / samples
    values = list(quantiles or [])
    index = QUANTILES.index(statistic)
    value = values[index] if index < len(values) else None
    return None if value is None or math.isnan(float(value)) else float(value)


def pick(request: WindowRequest, row: tuple[Any, ...] | None) -> tuple[float | None, int]:
    if row is None:
        return None, 0
    samples = int(row[1] or 0)
    if SOURCES[request.metric].share:  # total: the calls answered 4xx or 5xx, or the failed transactions
        return (100.0 * int(row[2] or 0) / samples if samples else None), samples
    total = float(row[2] or 0.0)
    value = value_of(request.statistic, samples, total, row[3])
    if request.statistic != "avg" and SOURCES[request.metric].kind == API_CALLS:
        # As the endpoints view reads it: a percentile of one call is the call (stacklens.metrics.statistics).
        value = percentile_value(samples, value, total / samples if samples else None)
    return value, samples


def compute_many(
    client: Any, requests: list[WindowRequest], now: datetime | None = None
) -> list[WindowValue]:
    """Each request's value and samples over its window ending ``now``, in order: one query for the states
    (page loads and API calls together) and one for the failed transactions, each target shared by the
    requests naming the same project, scope, window, filters and metric."""
    now = utc(now or datetime.now(UTC))
    return compute_at(client, [(r, now) for r in requests])


def compute_at(client: Any, evaluations: list[tuple[WindowRequest, datetime]]) -> list[WindowValue]:
    """Each (request, time)'s value and samples over the request's window ending at that time, in order — the
    evaluations of many budgets at many past midnights as of 1,000 rules now: one query for every 64 distinct
    windows (length and end) of the states, one for the failed transactions."""
    for request, _ in evaluations:
        source(request.metric, request.statistic)
    keys = [(r.window, utc(at)) for r, at in evaluations]
    filters = {key: window_filters(r, key[1]) for key, (r, _) in zip(keys, evaluations, strict=True)}
    rows: dict[int, tuple[Any, ...] | None] = {}
    readers = {
        (PAGELOADS, API_CALLS): _read_states,
        (TRANSACTIONS,): _read_failed_transactions,
        (MONITOR_CHECKS,): _read_monitor_checks,
        (INTERACTIONS,): _read_interactions,
    }
    for kinds, read in readers.items():
        chosen = [i for i, (r, _) in enumerate(evaluations) if SOURCES[r.metric].kind in kinds]
        distinct = sorted({keys[i] for i in chosen})
        for first in range(0, len(distinct), _BITS):
            part = set(distinct[first : first + _BITS])
            batch = [(i, evaluations[i][0], filters[keys[i]]) for i in chosen if keys[i] in part]
            rows.update(read(client, batch))
    out = []
    for i, ((request, _), key) in enumerate(zip(evaluations, keys, strict=True)):
        value, samples = pick(request, rows.get(i))
        out.append(WindowValue(value, samples, filters[key].since, filters[key].until))
    return out


def compute(client: Any, request: WindowRequest, now: datetime | None = None) -> WindowValue:
    return compute_many(client, [request], now)[0]


Batch = list[tuple[int, WindowRequest, ViewFilters]]  # (the evaluation's index, its request, its window)


def _targets(
    batch: Batch, tail: Callable[[WindowRequest, ViewFilters], tuple[Any, ...]]
) -> tuple[dict[int, list[tuple[Any, ...]]], dict[int, int]]:
    """The distinct targets of ``batch`` per project, ``(id, pattern, *tail(request, window))``, and each
    evaluation's target (evaluations differing in nothing the query sees share one)."""
    keys: dict[tuple[Any, ...], int] = {}
    targets: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    target_of: dict[int, int] = {}
    for i, r, window in batch:
        key = (r.project_id, like_pattern(r.scope), *tail(r, window))
        if key not in keys:
            keys[key] = len(keys)
            targets[r.project_id].append((keys[key], *key[1:]))
        target_of[i] = keys[key]
    return targets, target_of


def _read_states(client: Any, batch: Batch) -> dict[int, tuple[Any, ...] | None]:
    """One query for a batch of page-load and API evaluations (at most 64 distinct windows): index -> its
    row."""
    if not batch:
        return {}
    windows = sorted({(w.since, w.until): w for _, _, w in batch}.items())
    bits = {bounds: b for b, (bounds, _) in enumerate(windows)}
    parts = {
        kind: _targets(
            [e for e in batch if SOURCES[e[1].metric].kind == kind],
            lambda r, w: (
                bits[(w.since, w.until)],
                r.environment,
                r.release,
                r.browser,
                _CODES.get(r.metric, _API_CODES.get(r.metric, 0)),
            ),
        )
        for kind in (PAGELOADS, API_CALLS)
    }
    # One key space for both branches: the API targets' ids follow the page loads'.
    offset = sum(len(t) for t in parts[PAGELOADS][0].values())
    api_targets = {p: [(t[0] + offset, *t[1:]) for t in ts] for p, ts in parts[API_CALLS][0].items()}
    target_of = {**parts[PAGELOADS][1], **{i: t + offset for i, t in parts[API_CALLS][1].items()}}
    masks: dict[Period, int] = {}
    for bounds, window in windows:
        for period in window.periods(minutes=True)["periods"]:
            masks[period] = masks.get(period, 0) | (1 << bits[bounds])
    pageload_projects, api_projects = sorted(parts[PAGELOADS][0]), sorted(api_targets)
    parameters: dict[str, Any] = {
        # Aligned with the project lists: indexOf finds a row's own project's targets.
        "pageload_projects": pageload_projects,
        "pageload_targets": [parts[PAGELOADS][0][p] for p in pageload_projects],
        "api_projects": api_projects,
        "api_targets": [api_targets[p] for p in api_projects],
        "periods": list(masks),
        "period_keys": [_period_key(p) for p in masks],
        "period_masks": list(masks.values()),
        "since": min(w.since for _, w in windows),
        "until": max(w.until for _, w in windows),
    }
    metrics = [r.metric for _, r, _ in batch if SOURCES[r.metric].kind == PAGELOADS]
    averaged = {r.metric for _, r, _ in batch if r.statistic == "avg"}
    text = _states_query(bool(pageload_projects), bool(api_projects)).replace(
        "{metric_columns}", metric_columns(metrics, averaged)
    )
    by_target = {int(row[0]): tuple(row) for row in client.query(text, parameters=parameters).result_rows}
    return {i: by_target.get(t) for i, t in target_of.items()}


def _states_query(pageloads: bool, api_calls: bool) -> str:
    """window_states.sql with only the branches a batch needs: a branch with no targets reads nothing but is
    still analysed and planned (~10 ms)."""
    pageload_part, api_part = load_query("performance/window_states").split("\nUNION ALL\n")
    api_body, settings = api_part.rsplit("\nSETTINGS ", 1)
    branches = [part for part, wanted in ((pageload_part, pageloads), (api_body, api_calls)) if wanted]
    return "\nUNION ALL\n".join(branches) + "\nSETTINGS " + settings


def _read_failed_transactions(client: Any, batch: Batch) -> dict[int, tuple[Any, ...] | None]:
    """One query of the raw transactions for a batch of failed-transactions evaluations: index -> its row."""
    return _read_raw(
        client,
        batch,
        "performance/window_failed_transactions",
        lambda r, w: (w.since, w.until, r.environment, r.release, r.browser),
    )


def _read_monitor_checks(client: Any, batch: Batch) -> dict[int, tuple[Any, ...] | None]:
    """One query of the uptime probes for a batch of uptime evaluations (the scope matches monitor slugs;
    probes have no environment, release or browser): index -> its row."""
    return _read_raw(client, batch, "performance/window_monitor_checks", lambda r, w: (w.since, w.until))


def _read_interactions(client: Any, batch: Batch) -> dict[int, tuple[Any, ...] | None]:
    """One query of the interactions for a batch of INP part evaluations (exact percentiles, as the INP view
    reads them): index -> its row."""
    return _read_raw(
        client,
        batch,
        "performance/window_inp_interactions",
        lambda r, w: (w.since, w.until, r.environment, r.release, r.browser, INP_PARTS[r.metric]),
    )


def _read_raw(
    client: Any, batch: Batch, query: str, tail: Callable[[WindowRequest, ViewFilters], tuple[Any, ...]]
) -> dict[int, tuple[Any, ...] | None]:
    if not batch:
        return {}
    targets, target_of = _targets(batch, tail)
    project_ids = sorted(targets)
    parameters = {
        "project_ids": project_ids,
        "targets": [targets[p] for p in project_ids],
        "since": min(w.since for _, _, w in batch),
        "until": max(w.until for _, _, w in batch),
    }
    rows = client.query(load_query(query), parameters=parameters).result_rows
    by_target = {int(row[0]): tuple(row) for row in rows}
    return {i: by_target.get(t) for i, t in target_of.items()}


def _period_key(period: Period) -> int:
    """(grain, start) as the queries' one UInt64: the grain's minutes * 2^32 + start's epoch seconds."""
    grain, start = period
    return GRAIN_MINUTES[grain] * 4294967296 + int(start.timestamp())


def utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
