"""The SQL of an Explore query, built only from the validated spec (:mod:`stacklens.explore.query`).

Nothing a user typed becomes SQL text: tables, column expressions and functions are the fixed fragments of
:mod:`stacklens.explore.datasets` and of this module, chosen by key; column aliases are generated (``g0``,
``a0``); every value — filter values, tag keys, the window, the organization and its project ids — is a
server-side parameter (``{v0:String}``). Every query is scoped ``org_id = {org_id} AND project_id IN
{projects}`` inside each source table, so no filter can widen it.

Percentiles are ``quantileExactInclusive`` over the raw rows: exact, and interpolated as polars' ``linear``
quantile is; the views' 1 % histogram states are within the catalog's stated error of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stacklens.explore.datasets import NUMBER, PAGELOADS, Dataset
from stacklens.explore.query import PERCENTILES, BadQuery, Filter, Query

# Per query: what one question may cost the shared engine (a 90-day grouped p75 over 10 M rows takes ~1 s and
# well under 1 GB). The engine stops a query over either with TIMEOUT_EXCEEDED / MEMORY_LIMIT_EXCEEDED.
MAX_EXECUTION_SECONDS = 20
MAX_MEMORY_BYTES = 2_000_000_000
INTERVAL_SQL: dict[str, str] = {
    "5m": "INTERVAL 5 MINUTE",
    "15m": "INTERVAL 15 MINUTE",
    "1h": "INTERVAL 1 HOUR",
    "6h": "INTERVAL 6 HOUR",
    "1d": "INTERVAL 1 DAY",
    "1w": "INTERVAL 1 WEEK",
}
# Points of one answer's time series (all groups together).
MAX_SERIES_POINTS = 50_000


@dataclass(frozen=True)
class Limits:
    max_execution_seconds: int = MAX_EXECUTION_SECONDS
    max_memory_bytes: int = MAX_MEMORY_BYTES

    def clause(self) -> str:
        return (
            f" SETTINGS max_execution_time = {int(self.max_execution_seconds)},"
            f" max_memory_usage = {int(self.max_memory_bytes)}, readonly = 1"
        )


@dataclass(frozen=True)
class Statement:
    sql: str
    parameters: dict[str, Any]


class _Builder:
    def __init__(self, query: Query, dataset: Dataset) -> None:
        self.query = query
        self.dataset = dataset
        self.parameters: dict[str, Any] = {}
        self.tags: dict[str, str] = {}  # tag key -> inner column alias

    def param(self, value: Any, kind: str) -> str:
        name = f"v{len(self.parameters)}"
        self.parameters[name] = value
        return f"{{{name}:{kind}}}"

    def column(self, name: str) -> str:
        """The inner column alias of a field or ``tag:<key>``."""
        if name.startswith("tag:"):
            key = name[4:]
            if key not in self.tags:
                self.tags[key] = f"tag{len(self.tags)}"
            return self.tags[key]
        if name not in self.dataset.fields:  # parse_query checked it; kept so no other name can pass
            raise BadQuery("field", f"unknown field {name!r}")
        return f"f_{name}"

    def condition(self, item: Filter) -> str:
        column = self.column(item.field)
        number = not item.field.startswith("tag:") and self.dataset.fields[item.field].type == NUMBER
        kind = "Float64" if number else "String"
        if item.op == "in":
            return f"{column} IN {self.param(list(item.value), f'Array({kind})')}"  # type: ignore[arg-type]
        if item.op == "contains":
            return f"positionCaseInsensitiveUTF8({column}, {self.param(item.value, 'String')}) > 0"
        operator = {"=": "=", "!=": "!=", ">=": ">=", "<": "<"}[item.op]
        return f"{column} {operator} {self.param(item.value, kind)}"

    def inner(self, org_id: int, project_ids: list[int], metrics: set[str]) -> str:
        scope = f"org_id = {self.param(org_id, 'UInt64')} AND project_id IN {self.param(project_ids, 'Array(UInt64)')}"
        since = self.param(self.query.window.since, "DateTime64(3, 'UTC')")
        until = self.param(self.query.window.until, "DateTime64(3, 'UTC')")
        fields = sorted({*self.query.group_by, *(f.field for f in self.query.filters)})
        for name in fields:
            self.column(name)
        tag_params = {key: self.param(key, "String") for key in self.tags}
        arms = []
        for source in self.dataset.sources:
            cols = source.columns
            parts = [f"{cols['ts']} AS ts", f"{cols.get('user', chr(39) * 2)} AS uid"]
            parts += [f"{cols[name]} AS f_{name}" for name in fields if not name.startswith("tag:")]
            for key, alias in self.tags.items():
                parts.append(
                    f"{cols['tags']}[{tag_params[key]}] AS {alias}" if "tags" in cols else f"'' AS {alias}"
                )
            parts += [f"{cols[f'm_{m}']} AS m_{m}" for m in sorted(metrics)]
            time_column = cols["ts"]
            arms.append(
                f"SELECT {', '.join(parts)} FROM {source.table} WHERE {scope}"  # noqa: S608 - whitelisted fragments only
                f" AND {time_column} >= {since} AND {time_column} < {until} AND ({source.condition})"
            )
        return " UNION ALL ".join(arms)


def _aggregate_sql(fn: str, metric: str) -> str:
    value = f"m_{metric}" if metric else ""
    if fn == "count":
        return f"count({value})" if metric else "count()"
    if fn == "unique_users":
        return "uniqExactIf(uid, uid != '')"
    if fn in PERCENTILES:
        return f"quantileExactInclusive({PERCENTILES[fn]})({value})"
    if fn in ("avg", "sum", "min", "max"):
        return f"{fn}({value})"
    raise BadQuery("aggregates", f"unknown function {fn!r}")


def _grouped(
    query: Query, dataset: Dataset, org_id: int, project_ids: list[int], bucket: str, aggregates: list[str]
) -> tuple[_Builder, str]:
    builder = _Builder(query, dataset)
    metrics = {a.metric for a in query.aggregates if a.metric and a.metric in dataset.metrics}
    inner = builder.inner(org_id, project_ids, metrics)
    where = " AND ".join(builder.condition(f) for f in query.filters) or "1"
    keys = [f"{builder.column(name)} AS g{i}" for i, name in enumerate(query.group_by)]
    if bucket:
        keys.insert(0, f"toStartOfInterval(ts, {bucket}) AS bucket")
    select = [*keys, *aggregates, "count() AS samples"]
    group = ", ".join(k.rsplit(" AS ", 1)[1] for k in keys)
    sql = f"SELECT {', '.join(select)} FROM ({inner}) WHERE {where}"  # noqa: S608 - whitelisted fragments only
    if group:
        sql += f" GROUP BY {group}"
    return builder, sql


def _check_rate_fields(query: Query) -> None:
    """``rate_per_1k`` divides by the page loads of the same window, projects, filters and groups: every field
    it filters or groups by must be one page loads have too."""
    for name in (*query.group_by, *(f.field for f in query.filters)):
        if not name.startswith("tag:") and name not in PAGELOADS.fields:
            raise BadQuery("aggregates", f"rate_per_1k needs fields page loads have too; {name!r} is not one")


def table_statement(
    query: Query, org_id: int, project_ids: list[int], limits: Limits, limit: int
) -> Statement:
    """The grouped table: one row per group (the whole window), ordered, ``limit`` rows."""
    return _statement(query, org_id, project_ids, limits, "", limit)


def series_statement(query: Query, org_id: int, project_ids: list[int], limits: Limits) -> Statement:
    """The time series: one row per group and bucket that holds rows (an empty bucket is absent, not 0)."""
    return _statement(query, org_id, project_ids, limits, INTERVAL_SQL[query.interval], MAX_SERIES_POINTS + 1)


def _statement(
    query: Query, org_id: int, project_ids: list[int], limits: Limits, bucket: str, limit: int
) -> Statement:
    dataset = query.dataset
    aggregates = [
        f"{_aggregate_sql(a.fn, a.metric)} AS a{i}"
        for i, a in enumerate(query.aggregates)
        if a.fn != "rate_per_1k"
    ]
    rate = any(a.fn == "rate_per_1k" for a in query.aggregates)
    builder, sql = _grouped(query, dataset, org_id, project_ids, bucket, aggregates)
    keys = [f"g{i}" for i in range(len(query.group_by))]
    if bucket:
        keys.insert(0, "bucket")
    if rate:
        _check_rate_fields(query)
        loads_query = Query(
            PAGELOADS,
            query.project,
            query.window,
            query.filters,
            query.group_by,
            (),
            query.interval,
            query.order_by,
            query.descending,
            query.limit,
        )
        loads_builder = _Builder(loads_query, PAGELOADS)
        loads_builder.parameters = builder.parameters  # one parameter namespace for the joined statement
        loads_inner = loads_builder.inner(org_id, project_ids, set())
        where = " AND ".join(loads_builder.condition(f) for f in query.filters) or "1"
        loads_keys = [f"{loads_builder.column(n)} AS g{i}" for i, n in enumerate(query.group_by)]
        if bucket:
            loads_keys.insert(0, f"toStartOfInterval(ts, {bucket}) AS bucket")
        loads_sql = (
            f"SELECT {', '.join([*loads_keys, 'count() AS loads'])} FROM ({loads_inner}) WHERE {where}"  # noqa: S608 - whitelisted fragments only
        )
        if keys:
            loads_sql += f" GROUP BY {', '.join(keys)}"
        rate_index = next(i for i, a in enumerate(query.aggregates) if a.fn == "rate_per_1k")
        join = (
            f" LEFT JOIN ({loads_sql}) AS l USING ({', '.join(keys)})"
            if keys
            else f" CROSS JOIN ({loads_sql}) AS l"
        )
        sql = (
            f"SELECT e.*, if(l.loads = 0, NULL, 1000 * e.samples / l.loads) AS a{rate_index}"  # noqa: S608 - whitelisted fragments only
            f" FROM ({sql}) AS e{join}"
        )
    order_index = query.columns.index(query.order_by)
    order_alias = (
        [*keys[1 if bucket else 0 :], *(f"a{i}" for i in range(len(query.aggregates))), "samples"]
    )[order_index]
    if bucket:
        order = ", ".join([*keys[1:], "bucket"])
    else:
        direction = "DESC" if query.descending else "ASC"
        order = ", ".join([f"{order_alias} {direction}", *keys])
    sql = f"SELECT * FROM ({sql}) ORDER BY {order} LIMIT {int(limit)}{limits.clause()}"  # noqa: S608 - whitelisted fragments only
    return Statement(sql, builder.parameters)
