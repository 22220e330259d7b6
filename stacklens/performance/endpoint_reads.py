"""API endpoint reads of the performance view: per source (client calls from browsers, server transactions:
told apart), method and parameterised path, and one endpoint per day with its slowest calls, from the calls
of the filtered window: the minute, hour, day and block-of-days states of ``endpoint_call_periods`` that
tile it (the Dagster asset of the same name, built from ``endpoint_facts``; named queries in
``warehouse_sql/queries/performance``, macro ``endpoint_window``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from typing_extensions import TypedDict

from stacklens.metrics.statistics import percentile_value
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.queries import float_or_none, run_query

ENDPOINT_SORTS = ("calls", "avg_ms", "p95_ms", "error_pct", "s5xx", "s4xx")
NO_ENDPOINT = {"endpoint_source": "", "endpoint_method": "", "endpoint_path": ""}
# Where an endpoint's calls were measured, in words: the browser's fetch/XHR spans of page loads (client) or
# the server's own transactions (server). The same path measured both ways is two rows, never mixed.
SOURCE_LABELS = {"client": "client (browser)", "server": "server"}


class EndpointRow(TypedDict):
    """One endpoint: calls, time (avg, p95), answers by status class and the error share (4xx + 5xx), response
    size, the most calls in one page load (client calls only, else 0), the page loads and the pages calling
    it."""

    source: str
    method: str
    path: str
    calls: int
    avg_ms: float | None
    p95_ms: float | None
    s2xx: int
    s3xx: int
    s4xx: int
    s5xx: int
    error_pct: float
    avg_bytes: float | None
    max_per_load: int
    loads: int
    pages: list[str]


class EndpointDayRow(EndpointRow):
    """One endpoint's figures on one day."""

    day: date


class SlowCallRow(TypedDict):
    """One of an endpoint's slowest calls: the page load's or server transaction's event id, start, duration,
    status code and the call's description."""

    event_id: str
    ts: datetime
    duration_ms: float
    status_code: int
    description: str


def _endpoint_row(raw: dict[str, Any]) -> EndpointRow:
    calls = int(raw["calls"])
    errors = int(raw["s4xx"]) + int(raw["s5xx"])
    avg_ms = float_or_none(raw["avg_ms"])
    return {
        "source": raw["source"],
        "method": raw["method"],
        "path": raw["path"],
        "calls": calls,
        "avg_ms": avg_ms,
        # One call: its p95 is the call itself (the average), never the histogram bucket below it.
        "p95_ms": percentile_value(calls, float_or_none(raw["p95_ms"]), avg_ms),
        "s2xx": int(raw["s2xx"]),
        "s3xx": int(raw["s3xx"]),
        "s4xx": int(raw["s4xx"]),
        "s5xx": int(raw["s5xx"]),
        "error_pct": 100.0 * errors / calls if calls else 0.0,
        "avg_bytes": float_or_none(raw["avg_bytes"]),
        "max_per_load": int(raw["max_per_load"]) if raw["source"] == "client" else 0,
        "loads": int(raw["loads"]),
        "pages": list(raw["pages"]),
    }


def _descending(row: Mapping[str, object], key: str) -> float:
    """The sort key of ``row`` by its ``key`` figure, largest first (a missing figure as 0)."""
    value = row[key]
    return -value if isinstance(value, int | float) else 0


def endpoints(
    client: Client, org_id: int, project_id: int, filters: ViewFilters, sort: str = "calls"
) -> list[EndpointRow]:
    """Per source (client / server), method and parameterised path, sorted by ``sort`` (descending)."""
    if sort not in ENDPOINT_SORTS:
        raise ValueError(f"sort must be one of {', '.join(ENDPOINT_SORTS)}")
    params = {
        **filters.sql(org_id, project_id),
        **filters.periods(minutes=True),
        **NO_ENDPOINT,
    }
    rows = [_endpoint_row(raw) for raw in run_query(client, "performance/endpoints", params)]
    return sorted(rows, key=lambda r: (_descending(r, sort), r["source"], r["method"], r["path"]))


def endpoint_detail(
    client: Client, org_id: int, project_id: int, filters: ViewFilters, source: str, method: str, path: str
) -> tuple[list[EndpointDayRow], list[SlowCallRow]]:
    """``(per-day rows, the 5 slowest calls)`` of one endpoint, from one query: each day carries its own 5
    slowest calls, the window's are the slowest of those (duration descending, then event id)."""
    params = {
        **filters.sql(org_id, project_id),
        **filters.periods(per_day=True, minutes=True),
        "endpoint_source": source,
        "endpoint_method": method,
        "endpoint_path": path,
    }
    days: list[EndpointDayRow] = []
    calls: list[tuple[Any, ...]] = []
    for raw in run_query(client, "performance/endpoint_days", params):
        days.append({**_endpoint_row(raw), "day": raw["day_key"]})
        calls.extend(raw["slowest"])
    slowest: list[SlowCallRow] = [
        {"event_id": event_id, "ts": ts, "duration_ms": -neg_ms, "status_code": status, "description": text}
        for neg_ms, event_id, ts, status, text in sorted(calls)[:5]
    ]
    return days, slowest
