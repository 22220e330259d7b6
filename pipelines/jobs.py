"""Jobs: what each schedule materializes. A job holds assets of one partitioning only."""

from __future__ import annotations

import dagster as dg

# The issues asset adds each new (issue, user) pair once with its count: two runs at once could both add the
# same users. The embedded runner runs one tick at a time; under the Dagster daemon, a queued run coordinator
# limit of 1 on this tag does the same (docs/pipelines.md).
SERIAL_TAG = "stacklens/serial"

issues_job = dg.define_asset_job(
    "issues_job",
    selection=["event_counters", "issues", "related_issues"],
    description="Insert-time event counters checked against the events, issues and related issues, incremental.",
    tags={SERIAL_TAG: "issues"},
)
issue_counts_job = dg.define_asset_job(
    "issue_counts_job",
    selection=["issue_daily_counts"],
    description="Daily issue counts for the days with new events.",
)
performance_job = dg.define_asset_job(
    "performance_job",
    selection=["page_metrics", "resource_breakdown", "api_endpoint_metrics"],
    description="Daily performance marts for the days with new data.",
)
trends_job = dg.define_asset_job(
    "trends_job",
    selection=["weekly_trends", "release_impact"],
    description="Weekly trends and release impact.",
)
budgets_job = dg.define_asset_job(
    "budgets_job",
    selection=["budget_status", "recommendations"],
    description="Budget status and recommendations.",
)

alerts_job = dg.define_asset_job(
    "alerts_job",
    selection=["alert_evaluations", "alert_deliveries"],
    description="Evaluate the alert rules, then deliver the outbox.",
)

integrations_job = dg.define_asset_job(
    "integrations_job",
    selection=["tracker_ticket_states"],
    description="Read linked tickets' states back from the issue trackers.",
)

# Every mart: what the embedded runner executes when several schedules are due in the same tick (their
# assets as one run; see pipelines/execution.py). Not scheduled itself.
marts_job = dg.define_asset_job(
    "marts_job",
    selection=dg.AssetSelection.groups(
        "issues", "performance", "releases", "budgets", "alerts", "integrations"
    ),
    description="Every mart; one run for the assets of all the schedules due in a tick.",
)

ALL_JOBS = [
    issues_job,
    issue_counts_job,
    performance_job,
    trends_job,
    budgets_job,
    alerts_job,
    integrations_job,
    marts_job,
]

# The raw tables each partitioned job reads, and the assets whose watermarks it advances.
PARTITIONED_JOB_INPUTS: dict[str, tuple[list[str], list[str]]] = {
    "issue_counts_job": (["issue_daily_counts"], ["events"]),
    "performance_job": (
        ["page_metrics", "resource_breakdown", "api_endpoint_metrics"],
        ["transactions", "spans"],
    ),
}
INCREMENTAL_JOB_ASSETS: dict[str, list[str]] = {
    "issues_job": ["event_counters", "issues", "related_issues"],
    "trends_job": ["weekly_trends", "release_impact"],
}
