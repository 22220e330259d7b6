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
