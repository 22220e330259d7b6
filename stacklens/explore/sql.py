"""The SQL of an Explore query, composed only from the validated spec (:mod:`stacklens.explore.query`) and the
named templates of ``warehouse_sql/queries/explore/``.

Nothing a user typed becomes SQL text. The templates' ``{placeholders}`` are filled from the fixed fragments
of this module and the dataset's column names, chosen by key: the dataset's rows (``explore/<dataset>.sql``),
the aggregate functions of :data:`FUNCTIONS`, the interval units of :data:`INTERVAL_SQL`, generated aliases
(``g0``, ``a0``, ``n0``) and numbers. Every value — filter values, tag keys, the window, the organization and
its project ids — is a server-side parameter (``{v0:String}``). Every query is scoped ``org_id = {org_id} AND
project_id IN {project_ids}`` inside the dataset's rows, so no filter can widen it.

One metric, one value: a percentile of a metric the views keep as a 1 % log histogram (page-load timings
and web vitals, API and resource durations: :attr:`Dataset.histograms`) is taken as the views, budgets and
alerts take it — over each row's value as the histogram keeps it (``h_<metric>``: the value of its 1 %
bucket, from the bucketing macros the state builders use) with the same interpolating weighted quantile
(``quantileExactWeightedInterpolated``, linear between the ranks around ``level · (n − 1)`` as polars'
``linear``) — so for the same rows the figure is the states' to the last digit, and within the catalog's
stated error (1 %) of the exact percentile. The average of a vital the states keep no sum of (LCP, INP,
CLS, FCP: :data:`HISTOGRAM_MEANS`) is the mean of those values, as the budgets take it; every other
average, sum, minimum, maximum and count is exact over the raw values, and a percentile of a metric without
a histogram (resource size) is the exact ``quantileExactInclusive``. The window is the views' too: whole
UTC minutes (:class:`stacklens.view_filters.ViewFilters`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from stacklens.explore import pageload_states
from stacklens.explore.datasets import NUMBER, PAGELOADS, Dataset
from stacklens.explore.query import PERCENTILES, BadQuery, Filter, Query
from stacklens.performance.window_values import PAGELOADS as PAGELOAD_STATES
from stacklens.performance.window_values import SOURCES
from stacklens.warehouse.queries import fill_template, load_query

# Per query: what one question may cost the shared engine (a 30-day grouped p75 over 10 M page loads takes
# well under 1 s and 1 GB: bench/RESULTS.md). The engine stops a query over either with TIMEOUT_EXCEEDED /
# MEMORY_LIMIT_EXCEEDED.
MAX_EXECUTION_SECONDS = 20
MAX_MEMORY_BYTES = 2_000_000_000
# Rows one question may read (TOO_MANY_ROWS past it): a 90-day question over 10 M page loads a day stays
# inside.
MAX_ROWS_TO_READ = 1_000_000_000
# Threads one question may use: half the cores, so ingest and the issue pages keep the others whatever an
# analyst asks (bench/RESULTS.md, "Query budgets").
MAX_THREADS = max(1, (os.cpu_count() or 2) // 2)
# The CPU priority (Linux nice) of the engine threads that run an analyst's question (os_thread_priority):
# on a host whose cores are all busy, the front door's inserts and the pages' reads (nice 0) come first, and a
# question gets about a tenth of a core beside each of them; on an idle host it runs at full speed. The thread
# limit alone still let ten agents asking Explore in a loop take the cores the front door needed
# (bench/agents.py). The engine applies it with CAP_SYS_NICE only (docs/explore.md).
LANE_NICE = 10
INTERVAL_SQL: dict[str, str] = {
    "5m": "INTERVAL 5 MINUTE",
    "15m": "INTERVAL 15 MINUTE",
    "1h": "INTERVAL 1 HOUR",
    "6h": "INTERVAL 6 HOUR",
    "1d": "INTERVAL 1 DAY",
    "1w": "INTERVAL 1 WEEK",
}
# The aggregate of each function over the value column ``{value}`` (``m_<metric>``) of the dataset's rows.
FUNCTIONS: dict[str, str] = {
    "count": "count()",
    "count_metric": "count({value})",  # rows that report the metric
    "unique_users": "uniqExactIf(uid, uid != '')",
    "avg": "avg({value})",
    "sum": "sum({value})",
    "min": "min({value})",
    "max": "max({value})",
    **{name: f"quantileExactInclusive({level})({{value}})" for name, level in PERCENTILES.items()},
}
# The percentile of a metric kept as a 1 % log histogram, over its rows' bucket values ``{value}``
# (``h_<metric>``): the views' function (macro duration_p95, queries/performance/), each row weighing 1.
HISTOGRAM_PERCENTILE = "quantileExactWeightedInterpolated({level})({value}, 1)"
# Page-load metrics whose states keep a histogram but no sum: their average is the histogram's weighted mean
# (stacklens.performance.window_values.SOURCES), and so is Explore's.
HISTOGRAM_MEANS = frozenset(
    key for key, s in SOURCES.items() if s.kind == PAGELOAD_STATES and s.histogram and not s.total
)
# Rows of one block of an answer: the engine's default; a download encodes and holds a block at a time.
BLOCK_ROWS = 65_409
# Points of one answer's time series (all groups together).
MAX_SERIES_POINTS = 50_000


@dataclass(frozen=True)
class Limits:
    max_execution_seconds: float = MAX_EXECUTION_SECONDS  # the engine takes fractions of a second too
    max_memory_bytes: int = MAX_MEMORY_BYTES
    max_rows_to_read: int = MAX_ROWS_TO_READ
    max_threads: int = MAX_THREADS
    nice: int = LANE_NICE

    @property
    def seconds_sql(self) -> str:
        """The time limit as the engine's setting value: a plain decimal number (``20``, ``0.001``)."""
        return f"{float(self.max_execution_seconds):.6f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class Statement:
    sql: str
    parameters: dict[str, Any]


class _Builder:
    """The parameters of one statement and the column of each field or tag a query names."""

    def __init__(self) -> None:
        self.parameters: dict[str, Any] = {}

    def param(self, value: Any, kind: str) -> str:
        name = f"v{len(self.parameters)}"
        self.parameters[name] = value
        return f"{{{name}:{kind}}}"

    def column(self, dataset: Dataset, name: str) -> str:
        """The rows' column of a field, or the tag's value (a parameter key) for ``tag:<key>``."""
        if name.startswith("tag:"):
            return f"tags[{self.param(name[4:], 'String')}]"
        if name not in dataset.fields:  # parse_query checked it; kept so no other name can pass
            raise BadQuery("field", f"unknown field {name!r}")
        return f"f_{name}"

    def condition(self, dataset: Dataset, item: Filter) -> str:
        column = self.column(dataset, item.field)
        number = not item.field.startswith("tag:") and dataset.fields[item.field].type == NUMBER
        kind = "Float64" if number else "String"
        if item.op == "in":
            return f"{column} IN {self.param(list(item.value), f'Array({kind})')}"  # type: ignore[arg-type]  # `in`: a tuple
        if item.op == "contains":
            return f"positionCaseInsensitiveUTF8({column}, {self.param(item.value, 'String')}) > 0"
        operator = {"=": "=", "!=": "!=", ">=": ">=", "<": "<"}[item.op]
        return f"{column} {operator} {self.param(item.value, kind)}"

    def grouped(
        self, query: Query, dataset: Dataset, bucket: str, aggregates: list[str], states: bool = False
    ) -> tuple[str, list[str]]:
        """grouped.sql over the dataset's rows, or with ``states`` over its state rows
        (:mod:`pageload_states`): ``(sql, group key aliases)``."""
        keys = [f"{self.column(dataset, name)} AS g{i}" for i, name in enumerate(query.group_by)]
        if bucket:
            keys.insert(0, f"toStartOfInterval(ts, {bucket}) AS bucket")
        aliases = [k.rsplit(" AS ", 1)[1] for k in keys]
        where = " AND ".join(self.condition(dataset, f) for f in query.filters) or "1"
        sql = fill_template(
            "explore/grouped",
            columns=", ".join([*keys, *aggregates, f"{_samples(dataset, states)} AS samples"]),
            rows=load_query(pageload_states.ROWS_QUERY if states else dataset.rows_query),
            where=where,
            group_by=f"GROUP BY {', '.join(aliases)}" if aliases else "",
        )
        return sql, aliases


def aggregate_sql(dataset: Dataset, fn: str, metric: str) -> str:
    """The engine's aggregate of a function of the catalog over a metric's column ('' = the rows), or the
    dataset's measure of the metric (a count of sessions counts sessions, not their updates). A percentile
    of a metric kept as a 1 % log histogram, and the average of one without a stored sum, read its bucket
    values (``h_<metric>``) as the views, budgets and alerts do."""
    measure = dataset.measures.get(metric or (dataset.counted if fn == "count" else ""))
    if measure is not None:
        return measure.sql
    key = "count_metric" if fn == "count" and metric else fn
    if key not in FUNCTIONS:
        raise BadQuery("aggregates", f"unknown function {fn!r}")
    if metric in dataset.histograms:
        if fn in PERCENTILES:
            return HISTOGRAM_PERCENTILE.format(level=PERCENTILES[fn], value=f"h_{metric}")
        if fn == "avg" and metric in HISTOGRAM_MEANS:
            return f"avg(h_{metric})"
        if key == "count_metric" and dataset.stored_histograms:
            return f"count(h_{metric})"  # NULL exactly where the value is
    return FUNCTIONS[key].replace("{value}", f"m_{metric}")


def _aggregate(dataset: Dataset, fn: str, metric: str, states: bool) -> str:
    return pageload_states.aggregate_sql(fn, metric) if states else aggregate_sql(dataset, fn, metric)


def samples_sql(dataset: Dataset) -> str:
    """What a group's ``samples`` counts: its rows, or the dataset's counted measure (sessions)."""
    measure = dataset.measures.get(dataset.counted)
    return measure.samples if measure is not None else "count()"


def _samples(dataset: Dataset, states: bool) -> str:
    return pageload_states.SAMPLES if states else samples_sql(dataset)


def value_counts(query: Query) -> dict[int, str]:
    """Aggregate index → the alias of the count of values it summarises (``n<i>``), for the aggregates over a
    metric's values (a p75 of LCP summarises the page loads that report LCP, not every page load; a crash-free
    rate, the sessions)."""
    return {
        i: f"n{i}"
        for i, a in enumerate(query.aggregates)
        if a.metric and a.fn not in ("count", "unique_users", "rate_per_1k")
    }


def _count_sql(dataset: Dataset, metric: str, states: bool = False) -> str:
    if states:
        return pageload_states.aggregate_sql("count", metric)
    measure = dataset.measures.get(metric)
    if measure is not None:
        return measure.samples
    return aggregate_sql(dataset, "count", metric)


def _check_rate_fields(query: Query) -> None:
    """``rate_per_1k`` divides by the page loads of the same window, projects, filters and groups: every field
    it filters or groups by must be one page loads have too."""
    for name in (*query.group_by, *(f.field for f in query.filters)):
        if not name.startswith("tag:") and name not in PAGELOADS.fields:
            raise BadQuery("aggregates", f"rate_per_1k needs fields page loads have too; {name!r} is not one")


def table_statement(
    query: Query,
    org_id: int,
    project_ids: list[int],
    limits: Limits,
    limit: int,
    *,
    total: bool = False,
    counts: bool = True,
    block_rows: int = BLOCK_ROWS,
    states_until: datetime | None = None,
) -> Statement:
    """The grouped table: one row per group (the whole window), ordered, ``limit`` rows; ``total`` adds the
    count of all groups (``total_rows``) to every row, ``counts`` the value counts ``n<i>``
    (:func:`value_counts`); the engine answers in blocks of ``block_rows``. ``states_until``: where the
    page-load states end (:func:`pageload_states.read_states_until`); a qualifying question reads them
    before it, raw rows after."""
    return _statement(query, org_id, project_ids, limits, "", limit, total, counts, block_rows, states_until)


def series_statement(
    query: Query,
    org_id: int,
    project_ids: list[int],
    limits: Limits,
    states_until: datetime | None = None,
) -> Statement:
    """The time series: one row per group and bucket that holds rows (an empty bucket is absent, not 0)."""
    bucket = INTERVAL_SQL[query.interval]
    return _statement(
        query,
        org_id,
        project_ids,
        limits,
        bucket,
        MAX_SERIES_POINTS + 1,
        False,
        True,
        BLOCK_ROWS,
        states_until,
    )


def _split(
    builder: _Builder, query: Query, bucket: str, parts: dict[bool, list[str]]
) -> tuple[str, list[str]]:
    """split.sql: the groups of the aggregates the states carry (``parts[True]``) beside those of the raw rows
    (``parts[False]``: INP, DOM ready, …), joined by the group keys before the answer orders and cuts them, so
    the groups, their order and the limit are the single query's whichever aggregate they sort by."""
    on_states, keys = builder.grouped(query, query.dataset, bucket, parts[True], True)
    raw, _ = builder.grouped(query, query.dataset, bucket, parts[False], False)
    join = f"LEFT JOIN ({raw}) AS r USING ({', '.join(keys)})" if keys else f"CROSS JOIN ({raw}) AS r"
    aliases = [column.rsplit(" AS ", 1)[1] for column in parts[False]]
    raw_columns = ", ".join(f"r.{alias} AS {alias}" for alias in aliases)
    return fill_template("explore/split", states=on_states, join=join, raw_columns=raw_columns), keys


def _statement(
    query: Query,
    org_id: int,
    project_ids: list[int],
    limits: Limits,
    bucket: str,
    limit: int,
    total: bool,
    counts: bool,
    block_rows: int,
    states_until: datetime | None,
) -> Statement:
    dataset = query.dataset
    builder = _Builder()
    scope: dict[str, Any] = {
        "org_id": org_id,
        "project_ids": project_ids,
        "since": query.window.since,
        "until": query.window.until,
    }
    # A qualifying page-load question reads the states that tile its window up to where the pipelines' tick
    # has read, the raw rows after (pageload_states); without states for any of its window it reads the raw
    # rows.
    tiled = states_until is not None and states_until > query.window.since
    states = tiled and pageload_states.qualifies(query)
    loads_states = tiled and pageload_states.loads_qualify(query)
    split = tiled and pageload_states.splits(query)
    if states_until is not None and (states or loads_states or split):
        cut = min(states_until, query.window.until)
        scope.update(states_until=cut, periods=pageload_states.tiling(query, cut))
    counted = value_counts(query) if counts else {}
    # Per aggregate (and its value count) whether the states answer it: all, none, or with ``split`` those
    # they carry.
    parts: dict[bool, list[str]] = {True: [], False: []}
    for i, a in enumerate(query.aggregates):
        if a.fn == "rate_per_1k":
            continue
        on_states = states or (split and pageload_states.carries(a.fn, a.metric))
        parts[on_states].append(f"{_aggregate(dataset, a.fn, a.metric, on_states)} AS a{i}")
        if i in counted:
            parts[on_states].append(f"{_count_sql(dataset, a.metric, on_states)} AS {counted[i]}")
    if split:
        groups, keys = _split(builder, query, bucket, parts)
    else:
        groups, keys = builder.grouped(query, dataset, bucket, parts[states], states)
    rate = [i for i, a in enumerate(query.aggregates) if a.fn == "rate_per_1k"]
    if rate:
        _check_rate_fields(query)
        loads, _ = builder.grouped(query, PAGELOADS, bucket, [], loads_states)
        join = f"LEFT JOIN ({loads}) AS l USING ({', '.join(keys)})" if keys else f"CROSS JOIN ({loads}) AS l"
        groups = fill_template("explore/rate", errors=groups, join=join, rate=f"a{rate[0]}")
    aliases = [
        *(f"g{i}" for i in range(len(query.group_by))),
        *(f"a{i}" for i in range(len(query.aggregates))),
        "samples",
    ]
    if bucket:
        order = ", ".join([*keys[1:], "bucket"])
    else:
        direction = "DESC" if query.descending else "ASC"
        order = ", ".join([f"{aliases[query.columns.index(query.order_by)]} {direction}", *keys])
    sql = fill_template(
        "explore/answer",
        groups=groups,
        total=", count() OVER () AS total_rows" if total else "",
        order=order,
        limit=str(int(limit)),
        max_execution_seconds=limits.seconds_sql,
        max_memory_bytes=str(int(limits.max_memory_bytes)),
        max_rows_to_read=str(int(limits.max_rows_to_read)),
        max_threads=str(int(limits.max_threads)),
        nice=str(int(limits.nice)),
        block_rows=str(int(block_rows)),
    )
    return Statement(sql, {**scope, **builder.parameters})
