"""Running an Explore query: the table and the time series, under per-query limits and a per-organization
concurrency cap, with plain messages when a limit is hit.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError

from stacklens.errors import InvalidInput, StackLensError
from stacklens.explore import pageload_states
from stacklens.explore.answer import AnswerMeta, ExploreAnswer, ExploreRow, SeriesLine
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
# Analyst questions running at once on this server, whatever their organizations: half the cores (the engine
# runs each on one thread, sql.MAX_THREADS), so ingest and the issue pages always keep the other half.
# Measured with two heaviest questions in a loop, one-event ingest kept 79 % of its idle rate without the lane
# (both cores taken); bench/query_budgets.py. A question waits for the lane up to LANE_WAIT_S, then is
# refused.
ANALYST_LANE = max(1, (os.cpu_count() or 2) // 2)
LANE_WAIT_S = 20.0
_lane = threading.BoundedSemaphore(ANALYST_LANE)


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
    # Per row, the values each aggregate over a metric summarises (column → count): a p75 of LCP counts the
    # page loads that report LCP. The page shows them beside each figure; the JSON rows keep ``samples`` only.
    value_samples: list[dict[str, int]] = field(default_factory=list)
    # With "compare": {"previous_release": true}, the release compared with ('' when there is none before it).
    compared_with: str = ""
    release_compared: bool = False

    def as_json(self) -> ExploreAnswer:
        meta: AnswerMeta = {
            "rows_read": self.rows_read,
            "elapsed_ms": self.elapsed_ms,
            "truncated": self.truncated,
        }
        if self.release_compared:
            meta["compared_release"] = self.compared_with or None
        return {"columns": self.columns, "rows": self.rows, "series": self.series, "meta": meta}


def take_org_slot(org_id: int, most: int = MAX_CONCURRENT_PER_ORG) -> Callable[[], None]:
    """Take one of the organization's query slots and return what gives it back (safe to call more than once);
    :class:`TooManyQueries` when all are taken. For a slot held past one call: a streamed download's."""
    with _guard:
        slot = _running.setdefault(org_id, threading.BoundedSemaphore(most))
    if not slot.acquire(blocking=False):
        raise TooManyQueries(
            f"this organization already runs {most} Explore queries; wait for one to finish and try again"
        )
    given_back = threading.Event()
    once = threading.Lock()

    def release() -> None:
        with once:
            if not given_back.is_set():
                given_back.set()
                slot.release()

    return release


@contextmanager
def analyst_lane(wait_s: float = LANE_WAIT_S) -> Iterator[None]:
    """Hold one of the server's analyst lanes while a question runs; questions beyond :data:`ANALYST_LANE`
    wait their turn (up to ``wait_s``), then :class:`TooManyQueries`."""
    if not _lane.acquire(timeout=wait_s):
        raise TooManyQueries(
            f"the server already runs its {ANALYST_LANE} analyst queries at once; try again in a moment"
        )
    try:
        yield
    finally:
        _lane.release()


@contextmanager
def org_slot(org_id: int, most: int = MAX_CONCURRENT_PER_ORG) -> Iterator[None]:
    """Hold one of the organization's query slots; :class:`TooManyQueries` when all are taken."""
    release = take_org_slot(org_id, most)
    try:
        yield
    finally:
        release()


def plain_value(value: Any) -> Any:
    """A JSON value of an engine value: NaN and infinities as null, times as ISO 8601 in UTC with a Z, arrays
    and maps element by element, anything else (UUID, Decimal, IP address) as its text."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):
        # The service writes warehouse times in UTC and DateTime columns carry no zone: a naive time is UTC.
        return value.isoformat() + "Z" if value.tzinfo is None else value.isoformat().replace("+00:00", "Z")
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
        if "TOO_MANY_ROWS" in text or "Code: 158" in text:
            raise QueryTooCostly(
                f"the query would read more than its {limits.max_rows_to_read:,} rows limit; narrow the window"
                " or add filters"
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
        with analyst_lane():
            # Where the page-load states end, for a question they can answer (one read of a small table).
            states_until = (
                pageload_states.read_states_until(client) if pageload_states.reads_states(query) else None
            )
            table = table_statement(query, org_id, project_ids, limits, most + 1, states_until=states_until)
            raw, read = _execute(client, table, limits)
            truncated = len(raw) > most
            rows = [{c: plain_value(r[a]) for c, a in zip(columns, aliases, strict=True)} for r in raw[:most]]
            counted = {query.aggregates[i].column: alias for i, alias in value_counts(query).items()}
            value_samples = [{c: int(r[alias]) for c, alias in counted.items()} for r in raw[:most]]
            points: list[SeriesLine] = []
            if series and query.interval:
                raw_points, series_read = _execute(
                    client, series_statement(query, org_id, project_ids, limits, states_until), limits
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
    "counts"}`` (``counts``: per aggregate over a metric, the values each bucket's figure summarises): only
    the buckets that hold rows, so a gap stays a gap."""
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
