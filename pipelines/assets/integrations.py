"""Integrations domain: read linked tickets' states back from the trackers (every 10 minutes)."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

import dagster as dg
from dagster import AssetExecutionContext

from pipelines.assets.common import AssetResult
from pipelines.resources import AlertingResource, ClickHouseResource
from stacklens.settings import Settings


def _has_link_tables(settings: Settings) -> bool:
    from sqlalchemy import inspect

    from stacklens.control.db import get_engine

    return inspect(get_engine(settings)).has_table("external_links")


@dg.asset(group_name="integrations", kinds={"sqlite"})
def tracker_ticket_states(
    context: AssetExecutionContext, warehouse: ClickHouseResource, alerting: AlertingResource
) -> AssetResult:
    """Reads the state (open / closed) of every linked ticket back from its tracker (GitHub, GitLab, Jira,
        Linear) through the outbound client, oldest-checked first, records changes in the activity log and,
        for connections that ask for it, resolves the StackLens issue through the issue workflow when its
        ticket closes. A link whose read fails — a refusal, a tracker that does not answer, an answer of the
        wrong shape —
    is that link's error: noted on the link (the issue page), logged once per new error, and read again
    after a backoff; the other links, of every organization, are read as usual."""
    from stacklens.integrations.sync import sync_states

    settings = alerting.settings()
    if not _has_link_tables(settings):
        return dg.MaterializeResult(metadata={"row_count": dg.MetadataValue.int(0)})
    summary = sync_states(settings, warehouse.get_client())
    for line in summary.errors[:20]:
        context.log.warning(f"ticket state not read: {line}")
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(summary.checked),
            "changed": dg.MetadataValue.int(summary.changed),
            "resolved": dg.MetadataValue.int(summary.resolved),
            "failed": dg.MetadataValue.int(summary.failed),
            "deferred": dg.MetadataValue.int(summary.deferred),
        }
    )
