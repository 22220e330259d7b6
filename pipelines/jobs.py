"""Jobs: what each schedule materializes. A job holds assets of one partitioning only."""

from __future__ import annotations

import dagster as dg

# What the data-driven jobs read and the watermarks they advance (PARTITIONED_JOB_INPUTS,
# INCREMENTAL_JOB_WATERMARKS): defined without Dagster for the runner's idle check (pipelines/idle.py).
from pipelines.job_inputs import INCREMENTAL_JOB_WATERMARKS as INCREMENTAL_JOB_WATERMARKS
from pipelines.job_inputs import PARTITIONED_JOB_INPUTS as PARTITIONED_JOB_INPUTS

# The issues asset adds each new (issue, user) pair once with its count: two runs at once could both add the
# same users. The embedded runner runs one tick at a time; under the Dagster daemon, a queued run coordinator
# limit of 1 on this tag does the same (docs/pipelines.md).
SERIAL_TAG = "stacklens/serial"

# The insert-time tables the `event_counters` step checks against the stored events and repairs (one step: a
# job holds all of them or none).
INSERT_TIME_ASSETS = [
    "issue_live_counters",
    "issue_totals_daily",
    "issue_facets_daily",
    "issue_tags_daily",
    "release_error_counts",
    "issue_rollup",
    "issue_element_arrivals",
    "raw_arrival_hours",
    "raw_received",
]
issues_job = dg.define_asset_job(
    "issues_job",
    selection=[*INSERT_TIME_ASSETS, "issues", "related_issues"],
    description="Insert-time tables checked against the events and repaired, issues and related issues, "
    "incremental.",
    tags={SERIAL_TAG: "issues"},
)
# The performance tables: four steps (page loads, resource requests, API calls, interactions), each writing
# its facts and their states for the hours with new data.
PERFORMANCE_ASSETS = [
    "pageload_facts",
    "pageload_periods",
    "pageload_examples",
    "resource_facts",
    "resource_request_periods",
    "endpoint_facts",
    "endpoint_call_periods",
    "inp_interactions",
    "inp_periods",
    "inp_script_periods",
]
performance_job = dg.define_asset_job(
    "performance_job",
    selection=PERFORMANCE_ASSETS,
    description="Page-load, resource-request and API-call facts and their states, for the hours with new data.",
)
# Release health: the session states of the hours whose sessions received updates.
sessions_job = dg.define_asset_job(
    "sessions_job",
    selection=["session_periods"],
    description="Session states (release health) for the hours with new session updates.",
)
budgets_job = dg.define_asset_job(
    "budgets_job",
    selection=["budget_status"],
    description="Every budget evaluated over the performance states.",
)

alerts_job = dg.define_asset_job(
    "alerts_job",
    selection=[
        "issue_owners",
        "person_digests",
        "anomaly_bands",
        "alert_evaluations",
        "scheduled_reports",
        "alert_deliveries",
    ],
    description="Assign new issues by the ownership rules, put due daily digests and scheduled reports in the "
    "outbox, evaluate the alert rules, then deliver the outbox.",
)

# Cron monitors' deadlines: every minute, so a missed run is reported within a minute of its margin.
monitors_job = dg.define_asset_job(
    "monitors_job",
    selection=["monitor_detection", "monitor_checks"],
    description="Missed and timed-out runs of cron monitors from their stored deadlines, incidents' issue "
    "events.",
)

integrations_job = dg.define_asset_job(
    "integrations_job",
    selection=["tracker_ticket_states"],
    description="Read linked tickets' states back from the issue trackers.",
)

# Every mart and the step checking the insert-time tables: what the embedded runner executes when several
# schedules are due in the same tick (their assets as one run; see pipelines/execution.py). Not scheduled
# itself.
marts_job = dg.define_asset_job(
    "marts_job",
    selection=dg.AssetSelection.groups(
        "issues", "performance", "releases", "budgets", "alerts", "integrations", "monitors"
    )
    | dg.AssetSelection.assets(*INSERT_TIME_ASSETS),
    description="Every mart; one run for the assets of all the schedules due in a tick.",
)

ALL_JOBS = [
    issues_job,
    performance_job,
    sessions_job,
    budgets_job,
    alerts_job,
    integrations_job,
    monitors_job,
    marts_job,
]
