"""What the pages and the API read of the uptime probes (warehouse table ``monitor_checks``)."""

from __future__ import annotations

from typing import Any

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
