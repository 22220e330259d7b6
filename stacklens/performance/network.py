"""Resource and API-endpoint reads of the performance view: per resource type, each resource with its
render-blocking impact, and API endpoints (client calls from browsers and server transactions told apart),
all from the requests of the filtered window: the minute, hour, day and block-of-days states of
``resource_request_periods`` and ``endpoint_call_periods`` that tile it (Dagster assets of the same names, built from
``resource_facts`` / ``endpoint_facts``; named queries in ``warehouse_sql/queries/performance``, macros
``resource_window`` and ``endpoint_window``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.performance.filters import PerfFilters
from stacklens.performance.reads import run
from stacklens.warehouse.side_by_side import side_by_side

# Impact of a render-blocking resource: the pipelines' rule (docs/pipelines.md) plus its share of the page's FCP.
HIGH = {"avg_ms": 500.0, "avg_bytes": 100 * 1024, "fcp_share": 0.5}
MEDIUM = {"avg_ms": 200.0, "avg_bytes": 30 * 1024, "fcp_share": 0.25}
ENDPOINT_SORTS = ("calls", "avg_ms", "p95_ms", "error_pct", "s5xx", "s4xx")
NO_ENDPOINT = {"endpoint_source": "", "endpoint_method": "", "endpoint_path": ""}
# Where an endpoint's calls were measured, in words: the browser's fetch/XHR spans of page loads (client) or the
# server's own transactions (server). The same path measured both ways is two rows, never mixed.
SOURCE_LABELS = {"client": "client (browser)", "server": "server"}


def _f(value: Any) -> float | None:
    if value is None:
        return None
    number = float(value)
    return None if number != number else number


def _type_row(raw: dict[str, Any]) -> dict[str, Any]:
    transfer_n = int(raw["transfer_n"])
    return {
        "resource_type": raw["resource_type"],
        "requests": int(raw["requests"]),
        "loads": int(raw["loads"]),
        "total_bytes": int(raw["total_bytes"]),
        "avg_bytes": _f(raw["avg_bytes"]),
        "avg_decoded_bytes": _f(raw["avg_decoded_bytes"]),
        "avg_transfer_bytes": _f(raw["avg_transfer_bytes"]),
        "avg_ms": _f(raw["avg_ms"]),
        "p95_ms": _f(raw["p95_ms"]),
        "cache_hit_pct": 100.0 * int(raw["cache_hits"]) / transfer_n if transfer_n else None,
        "cache_samples": transfer_n,
        "compression_ratio": _f(raw["compression_ratio"]),
    }


def impact(avg_ms: float, avg_bytes: float, fcp_share: float | None) -> tuple[str, str]:
    """``(High | Medium | Low, the reason)`` of a render-blocking resource."""
    share = fcp_share or 0.0
    for level, limits in (("High", HIGH), ("Medium", MEDIUM)):
        reasons = []
        if avg_ms >= limits["avg_ms"]:
            reasons.append(f"{avg_ms:.0f} ms ≥ {limits['avg_ms']:.0f} ms")
        if avg_bytes >= limits["avg_bytes"]:
            reasons.append(f"{avg_bytes / 1024:.0f} KiB ≥ {limits['avg_bytes'] / 1024:.0f} KiB")
        if share >= limits["fcp_share"]:
            reasons.append(f"{100 * share:.0f} % of FCP ≥ {100 * limits['fcp_share']:.0f} %")
        if reasons:
            return level, "; ".join(reasons)
    return "Low", f"{avg_ms:.0f} ms, {avg_bytes / 1024:.0f} KiB, {100 * share:.0f} % of FCP"


def _resource_row(raw: dict[str, Any]) -> dict[str, Any]:
    """A resource with its render-blocking status: ``blocking`` when any load reported it blocking,
    ``non-blocking`` when loads reported it and none blocking, ``unknown`` when no load reported a status (Firefox
    and Safari do not) — never counted as non-blocking."""
    blocking, non_blocking, unknown = int(raw["blocking"]), int(raw["non_blocking"]), int(raw["unknown"])
    status = "blocking" if blocking else ("non-blocking" if non_blocking else "unknown")
    row = {
        "resource": raw["resource"],
        "resource_type": raw["resource_type"],
        "host": raw["host"],
        "third_party": bool(raw["third_party"]),
        "requests": int(raw["requests"]),
        "loads": int(raw["loads"]),
        "total_bytes": int(raw["total_bytes"]),
        "avg_bytes": _f(raw["avg_bytes"]) or 0.0,
        "max_bytes": int(raw["max_bytes"]),
        "avg_decoded_bytes": _f(raw["avg_decoded_bytes"]) or 0.0,
        "avg_transfer_bytes": _f(raw["avg_transfer_bytes"]),
        "avg_ms": _f(raw["avg_ms"]) or 0.0,
        "p95_ms": None if raw["p95_ms"] is None else (_f(raw["p95_ms"]) or 0.0),
        "render_blocking": status,
        "blocking_loads": blocking,
        "non_blocking_loads": non_blocking,
        "unknown_loads": unknown,
        "cache_hit_pct": 100.0 * int(raw["cache_hits"]) / int(raw["transfer_n"])
        if int(raw["transfer_n"])
        else None,
        "fcp_share": _f(raw["fcp_share"]),
        "pages": sorted(raw["pages"]),
        "impact": "",
        "impact_reason": "",
    }
    if status == "blocking":
        row["impact"], row["impact_reason"] = impact(row["avg_ms"], row["avg_bytes"], row["fcp_share"])
    return row


def resource_tables(
    client: Client, org_id: int, project_id: int, filters: PerfFilters
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(per type rows, each resource)`` of the resources view, two reads of the window's states at once (two
    clients: resource_types.sql, resource_table.sql). Per type: requests, page loads, bytes (total, avg encoded /
    decoded / transfer), load time, cache hit rate (over the requests that report a transfer size), compression
    ratio. Each resource (heaviest first, at most 500) with its render-blocking status and impact."""
    params = _resource_params(org_id, project_id, filters)
    types, table = side_by_side(
        client, lambda c: run(c, "resource_types", params), lambda c: run(c, "resource_table", params)
    )
    return [_type_row(raw) for raw in types], [_resource_row(raw) for raw in table]


def _resource_params(org_id: int, project_id: int, filters: PerfFilters) -> dict[str, Any]:
    return {**filters.sql(org_id, project_id), **filters.periods(minutes=True)}


def resource_types(
    client: Client, org_id: int, project_id: int, filters: PerfFilters
) -> list[dict[str, Any]]:
    """The per type rows of :func:`resource_tables`."""
    return resource_tables(client, org_id, project_id, filters)[0]


def resources(client: Client, org_id: int, project_id: int, filters: PerfFilters) -> list[dict[str, Any]]:
    """The resources of :func:`resource_tables` (heaviest first, at most 500)."""
    return [
        _resource_row(raw)
        for raw in run(client, "resource_table", _resource_params(org_id, project_id, filters))
    ]


def resource_list(client: Client, org_id: int, project_id: int, filters: PerfFilters) -> list[dict[str, Any]]:
    """The resources as :func:`resources` gives them, with ``p95_ms`` ``None`` (resource_list.sql reads no
    load-time histograms: the recommendations do not use them), and when each was served: ``release_first``
    (release → the first period a load of that release requested it) and ``last_seen`` (its last period). Read
    with single days rather than blocks of days, so those times are days, hours or minutes."""
    params = {**filters.sql(org_id, project_id), **filters.periods(per_day=True, minutes=True)}
    out = []
    for raw in run(client, "resource_list", params):
        row = _resource_row(raw)
        keys, starts = raw["release_first"]
        row["release_first"] = {
            str(k): datetime.fromtimestamp(int(v), UTC) for k, v in zip(keys, starts, strict=True)
        }
        row["last_seen"] = raw["last_seen"]
        out.append(row)
    return out


def _endpoint_row(raw: dict[str, Any]) -> dict[str, Any]:
    calls = int(raw["calls"])
    errors = int(raw["s4xx"]) + int(raw["s5xx"])
    return {
        "source": raw["source"],
        "method": raw["method"],
        "path": raw["path"],
        "calls": calls,
        "avg_ms": _f(raw["avg_ms"]),
        "p95_ms": _f(raw["p95_ms"]),
        "s2xx": int(raw["s2xx"]),
        "s3xx": int(raw["s3xx"]),
        "s4xx": int(raw["s4xx"]),
        "s5xx": int(raw["s5xx"]),
        "error_pct": 100.0 * errors / calls if calls else 0.0,
        "avg_bytes": _f(raw["avg_bytes"]),
        "max_per_load": int(raw["max_per_load"]) if raw["source"] == "client" else 0,
        "loads": int(raw["loads"]),
        "pages": list(raw["pages"]),
    }


def endpoints(
    client: Client, org_id: int, project_id: int, filters: PerfFilters, sort: str = "calls"
) -> list[dict[str, Any]]:
    """Per source (client / server), method and parameterised path, sorted by ``sort`` (descending)."""
    if sort not in ENDPOINT_SORTS:
        raise ValueError(f"sort must be one of {', '.join(ENDPOINT_SORTS)}")
    params = {
        **filters.sql(org_id, project_id),
        **filters.periods(minutes=True),
        **NO_ENDPOINT,
    }
    rows = [_endpoint_row(raw) for raw in run(client, "endpoints", params)]
    return sorted(rows, key=lambda r: (-(r[sort] or 0), r["source"], r["method"], r["path"]))


def endpoint_detail(
    client: Client, org_id: int, project_id: int, filters: PerfFilters, source: str, method: str, path: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(per-day rows, the 5 slowest calls)`` of one endpoint, from one query: each day carries its own 5 slowest
    calls, the window's are the slowest of those (duration descending, then event id)."""
    params = {
        **filters.sql(org_id, project_id),
        **filters.periods(per_day=True, minutes=True),
        "endpoint_source": source,
        "endpoint_method": method,
        "endpoint_path": path,
    }
    days: list[dict[str, Any]] = []
    calls: list[tuple[Any, ...]] = []
    for raw in run(client, "endpoint_days", params):
        row = _endpoint_row(raw)
        row["day"] = raw["day_key"]
        days.append(row)
        calls.extend(raw["slowest"])
    slowest = [
        {"event_id": event_id, "ts": ts, "duration_ms": -neg_ms, "status_code": status, "description": text}
        for neg_ms, event_id, ts, status, text in sorted(calls)[:5]
    ]
    return days, slowest
