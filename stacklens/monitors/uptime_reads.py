"""What the pages and the API read of the uptime probes (warehouse table ``monitor_checks``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from stacklens.metrics.windows import utc
from stacklens.warehouse.queries import run_query


def uptime_daily(
    client: Any, org_id: int, project_id: int, monitor_id: int, days: int = 30
) -> list[dict[str, Any]]:
    """Per day with probes: ``day``, ``probes``, ``uptime_pct`` (ok probes / probes × 100) and
    ``median_total_ms``."""
    return run_query(
        client,
        "monitors/uptime_daily",
        {"org_id": org_id, "project_id": project_id, "monitor_id": monitor_id, "days": days},
    )


def recent_checks(
    client: Any, org_id: int, project_id: int, monitor_id: int, limit: int = 100
) -> list[dict[str, Any]]:
    """The newest probes first: ``timestamp``, ``status``, ``http_code``, ``ttfb_ms``, ``total_ms``,
    ``tls_days_left``, ``error``."""
    return run_query(
        client,
        "monitors/recent_checks",
        {"org_id": org_id, "project_id": project_id, "monitor_id": monitor_id, "limit": limit},
    )


@dataclass(frozen=True)
class UptimeBucket:
    """One bucket of a time chart's uptime: its start, its probes and the share that were ok."""

    start: datetime
    probes: int
    uptime_pct: float  # 100 × ok probes / probes: the catalog's uptime_pct


def uptime_buckets(
    client: Any, org_id: int, project_ids: list[int], since: datetime, until: datetime
) -> list[UptimeBucket]:
    """The projects' uptime (all their uptime checks) per hour over [since, until) — per day past 3 days —
    only the buckets with probes."""
    if not project_ids or since >= until:
        return []
    seconds = 3600 if until - since <= timedelta(days=3) else 86400
    rows = run_query(
        client,
        "monitors/uptime_buckets",
        {
            "org_id": org_id,
            "project_ids": project_ids,
            "since": since,
            "until": until,
            "bucket_seconds": seconds,
        },
    )
    return [
        UptimeBucket(utc(r["bucket"]), int(r["probes"]), 100.0 * int(r["ok"]) / int(r["probes"]))
        for r in rows
        if int(r["probes"])
    ]
