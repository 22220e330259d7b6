"""Alerts domain: evaluate every alert rule, then deliver what the outbox holds (every minute)."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

import dagster as dg
from dagster import AssetExecutionContext

from pipelines.assets.common import RAW_EVENTS, RAW_TRANSACTIONS
from pipelines.assets.sessions import ASSET as SESSION_STATES
from pipelines.resources import AlertingResource, ClickHouseResource
from stacklens.public_url import public_base_url
from stacklens.settings import Settings


def _has_alert_tables(settings: Settings) -> bool:
    from sqlalchemy import inspect

    from stacklens.control.db import get_engine

    return inspect(get_engine(settings)).has_table("alert_rules")


@dg.asset(
    group_name="alerts",
    # After the states it reads: the page-load and API-call states the performance views read too, the issues,
    # and the raw events (issue rules) and transactions (failed share, latest release); the session states (the
    # crash-free and release-regression rules).
    deps=[
        "pageload_periods",
        "endpoint_call_periods",
        "issues",
        SESSION_STATES,
        RAW_EVENTS,
        RAW_TRANSACTIONS,
    ],
    kinds={"clickhouse", "sqlite"},
)
def alert_evaluations(
    context: AssetExecutionContext, warehouse: ClickHouseResource, alerting: AlertingResource
) -> dg.MaterializeResult:
    """Evaluates every enabled alert rule (performance budget, new issue, regression, event frequency, error
    rate) over its window, moves each rule and scope through ok / warning / firing / resolved /
    insufficient_data, records every evaluation (window, value, samples, threshold, decision) in the control
    store, and puts a notification in the outbox on the transitions that notify (firing, resolved, re-notify).
    """
    from stacklens.alerts.evaluation import evaluate

    settings = alerting.settings()
    if not _has_alert_tables(settings):
        return dg.MaterializeResult(metadata={"row_count": dg.MetadataValue.int(0)})
    summary = evaluate(settings, warehouse.get_client(), public_base_url(settings))
    for line in summary.firing[:50]:
        context.log.warning(f"firing: {line}")
    # A rule that fails is that rule's error (on its page, retried with backoff), not this run's.
    for line in summary.errors[:20]:
        context.log.warning(f"rule not evaluated: {line}")
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(summary.evaluations),
            "rules": dg.MetadataValue.int(summary.rules),
            "transitions": dg.MetadataValue.int(summary.transitions),
            "notifications": dg.MetadataValue.int(summary.notifications),
            "failed_rules": dg.MetadataValue.int(summary.failed),
            "rules_waiting_to_retry": dg.MetadataValue.int(summary.deferred),
        }
    )


@dg.asset(group_name="alerts", deps=["alert_evaluations"], kinds={"sqlite"})
def alert_deliveries(context: AssetExecutionContext, alerting: AlertingResource) -> dg.MaterializeResult:
    """Drains the notification outbox: sends every due notification once through its channel (e-mail, Slack,
    signed webhook), logs each attempt, schedules retries with backoff (timeouts, 5xx, 429 with Retry-After,
    for 24 h), pauses channels after repeated permanent failures and folds what exceeds a channel's rate cap
    into a digest. Sending happens outside any transaction; a crash mid-send is resent under the same id.
    """
    from stacklens.alerts.outbox import drain

    settings = alerting.settings()
    if not _has_alert_tables(settings):
        return dg.MaterializeResult(metadata={"row_count": dg.MetadataValue.int(0)})
    summary = drain(settings)
    if summary.failed:
        context.log.warning(
            f"{summary.failed} notification(s) failed for good; see the channels' delivery log"
        )
    for line in summary.errors[:20]:
        context.log.warning(f"notification not recorded (sent again after its lease): {line}")
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(summary.delivered + summary.retried + summary.failed),
            "delivered": dg.MetadataValue.int(summary.delivered),
            "retried": dg.MetadataValue.int(summary.retried),
            "failed": dg.MetadataValue.int(summary.failed),
            "digested": dg.MetadataValue.int(summary.digested),
        }
    )
