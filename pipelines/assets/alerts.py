"""Alerts domain: assign new issues by the ownership rules, evaluate every alert rule, put due scheduled
reports in the outbox, then deliver what the outbox holds (every minute)."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

import dagster as dg
from dagster import AssetExecutionContext

from pipelines.assets.common import RAW_EVENTS, RAW_TRANSACTIONS, AssetResult
from pipelines.assets.sessions import ASSET as SESSION_STATES
from pipelines.resources import AlertingResource, ClickHouseResource
from stacklens.public_url import public_base_url
from stacklens.settings import Settings


def _has_alert_tables(settings: Settings) -> bool:
    from sqlalchemy import inspect

    from stacklens.control.db import get_engine

    return inspect(get_engine(settings)).has_table("alert_rules")


@dg.asset(group_name="alerts", deps=["issues", RAW_EVENTS], kinds={"clickhouse", "sqlite"})
def issue_owners(
    context: AssetExecutionContext, warehouse: ClickHouseResource, alerting: AlertingResource
) -> AssetResult:
    """Assigns the issues first seen since the last run, in every project with ownership rules, to the
    owner of the last rule that matches the issue's first event (path, module, url, tag or release), as
    `system`, with the rule recorded on the issue, and tells each new owner; then tells the assignee and
    watchers of every issue that regressed since the last run. Ingest never reads the rules: this step is
    where they apply. Each organization has a share of the run (the rest waits for the next run), so one
    organization's rules and events cannot hold the others' alerts."""
    from sqlalchemy import inspect

    from stacklens.control.db import get_engine, session_scope
    from stacklens.issues.auto_assign import assign_new_issues

    settings = alerting.settings()
    if not inspect(get_engine(settings)).has_table("ownership_rules"):
        return dg.MaterializeResult(metadata={"row_count": dg.MetadataValue.int(0)})
    from stacklens.issues.notifications import notifier_for, notify_regressions

    client = warehouse.get_client()
    notifier = notifier_for(settings, client)
    with session_scope(settings) as session:
        summary = assign_new_issues(session, client, notifier=notifier)
    with session_scope(settings) as session:
        regressed = notify_regressions(session, client, notifier)
    for line in summary.errors[:20]:
        context.log.warning(f"ownership rule not applied: {line}")
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(summary.assigned),
            "projects": dg.MetadataValue.int(summary.projects),
            "issues_looked_at": dg.MetadataValue.int(summary.looked_at),
            # Left for the next run: their organization's share of this run (or the run's) was spent.
            "projects_deferred": dg.MetadataValue.int(summary.deferred),
            "regressions_told": dg.MetadataValue.int(regressed),
        }
    )


@dg.asset(group_name="alerts", deps=["issue_owners"], kinds={"clickhouse", "sqlite"})
def person_digests(warehouse: ClickHouseResource, alerting: AlertingResource) -> AssetResult:
    """Puts each person's daily digest of issue news (assignments, mentions, comments they chose to hear of
    once a day) in the outbox once the day's digest hour (08:00 UTC) has passed; the deliveries of the same
    run send them; on Mondays after 08:00 UTC, the last week's summary of each project to the members who
    switched it on. Each piece of news is in one digest only, each summary sent once."""
    from sqlalchemy import inspect

    from stacklens.control.db import get_engine, session_scope
    from stacklens.issues.notifications import notifier_for, send_digests
    from stacklens.issues.weekly_summary import send_weekly_summaries

    settings = alerting.settings()
    if not inspect(get_engine(settings)).has_table("notification_digest_items"):
        return dg.MaterializeResult(metadata={"row_count": dg.MetadataValue.int(0)})
    with session_scope(settings) as session:
        digests = send_digests(session)
    client = warehouse.get_client()
    with session_scope(settings) as session:
        weekly = send_weekly_summaries(session, client, notifier_for(settings, client))
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(digests + weekly),
            "weekly_summaries": dg.MetadataValue.int(weekly),
        }
    )


@dg.asset(
    group_name="alerts",
    # After the states the anomaly rules' hourly values come from (the metrics layer's): page loads, API
    # calls,
    # sessions, the issues and raw events.
    deps=["pageload_periods", "endpoint_call_periods", "issues", SESSION_STATES, RAW_EVENTS],
    kinds={"clickhouse", "sqlite"},
)
def anomaly_bands(
    context: AssetExecutionContext, warehouse: ClickHouseResource, alerting: AlertingResource
) -> AssetResult:
    """The expectation and band of every enabled anomaly rule's last 24 hourly buckets (table
    `anomaly_bands`, migration 0250): per rule and hour the value and its samples (from the metrics layer,
    the numbers the pages show), the expected value, the band's edges, the score, the seasonality used and
    whether the rule was firing — judged as alert_evaluations judges them (docs/alerts.md, "Anomaly rules").
    Grain: one row per rule and hour; a later run replaces an hour's row."""
    from datetime import UTC, datetime

    from stacklens.anomalies.band_rows import write_bands

    settings = alerting.settings()
    if not _has_alert_tables(settings):
        return dg.MaterializeResult(metadata={"row_count": dg.MetadataValue.int(0)})
    summary = write_bands(settings, warehouse.get_client(), datetime.now(UTC))
    for line in summary.errors[:20]:
        context.log.warning(f"anomaly bands not written: {line}")
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(summary.rows),
            "rules": dg.MetadataValue.int(summary.rules),
            "firing": dg.MetadataValue.int(summary.firing),
            "failed_rules": dg.MetadataValue.int(len(summary.errors)),
        }
    )


@dg.asset(
    group_name="alerts",
    # After the states it reads: the page-load and API-call states the performance views read too, the issues,
    # and the raw events (issue rules) and transactions (failed share, latest release); the session states
    # (the crash-free and release-regression rules).
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
) -> AssetResult:
    """Evaluates every enabled alert rule (performance budget, new issue, regression, event frequency, error
    rate, anomaly) over its window, moves each rule and scope through ok / warning / firing / resolved /
    insufficient_data, records every evaluation (window, value, samples, threshold, decision) in the control
    store, and puts a notification in the outbox on the transitions that notify (firing, resolved, re-notify).
    """
    from stacklens.alerts.evaluation import evaluate

    settings = alerting.settings()
    if not _has_alert_tables(settings):
        return dg.MaterializeResult(metadata={"row_count": dg.MetadataValue.int(0)})
    summary = evaluate(settings, warehouse.get_client(), public_base_url(settings))
    # A rule that began firing is a warning once; one still firing is said once a tick, at info level, so
    # an unchanged alert does not repeat a warning in the server log every minute.
    for line in summary.newly_firing[:50]:
        context.log.warning(f"firing: {line}")
    still = len(summary.firing) - len(summary.newly_firing)
    if still > 0:
        context.log.info(f"{still} rule(s) still firing (warned when each began)")
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


@dg.asset(
    group_name="alerts",
    deps=["pageload_periods", SESSION_STATES, "issues", RAW_EVENTS],
    kinds={"clickhouse", "sqlite"},
)
def scheduled_reports(
    context: AssetExecutionContext, warehouse: ClickHouseResource, alerting: AlertingResource
) -> AssetResult:
    """Puts each due report subscription (a dashboard or saved query, daily or weekly at a local time) in the
    notification outbox: its widgets answered as Explore answers them, worded as a summary (key numbers and
    their change) or CSV, one outbox row per report; then sets its next run. A report that cannot be built
    records its error on its subscription. alert_deliveries sends them. Reports render outside any
    control-store write, at most 10 of an organization a run (the rest stay due for the next run)."""
    from stacklens.explore.reports import send_due

    settings = alerting.settings()
    if not _has_alert_tables(settings):
        return dg.MaterializeResult(metadata={"row_count": dg.MetadataValue.int(0)})
    summary = send_due(settings, warehouse.get_client(), public_base_url(settings))
    for line in summary.errors[:20]:
        context.log.warning(f"report not built: {line}")
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(summary.sent),
            "failed": dg.MetadataValue.int(summary.failed),
            # Left due for the next run: their organization's share of this run was spent.
            "deferred": dg.MetadataValue.int(summary.deferred),
        }
    )


@dg.asset(
    group_name="alerts",
    # After the monitors' detection too: a missed run's notice leaves in the run that found it.
    deps=["alert_evaluations", "person_digests", "scheduled_reports", "monitor_detection"],
    kinds={"sqlite"},
)
def alert_deliveries(context: AssetExecutionContext, alerting: AlertingResource) -> AssetResult:
    """Drains the notification outbox: sends every due notification once through its channel (e-mail, Slack,
    signed webhook), logs each attempt, schedules retries with backoff (timeouts, 5xx, 429 with Retry-After,
    for 24 h), pauses channels after repeated permanent failures and folds what exceeds a channel's rate cap
    into a digest. Sending happens outside any transaction; a crash mid-send is resent under the same id.
    Each organization's notifications are sent by a task of their own, within a budget per run, so one
    organization's slow receiver does not delay the others'.
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
            # Left due for the next run: their organization's share of this run was spent.
            "deferred": dg.MetadataValue.int(summary.deferred),
        }
    )
