"""Running an Explore query: the table and the time series, under per-query limits and a per-organization
concurrency cap, with plain messages when a limit is hit.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError

from stacklens.errors import InvalidInput, StackLensError
from stacklens.explore.answer import ExploreAnswer, ExploreRow, SeriesLine
from stacklens.explore.query import Query
from stacklens.explore.sql import (
    MAX_SERIES_POINTS,
    Limits,
    Statement,
    series_statement,
    table_statement,
    value_counts,
)

# Queries of one organization running at once: a few analysts' questions, never the whole engine (the engine
# runs one query per core; ingest and the pages share it).
MAX_CONCURRENT_PER_ORG = 2
_guard = threading.Lock()
_running: dict[int, threading.BoundedSemaphore] = {}


class TooManyQueries(StackLensError):
    """The organization already runs :data:`MAX_CONCURRENT_PER_ORG` Explore queries."""


class QueryTooCostly(InvalidInput):
    """The engine stopped the query at its time or memory limit."""


@dataclass
class Result:
    columns: list[str]
    rows: list[ExploreRow]
    series: list[SeriesLine] = field(default_factory=list)
    rows_read: int = 0
    elapsed_ms: float = 0.0
    truncated: bool = False
    # Per row, the values each aggregate over a metric summarises (column → count): a p75 of LCP counts the page
    # loads that report LCP. The page shows them beside each figure; the JSON rows keep ``samples`` only.
    value_samples: list[dict[str, int]] = field(default_factory=list)

    def as_json(self) -> ExploreAnswer:
        return {
            "columns": self.columns,
            "rows": self.rows,
            "series": self.series,
            "meta": {"rows_read": self.rows_read, "elapsed_ms": self.elapsed_ms, "truncated": self.truncated},
        }


@contextmanager
def org_slot(org_id: int, most: int = MAX_CONCURRENT_PER_ORG) -> Iterator[None]:
    """Hold one of the organization's query slots; :class:`TooManyQueries` when all are taken."""
    with _guard:
        slot = _running.setdefault(org_id, threading.BoundedSemaphore(most))
    if not slot.acquire(blocking=False):
        raise TooManyQueries(
            f"this organization already runs {most} Explore queries; wait for one to finish and try again"
        )
    try:
        yield
    finally:
        slot.release()


def plain_value(value: Any) -> Any:
    """A JSON value of an engine value: NaN and infinities as null, times as ISO 8601 (UTC as Z), arrays and
    maps element by element, anything else (UUID, Decimal, IP address) as its text."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [plain_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain_value(v) for k, v in value.items()}
    return str(value)


@contextmanager
def engine_limits(limits: Limits) -> Iterator[None]:
    """Turn the engine's time and memory refusals into :class:`QueryTooCostly` with a plain message."""
    try:
        yield
    except ClickHouseError as exc:
        text = str(exc)
        if "TIMEOUT_EXCEEDED" in text or "Code: 159" in text:
            raise QueryTooCostly(
                f"the query ran longer than its {limits.max_execution_seconds:g} s limit; narrow the window,"
                " add filters or group by fewer fields"
            ) from None
        if "MEMORY_LIMIT_EXCEEDED" in text or "Code: 241" in text:
            raise QueryTooCostly(
                f"the query needed more than its {limits.max_memory_bytes / 1e9:g} GB memory limit; narrow the"
                " window, add filters or group by fields with fewer values"
            ) from None
        raise


def _execute(client: Client, statement: Statement, limits: Limits) -> tuple[list[dict[str, Any]], int]:
    with engine_limits(limits):
        result = client.query(statement.sql, parameters=statement.parameters)
    names = result.column_names
    rows = [dict(zip(names, row, strict=True)) for row in result.result_rows]
    read = int((result.summary or {}).get("read_rows", 0) or 0)
    return rows, read


def run_explore(
    client: Client,
    query: Query,
    org_id: int,
    project_ids: list[int],
    *,
    limits: Limits | None = None,
    limit: int | None = None,
    series: bool = True,
) -> Result:
    """The query's table (``limit`` rows, else the query's) and, with an interval, its time series."""
    limits = limits or Limits()
    most = limit or query.limit
    started = time.monotonic()
    columns = query.columns
    group_count = len(query.group_by)
    aliases = [
        *(f"g{i}" for i in range(group_count)),
        *(f"a{i}" for i in range(len(query.aggregates))),
        "samples",
    ]
    with org_slot(org_id):
        if not project_ids:
            return Result(columns, [])
        raw, read = _execute(client, table_statement(query, org_id, project_ids, limits, most + 1), limits)
        truncated = len(raw) > most
        rows = [{c: plain_value(r[a]) for c, a in zip(columns, aliases, strict=True)} for r in raw[:most]]
        counted = {query.aggregates[i].column: alias for i, alias in value_counts(query).items()}
        value_samples = [{c: int(r[alias]) for c, alias in counted.items()} for r in raw[:most]]
        points: list[SeriesLine] = []
        if series and query.interval:
            raw_points, series_read = _execute(
                client, series_statement(query, org_id, project_ids, limits), limits
            )
            read += series_read
            truncated = truncated or len(raw_points) > MAX_SERIES_POINTS
            points = _series(query, raw_points[:MAX_SERIES_POINTS], aliases, rows)
    elapsed = round((time.monotonic() - started) * 1000, 1)
    return Result(columns, rows, points, read, elapsed, truncated, value_samples)


def _series(
    query: Query, raw: list[dict[str, Any]], aliases: list[str], rows: list[ExploreRow]
) -> list[SeriesLine]:
    """One series per group of the table (the table's order), each ``{"group", "t", "samples", "values",
    "counts"}`` (``counts``: per aggregate over a metric, the values each bucket's figure summarises): only the
    buckets that hold rows, so a gap stays a gap."""
    group_by = query.group_by
    counted = {query.aggregates[i].column: alias for i, alias in value_counts(query).items()}
    wanted = [tuple(row[name] for name in group_by) for row in rows]
    by_group: dict[tuple[Any, ...], SeriesLine] = {}
    for key in wanted:
        by_group[key] = {
            "group": dict(zip(group_by, key, strict=True)),
            "t": [],
            "samples": [],
            "values": {a.column: [] for a in query.aggregates},
            "counts": {column: [] for column in counted},
        }
    for point in raw:
        key = tuple(plain_value(point[f"g{i}"]) for i in range(len(group_by)))
        entry = by_group.get(key)
        if entry is None:
            continue
        entry["t"].append(plain_value(point["bucket"]))
        entry["samples"].append(point["samples"])
        for i, aggregate in enumerate(query.aggregates):
            entry["values"][aggregate.column].append(plain_value(point[aliases[len(group_by) + i]]))
        for column, alias in counted.items():
            entry["counts"][column].append(int(point[alias]))
    return [entry for entry in by_group.values() if entry["t"]]
