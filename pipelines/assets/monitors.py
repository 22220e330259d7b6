"""Monitors domain: missed and timed-out runs found from their stored deadlines, incidents' issue events,
and the uptime probes (every minute)."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

import time

import dagster as dg
from dagster import AssetExecutionContext

from pipelines.assets.common import AssetResult
from pipelines.resources import AlertingResource, ClickHouseResource
from stacklens.public_url import public_base_url
from stacklens.settings import Settings


def _has_monitor_tables(settings: Settings) -> bool:
    from sqlalchemy import inspect

    from stacklens.control.db import get_engine

    return inspect(get_engine(settings)).has_table("monitors")


@dg.asset(group_name="monitors", kinds={"sqlite"})
def monitor_detection(context: AssetExecutionContext, alerting: AlertingResource) -> AssetResult:
    """Control-store rows of cron monitors' runs that did not happen: a `missed` check-in for every
    scheduled time whose margin passed without a check-in, a `timeout` for every `in_progress` past its max
    runtime. Deadlines are stored, so a restart across one reports it once on the next run; each report moves
    the monitor's health in the same transaction (incidents at the failure threshold, their notices in the
    outbox for alert_deliveries). Then lands the issue event of every new incident. Grain: one row per
    monitor and scheduled time; read by the monitor pages and the monitors API."""
    from stacklens.monitors.detection import detect
    from stacklens.monitors.issues import send_issue_events

    settings = alerting.settings()
    if not _has_monitor_tables(settings):
        return dg.MaterializeResult(metadata={"row_count": dg.MetadataValue.int(0)})
    started = time.perf_counter()
    summary = detect(settings, public_base_url(settings))
    tick_ms = (time.perf_counter() - started) * 1000
    events, errors = send_issue_events(settings)
    for line in [*summary.errors, *errors][:20]:
        context.log.warning(f"monitors: {line}")
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(summary.missed + summary.timed_out),
            "missed": dg.MetadataValue.int(summary.missed),
            "timed_out": dg.MetadataValue.int(summary.timed_out),
            "incidents_opened": dg.MetadataValue.int(summary.told.opened),
            "incidents_resolved": dg.MetadataValue.int(summary.told.resolved),
            "notifications": dg.MetadataValue.int(summary.told.notices),
            "issue_events": dg.MetadataValue.int(events),
            "detection_ms": dg.MetadataValue.float(round(tick_ms, 1)),
        }
    )


@dg.asset(group_name="monitors", kinds={"clickhouse", "sqlite"})
def monitor_checks(warehouse: ClickHouseResource, alerting: AlertingResource) -> AssetResult:
    """Warehouse table of uptime probes: every uptime monitor whose interval has come is probed through the
    outbound guard (private addresses refused unless STACKLENS_OUTBOUND_ALLOW allows them), and each probe
    is a row (status, http_code, ttfb_ms, total_ms, tls_days_left); `failure_threshold` downs in a row open
    the monitor's incident. Grain: one row per monitor and probe; read by the monitor pages and the
    monitors API."""
    from stacklens.monitors.uptime import probe_due
    from stacklens.outbound import AllowList, OutboundClient

    settings = alerting.settings()
    if not _has_monitor_tables(settings):
        return dg.MaterializeResult(metadata={"row_count": dg.MetadataValue.int(0)})
    client = OutboundClient(allow=AllowList.parse(settings.outbound_allow))
    summary = probe_due(settings, warehouse.get_client(), public_base_url(settings), client)
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(summary.probed),
            "down": dg.MetadataValue.int(summary.down),
        }
    )
