"""The tables the pages read that no run builds, as specs of the graph: the raw rows the ingest entrances
store (group raw), the workflow tables people write through the API (group workflow), the watermarks and the
live `issue_list` view (group insert_time). Each has what fills it as its dependencies and who reads it in its
description, so the Dagster UI answers "what does the issue list read, and what fills that?" for every page
(tests/pipelines/assets/test_live_tables.py checks every table a reader's query names is in the graph).

No job selects these specs: there is nothing to run. The insert-time tables the views fill from the events are
assets of the `event_counters` step, which checks and repairs them (pipelines/assets/event_counters.py); the
`issues` asset's rules write workflow changes (regressed, an ignore that ended) beside people's.
"""

from __future__ import annotations

import dagster as dg

from pipelines.assets.common import (
    RAW_EVENTS,
    RAW_OUTCOMES,
    RAW_SESSIONS,
    RAW_SPANS,
    RAW_TRANSACTIONS,
)

RAW, INSERT_TIME, WORKFLOW = "raw", "insert_time", "workflow"

# Tables the pipelines and ingest keep for themselves; no reader's query names them.
PLUMBING = frozenset(
    {
        "schema_migrations",  # the migration runner's record
        "ingest_batches",  # batch ids and Idempotency-Keys already answered
        "event_counter_repairs",  # what event_counters added back, per run
        "issue_users",  # the issues asset's users per issue (its own lookup table)
        "issue_sketches",  # the related_issues asset's MinHash sketches
    }
)


def _raw(name: str, description: str) -> dg.AssetSpec:
    return dg.AssetSpec(dg.AssetKey([RAW, name]), group_name=RAW, description=description)


ISSUE_STATE = dg.AssetKey(["issue_state"])

specs = [
    dg.AssetSpec(
        RAW_EVENTS,
        group_name=RAW,
        description="Error events stored by the ingest entrances, one row per event with its payload (table "
        "events). Read by an issue's events, Explore's errors dataset, the alert rules' frequencies and every "
        "issues-domain asset.",
    ),
    dg.AssetSpec(
        RAW_TRANSACTIONS,
        group_name=RAW,
        description="Page loads, navigations and API requests (table transactions). Read by the performance "
        "facts, the waterfall and Explore's transactions dataset.",
    ),
    dg.AssetSpec(
        RAW_SPANS,
        group_name=RAW,
        description="Spans of transactions: resources, API calls (table spans). Read by the performance facts "
        "and the waterfall.",
    ),
    dg.AssetSpec(
        RAW_SESSIONS,
        group_name=RAW,
        description="Release-health sessions from the SDKs (Sentry `session` and `sessions` items, the shipper's "
        "session lines): one row per session update or per aggregate bucket and status (table sessions).",
    ),
    dg.AssetSpec(
        RAW_OUTCOMES,
        group_name=RAW,
        description="What became of every item that reached an entrance (table outcomes): one row per "
        "organization, project, hour, category, outcome and reason after merges (SummingMergeTree), written "
        "by the ingest entrances every few seconds. Read by GET /api/outcomes and the usage page.",
    ),
    _raw(
        "logs",
        "Log records: OTLP logs, Sentry log items and the shipper's log lines (table logs). Read by the Logs "
        "page and its API and Explore's logs dataset.",
    ),
    _raw(
        "replays",
        "Session replays, one row per replay and update (table replays). Read by the replay list, a replay's "
        "page and the release pages' replay links.",
    ),
    _raw(
        "replay_segments",
        "The recorded segments of each replay (table replay_segments). Read by the replay player, its marks "
        "and its spans.",
    ),
    _raw(
        "sourcemap_files",
        "Uploaded bundles and source maps by release, dist and debug id (table sourcemap_files). Read by the "
        "symbolication of browser stacks and the project's source maps page.",
    ),
    _raw(
        "sourcemap_blobs",
        "The content of uploaded files, stored once per checksum (table sourcemap_blobs). Read by the "
        "symbolication of browser stacks.",
    ),
    dg.AssetSpec(
        ISSUE_STATE,
        group_name=WORKFLOW,
        description="Each issue's workflow state: resolved, ignored and their conditions (table issue_state). "
        "Written by people through the API and pages, and by the issues asset's rules. Read by the issue list "
        "(issue_list) and the rules' pending transitions.",
    ),
    dg.AssetSpec(
        "issue_history",
        group_name=WORKFLOW,
        description="Every status change of every issue, with who made it and why (table issue_history). Read "
        "by an issue's history, the regression alerts and the release pages.",
    ),
    dg.AssetSpec(
        "pipeline_watermarks",
        group_name=INSERT_TIME,
        description="How far each asset has read the raw tables (table pipeline_watermarks), written by every "
        "run. Read beside raw_arrival_hours by the pages' notice that their marts are still building.",
    ),
    dg.AssetSpec(
        "issue_list",
        group_name=INSERT_TIME,
        deps=["issue_live_counters", "issues", ISSUE_STATE],
        description="The live issue list, a parameterized view over the insert-time counters, the workflow "
        "states and the issues mart (view issue_list). Read by the issue list page and API, an issue's page, "
        "related issues and the release pages.",
    ),
]
