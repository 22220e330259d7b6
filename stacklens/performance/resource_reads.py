"""Resource reads of the performance view: per resource type, and each resource with its render-blocking
status and impact, from the requests of the filtered window: the minute, hour, day and block-of-days states
of ``resource_request_periods`` that tile it (the Dagster asset of the same name, built from
``resource_facts``; named queries in ``warehouse_sql/queries/performance``, macro ``resource_window``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from typing_extensions import TypedDict

from stacklens.view_filters import ViewFilters
from stacklens.warehouse.queries import float_or_none, run_query
from stacklens.warehouse.side_by_side import side_by_side

# Impact of a render-blocking resource: the pipelines' rule (docs/pipelines.md) plus its share of the page's
# FCP.
HIGH = {"avg_ms": 500.0, "avg_bytes": 100 * 1024, "fcp_share": 0.5}
MEDIUM = {"avg_ms": 200.0, "avg_bytes": 30 * 1024, "fcp_share": 0.25}


class ResourceTypeRow(TypedDict):
    """One resource type (JavaScript, CSS, Images, …): requests, page loads, bytes (total, avg encoded /
    decoded / transfer), load time, cache hit rate over the requests that report a transfer size (their count:
    ``cache_samples``), compression ratio. Sizes no request of the type reported (API calls the browser gave
    no size for) are ``None`` — written "–", as every missing figure — never 0 B beside a missing average."""

    resource_type: str
    requests: int
    loads: int
    total_bytes: int | None
    avg_bytes: float | None
    avg_decoded_bytes: float | None
    avg_transfer_bytes: float | None
    avg_ms: float | None
    p95_ms: float | None
    cache_hit_pct: float | None
    cache_samples: int
    compression_ratio: float | None


class ResourceRow(TypedDict):
    """One resource (its URL without the query string): requests, bytes, load time, render-blocking status
    (``blocking`` / ``non-blocking`` / ``unknown``, with the page loads of each), cache hit rate, share of the
    page's FCP, the pages that load it, and for a blocking one its impact (High / Medium / Low, '' otherwise)
    with the reason."""

    resource: str
    resource_type: str
    host: str
    third_party: bool
    requests: int
    loads: int
    total_bytes: int
    avg_bytes: float
    max_bytes: int
    avg_decoded_bytes: float
    avg_transfer_bytes: float | None
    avg_ms: float
    p95_ms: float | None
    render_blocking: str
    blocking_loads: int
    non_blocking_loads: int
    unknown_loads: int
    cache_hit_pct: float | None
    fcp_share: float | None
    pages: list[str]
    impact: str
    impact_reason: str


class ResourceListRow(ResourceRow):
    """A resource with when it was served: ``release_first`` (release → the first period a page load of that
    release requested it) and ``last_seen`` (its last period)."""

    release_first: dict[str, datetime]
    last_seen: datetime


def _type_row(raw: dict[str, Any]) -> ResourceTypeRow:
    transfer_n = int(raw["transfer_n"])
    # No encoded, decoded or transfer size from any request of the type: its sizes are missing, not 0 B.
    sized = (
        transfer_n > 0 or int(raw["total_bytes"]) > 0 or (float_or_none(raw["avg_decoded_bytes"]) or 0) > 0
    )
    return {
        "resource_type": raw["resource_type"],
        "requests": int(raw["requests"]),
        "loads": int(raw["loads"]),
        "total_bytes": int(raw["total_bytes"]) if sized else None,
        "avg_bytes": float_or_none(raw["avg_bytes"]) if sized else None,
        "avg_decoded_bytes": float_or_none(raw["avg_decoded_bytes"]) if sized else None,
        "avg_transfer_bytes": float_or_none(raw["avg_transfer_bytes"]),
        "avg_ms": float_or_none(raw["avg_ms"]),
        "p95_ms": float_or_none(raw["p95_ms"]),
        "cache_hit_pct": 100.0 * int(raw["cache_hits"]) / transfer_n if transfer_n else None,
        "cache_samples": transfer_n,
        "compression_ratio": float_or_none(raw["compression_ratio"]),
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


def _resource_row(raw: dict[str, Any]) -> ResourceRow:
    """A resource with its render-blocking status: ``blocking`` when any load reported it blocking,
    ``non-blocking`` when loads reported it and none blocking, ``unknown`` when no load reported a status
    (Firefox and Safari do not) — never counted as non-blocking."""
    blocking, non_blocking, unknown = int(raw["blocking"]), int(raw["non_blocking"]), int(raw["unknown"])
    status = "blocking" if blocking else ("non-blocking" if non_blocking else "unknown")
    row: ResourceRow = {
        "resource": raw["resource"],
        "resource_type": raw["resource_type"],
        "host": raw["host"],
        "third_party": bool(raw["third_party"]),
        "requests": int(raw["requests"]),
        "loads": int(raw["loads"]),
        "total_bytes": int(raw["total_bytes"]),
        "avg_bytes": float_or_none(raw["avg_bytes"]) or 0.0,
        "max_bytes": int(raw["max_bytes"]),
        "avg_decoded_bytes": float_or_none(raw["avg_decoded_bytes"]) or 0.0,
        "avg_transfer_bytes": float_or_none(raw["avg_transfer_bytes"]),
        "avg_ms": float_or_none(raw["avg_ms"]) or 0.0,
        "p95_ms": None if raw["p95_ms"] is None else (float_or_none(raw["p95_ms"]) or 0.0),
        "render_blocking": status,
        "blocking_loads": blocking,
        "non_blocking_loads": non_blocking,
        "unknown_loads": unknown,
        "cache_hit_pct": 100.0 * int(raw["cache_hits"]) / int(raw["transfer_n"])
        if int(raw["transfer_n"])
        else None,
        "fcp_share": float_or_none(raw["fcp_share"]),
        "pages": sorted(raw["pages"]),
        "impact": "",
        "impact_reason": "",
    }
    if status == "blocking":
        row["impact"], row["impact_reason"] = impact(row["avg_ms"], row["avg_bytes"], row["fcp_share"])
    return row


def resource_tables(
    client: Client, org_id: int, project_id: int, filters: ViewFilters
) -> tuple[list[ResourceTypeRow], list[ResourceRow]]:
    """``(per type rows, each resource)`` of the resources view, two reads of the window's states at once (two
    clients: resource_types.sql, resource_table.sql). Per type: requests, page loads, bytes (total, avg
    encoded / decoded / transfer), load time, cache hit rate (over the requests that report a transfer
    size), compression ratio. Each resource (heaviest first, at most 500) with its render-blocking status
    and impact."""
    params = _resource_params(org_id, project_id, filters)
    types, table = side_by_side(
        client,
        lambda c: run_query(c, "performance/resource_types", params),
        lambda c: run_query(c, "performance/resource_table", params),
    )
    return [_type_row(raw) for raw in types], [_resource_row(raw) for raw in table]


def _resource_params(org_id: int, project_id: int, filters: ViewFilters) -> dict[str, object]:
    return {**filters.sql(org_id, project_id), **filters.periods(minutes=True)}


def resource_types(
    client: Client, org_id: int, project_id: int, filters: ViewFilters
) -> list[ResourceTypeRow]:
    """The per type rows of :func:`resource_tables`."""
    return resource_tables(client, org_id, project_id, filters)[0]


def resources(client: Client, org_id: int, project_id: int, filters: ViewFilters) -> list[ResourceRow]:
    """The resources of :func:`resource_tables` (heaviest first, at most 500)."""
    params = _resource_params(org_id, project_id, filters)
    return [_resource_row(raw) for raw in run_query(client, "performance/resource_table", params)]


def resource_list(
    client: Client, org_id: int, project_id: int, filters: ViewFilters
) -> list[ResourceListRow]:
    """The resources as :func:`resources` gives them, with ``p95_ms`` ``None`` (resource_list.sql reads no
    load-time histograms: the recommendations do not use them), and when each was served: ``release_first``
    (release → the first period a load of that release requested it) and ``last_seen`` (its last period). Read
    with single days rather than blocks of days, so those times are days, hours or minutes."""
    params = {**filters.sql(org_id, project_id), **filters.periods(per_day=True, minutes=True)}
    out: list[ResourceListRow] = []
    for raw in run_query(client, "performance/resource_list", params):
        keys, starts = raw["release_first"]
        release_first = {
            str(k): datetime.fromtimestamp(int(v), UTC) for k, v in zip(keys, starts, strict=True)
        }
        out.append({**_resource_row(raw), "release_first": release_first, "last_seen": raw["last_seen"]})
    return out
