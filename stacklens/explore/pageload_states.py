"""Page-load questions answered from the views' states: which questions qualify, the periods that tile their
window, and their aggregates over state rows (``warehouse_sql/queries/explore/pageload_states.sql``).

A page-load question whose filters and group-bys are all dimensions ``pageload_periods`` keeps (environment,
release, browser, page), whose time buckets the periods tile (none, an hour, six hours, a day, a week) and
whose aggregates the state rows carry (counts, the 1 % histograms' percentiles, averages and sums kept as a
sum and a count, the histogram means) reads the periods that tile its window instead of every page load: over
10 M page loads a few thousand state rows instead of 10 M rows (bench/RESULTS.md). So do the page loads an
error rate per 1,000 page loads divides by, when its fields and buckets are those. Its figures are the raw
path's — the same (value, count) pairs into the same weighted quantile, the same counts, sums up to the order
they are added in.

Freshness: the states hold what the pipelines' tick has folded in, up to its watermark (by
``received_at``). The window is read from the states up to the whole minute before ``watermark − OVERLAP``
and from the raw rows after it, so the recent minutes are as fresh as the raw path; a page load that lands
later than the tick for a minute already folded shows on the next tick, as in the performance views."""

from __future__ import annotations

from datetime import datetime, timedelta

from clickhouse_connect.driver.client import Client

from stacklens.explore.datasets import PAGELOADS
from stacklens.explore.query import PERCENTILES, Query
from stacklens.metrics import windows
from stacklens.view_filters import Period, ViewFilters
from stacklens.warehouse.queries import load_query

ROWS_QUERY = "explore/pageload_states"
FIELDS = frozenset({"environment", "release", "browser", "page"})
# The asset whose watermark says how far the page-load states have read the raw rows, and the overlap its tick
# re-reads (pipelines/warehouse_ops.OVERLAP: an insert may commit with a slightly older received_at).
WATERMARK_ASSET = "pageload_facts"
OVERLAP = timedelta(seconds=30)
# Per metric its state columns: (count, sum or '' when the states keep none, histogram).
METRICS: dict[str, tuple[str, str, str]] = {
    "page_loads": ("s_views", "", ""),
    "load_time_ms": ("s_views", "s_load_sum", "s_load_hist"),
    "ttfb_ms": ("s_ttfb_n", "s_ttfb_sum", "s_ttfb_hist"),
    "fcp_ms": ("s_fcp_n", "", "s_fcp_hist"),
    "lcp_ms": ("s_lcp_n", "", "s_lcp_hist"),
    # The page load's own INP (migration 0320), as the raw rows' `vital_inp`: not the facts' INP, which also
    # takes it from later interaction spans.
    "inp_ms": ("s_inp_n", "", "s_inp_hist"),
    "cls": ("s_cls_n", "", "s_cls_hist"),
}
# The time buckets whose edges the periods fall on, and whether a bucket may hold a whole day (single days,
# never blocks: a block's start is its first day) or only hours.
BUCKET_DAYS = {"": True, "1h": False, "6h": False, "1d": True, "1w": True}
SAMPLES = "sum(s_views)"


def carries(fn: str, metric: str) -> bool:
    """Whether the state rows carry an aggregate: what :func:`aggregate_sql` answers."""
    if fn == "count":
        return not metric or metric in METRICS
    if metric not in METRICS or metric == "page_loads":
        return False
    _, total, histogram = METRICS[metric]
    return fn in PERCENTILES or (fn == "avg" and bool(histogram)) or (fn == "sum" and bool(total))


def _tiled(query: Query) -> bool:
    """Fields the periods keep and buckets they tile."""
    return query.interval in BUCKET_DAYS and all(
        name in FIELDS for name in (*query.group_by, *(f.field for f in query.filters))
    )


def qualifies(query: Query) -> bool:
    """Whether the question can be answered from the states: page loads, fields the periods keep, buckets they
    tile and aggregates they carry."""
    return (
        query.dataset is PAGELOADS
        and _tiled(query)
        and all(carries(a.fn, a.metric) for a in query.aggregates)
    )


def loads_qualify(query: Query) -> bool:
    """Whether the page loads a ``rate_per_1k`` divides by (same window, filters and groups: only counted) can
    be read from the states."""
    return any(a.fn == "rate_per_1k" for a in query.aggregates) and _tiled(query)


def splits(query: Query) -> bool:
    """Whether a page-load question on the fields and buckets the periods keep asks some aggregates the states
    carry and some they do not (DOM ready, min, max, unique users): the first are read from the states,
    only the others from the raw rows, joined by the group keys (sql.py)."""
    carried = [carries(a.fn, a.metric) for a in query.aggregates]
    return query.dataset is PAGELOADS and _tiled(query) and any(carried) and not all(carried)


def reads_states(query: Query) -> bool:
    """Whether any part of the question can read the states (so its statements need where they end)."""
    return qualifies(query) or loads_qualify(query) or splits(query)


def aggregate_sql(fn: str, metric: str) -> str:
    """A qualifying aggregate over state rows: what the raw path computes over the page loads they hold (NULL
    where the raw path's aggregate over no values is NULL)."""
    count, total, histogram = METRICS[metric or "page_loads"]
    if fn == "count":
        return f"sum({count})"
    present = f"sum({count}) = 0"
    if fn in PERCENTILES:
        value = f"quantileExactWeightedInterpolatedArray({PERCENTILES[fn]})({histogram}.1, {histogram}.2)"
        return f"if({present}, NULL, {value})"
    if not total:  # avg of a vital without a stored sum: the histogram's weighted mean
        total = f"arraySum(arrayMap((k, c) -> k * c, {histogram}.1, {histogram}.2))"
    if fn == "sum":
        return f"if({present}, NULL, sum({total}))"
    return f"sum({total}) / nullIf(sum({count}), 0)"


def read_states_until(client: Client) -> datetime | None:
    """The whole minute up to which the page-load states hold every page load received before the pipelines'
    last tick (its watermark less the overlap it re-reads); None before the first tick."""
    rows = client.query(
        load_query("pipelines/watermarks"), parameters={"names": [WATERMARK_ASSET]}
    ).result_rows
    if not rows:
        return None
    return windows.floor(windows.utc(rows[0][1]) - OVERLAP, timedelta(minutes=1))


def tiling(query: Query, states_until: datetime) -> list[Period]:
    """The periods that tile [since, states_until) at the grains the query's buckets allow: blocks of days
    for a table, single days for daily and weekly buckets, hours and minutes only for hourly ones."""
    window = ViewFilters(since=query.window.since, until=states_until)
    periods = window.periods(per_day=query.interval != "", minutes=True)["periods"]
    if BUCKET_DAYS[query.interval]:
        return periods
    hours: list[Period] = []
    for grain, start in periods:
        if grain == "day":
            hours += [("hour", start + timedelta(hours=h)) for h in range(24)]
        else:
            hours.append((grain, start))
    return hours
