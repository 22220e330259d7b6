"""The tables the pages read that no run builds: filled at ingest (raw rows, and the insert-time states their
materialized views keep), or written by people's actions through the API. Each is a spec in the graph beside the
marts, with what fills it as its dependencies and who reads it in its description, so the Dagster UI answers
"what does the issue list read, and what fills that?" for every page (tests/pipelines/assets/test_live_tables.py
checks every table a reader's query names is in the graph).

No job selects these groups: there is nothing to run. The `event_counters` asset compares the insert-time states
with the stored events and repairs them (pipelines/assets/issues.py); the `issues` asset's rules write workflow
changes (regressed, an ignore that ended) beside people's.
"""

from __future__ import annotations

import dagster as dg

from pipelines.assets.common import RAW_EVENTS, RAW_SPANS, RAW_TRANSACTIONS

RAW, INSERT_TIME, WORKFLOW = "raw", "insert_time", "workflow"

# Tables the pipelines and ingest keep for themselves; no reader's query names them.
PLUMBING = frozenset(
    {
        "schema_migrations",  # the migration runner's record
        "ingest_batches",  # batch ids and Idempotency-Keys already answered
        "event_counter_repairs",  # what event_counters added back, per run
        "issue_users",  # the issues asset's users per issue (its own lookup table)
        "issue_sketches",  # the related_issues asset's MinHash sketches
        "issue_element_arrivals",  # what the issues and related_issues assets read since their watermark
        "issue_daily_states",  # what issue_daily_counts is rebuilt from
        "issue_rollup",  # what the issues mart is rebuilt from
        "raw_received",  # the newest row received per raw table, for the watermarks
    }
)


def _raw(name: str, description: str) -> dg.AssetSpec:
    return dg.AssetSpec(dg.AssetKey([RAW, name]), group_name=RAW, description=description)


def _fed(name: str, deps: list[dg.AssetKey], description: str) -> dg.AssetSpec:
    return dg.AssetSpec(name, group_name=INSERT_TIME, deps=deps, description=description)


ISSUE_STATE = dg.AssetKey(["issue_state"])

specs = [
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
    _fed(
        "issue_live_counters",
        [RAW_EVENTS],
        "Each issue's events, when its latest arrived and its latest title, kept by a view at insert (table "
        "issue_live_counters). Read by the issue list (issue_list), the new-issue and regression alerts.",
    ),
    _fed(
        "issue_totals_daily",
        [RAW_EVENTS],
        "Per issue and day: events and users, kept by a view at insert (table issue_totals_daily). Read by the "
        "issue list's windows and its sparklines.",
    ),
    _fed(
        "issue_facets_daily",
        [RAW_EVENTS],
        "Per issue, day and facet (environment, release, browser, …): events and users, kept by a view at "
        "insert (table issue_facets_daily). Read by the issue list's filters, facet values and sparklines.",
    ),
    _fed(
        "issue_tags_daily",
        [RAW_EVENTS],
        "Per issue, day and tag: events, kept by a view at insert (table issue_tags_daily). Read by the issue "
        "list's tag filters.",
    ),
    _fed(
        "release_error_counts",
        [RAW_EVENTS],
        "Error events per project and release, kept by a view at insert (table release_error_counts). Read "
        "by the release pages.",
    ),
    _fed(
        "raw_arrival_hours",
        [RAW_EVENTS, RAW_TRANSACTIONS, RAW_SPANS],
        "Per raw table, project and hour of the rows' own time: when its newest row was received, kept by views "
        "at insert (table raw_arrival_hours). Read by the pages' notice that their marts are still building.",
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
        deps=["issue_live_counters", ISSUE_STATE, "issues", RAW_EVENTS],
        description="The live issue list, a parameterized view over the insert-time counters, the workflow "
        "states and the issues mart (view issue_list). Read by the issue list page and API, an issue's page, "
        "related issues and the release pages.",
    ),
]
