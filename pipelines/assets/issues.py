"""Issues domain: the insert-time event counters kept equal to the events, the `issues` mart, daily counts for
trends and sparklines, and related issues."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

from datetime import timedelta

import dagster as dg
from dagster import AssetExecutionContext

from pipelines import warehouse_ops as ops
from pipelines.assets.common import RAW_EVENTS, RAW_TRANSACTIONS, MartCheck, evaluate_checks, rebuild_days
from pipelines.partitions import daily_partitions
from pipelines.resources import ClickHouseResource
from stacklens.issues.counters import CounterRepair, repair_counters
from stacklens.issues.rules import apply_system_transitions
from stacklens.warehouse.queries import load_query

# issue_element_arrivals keeps 3 days (migration 0126); a watermark older than this rebuilds from the events.
ARRIVALS_KEPT = timedelta(days=2)

ISSUES_CHECKS = [
    MartCheck(
        "issues_are_consistent",
        "No issue was seen last before it was seen first, or has no events.",
    )
]
DAILY_COUNTS_CHECKS = [
    MartCheck(
        "issue_daily_counts_are_sane",
        "Every daily row the run wrote counts at least one event and one user at most per event.",
    )
]
COUNTERS_CHECK = dg.AssetCheckSpec(
    "event_counters_match_events",
    asset="event_counters",
    description="Every insert-time counter of the issues and days with rows of a dead landing attempt counts "
    "what a query of the stored events gives (after this run's repair); the metadata shows the comparison "
    "and what was added back.",
)
RELATED_CHECKS = [
    MartCheck(
        "related_issues_are_valid",
        "The relations the run wrote have strengths in (0, 1] and never relate an issue to itself.",
    )
]


def _comparison_table(report: CounterRepair) -> str:
    lines = [
        "| table | keys compared | keys short | events missing | events in excess | keys left (landing) "
        "| missing after repair |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in report.tables:
        lines.append(
            f"| {t.table} | {t.keys} | {t.short_keys} | {t.missing} | {t.excess} | {t.in_flight} | {t.remaining} |"
        )
    return "\n".join(lines)


def _counters_check(report: CounterRepair) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name=COUNTERS_CHECK.name,
        passed=report.remaining == 0,
        metadata={
            "dead_attempts": len(report.dead),
            "dead_attempt_rows": sum(a.rows for a in report.dead),
            "attempts_still_landing": len(report.in_flight),
            "events_missing_found": report.missing,
            "keys_repaired": report.repaired_keys,
            "events_missing_after_repair": report.remaining,
            "events_in_excess": sum(t.excess for t in report.tables),
            "comparison": dg.MetadataValue.md(_comparison_table(report)),
        },
    )


@dg.asset(
    group_name="issues",
    deps=[RAW_EVENTS, RAW_TRANSACTIONS],
    kinds={"clickhouse"},
    check_specs=[COUNTERS_CHECK],
)
def event_counters(context: AssetExecutionContext, warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """The insert-time tables that materialized views feed from `events` and `transactions` (issue_live_counters,
    issue_daily_states, issue_totals_daily, issue_facets_daily, issue_tags_daily, release_error_counts,
    issue_rollup, issue_element_arrivals, raw_arrival_hours, raw_received), kept equal to the stored rows.

    A process killed between the insert of a batch's rows and its views keeps the rows and loses the views'
    blocks; the resend answers the rows as duplicates. Each run finds the landing attempts of rows received
    since its watermark that no batch record carries and that are no longer landing, compares every counter
    of their issues, days, facets, tag pairs and releases with the stored events, adds each shortfall back as
    one correction row, feeds the other tables their rows again (states and sets: idempotent) and marks their
    hours as arrived so the marts rebuild them. A run with no such attempt costs two small queries. Read by
    `issues`, `issue_daily_counts`, `related_issues`, the issue list and the alerts.
    """
    client = warehouse.get_client()
    version = ops.now_version()
    since = max(ops.read_since(client, ["event_counters"]), version - ARRIVALS_KEPT)
    report = repair_counters(client, since, version, arrived=version)
    ops.set_watermark(client, "event_counters", report.resume_from or version)
    if report.missing:
        context.log.warning(
            f"{report.missing} events were missing from the insert-time counters "
            f"({len(report.dead)} landing attempts stopped after storing rows); added back"
        )
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(report.repaired_keys),
            "read_from": dg.MetadataValue.text(since.isoformat()),
            "read_to": dg.MetadataValue.text(version.isoformat()),
            "resume_from": dg.MetadataValue.text((report.resume_from or version).isoformat()),
        },
        check_results=[_counters_check(report)],
    )


@dg.asset(
    group_name="issues",
    deps=[RAW_EVENTS, event_counters],
    kinds={"clickhouse"},
    check_specs=[c.spec("issues") for c in ISSUES_CHECKS],
)
def issues(context: AssetExecutionContext, warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """One row per project and fingerprint (issue): title, culprit (top in-app frame), level, platform, first and
    last seen, events, users affected, first/last release, environments, services and workflow status.

    Incremental: rebuilds only the issues with events received since the last run, from insert-time states;
    users affected = the issue's count in `issue_users`, to which each run first adds the new events' unseen
    users (a member lookup per new user, never a pass over an issue's users).
    Then writes the derived workflow changes (a resolved issue with a new event becomes `regressed`; an ignore
    whose condition is met ends), each with a history row. Table `issues`; the live list is `issue_list`.
    """
    client = warehouse.get_client()
    version = ops.now_version()
    since = ops.read_since(client, ["issues"])
    upper = ops.max_received(client)
    written = 0
    if upper is not None:
        # The arrivals are kept 3 days; an older watermark (first run, long outage) reads the events.
        full = since < version - ARRIVALS_KEPT
        if full:
            ops.run_insert(client, "issue_users_full", {})
            ops.run_insert(client, "issue_users_repair", {})
        else:
            ops.run_insert(client, "issue_users", {"since": since})
        ops.run_insert(
            client,
            "issues_refresh",
            {"since": since, "materialized_at": version, "project_id": 0, "issue_ids": []},
        )
        ops.set_watermark(client, "issues", upper)
        written = ops.rows_written(client, "issues", version)
    changes = apply_system_transitions(client)
    for change in changes:
        context.log.info(
            f"issue {change.issue_id}: {change.from_status} -> {change.to_status} ({change.reason})"
        )
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(written),
            "read_from": dg.MetadataValue.text(since.isoformat()),
            "read_to": dg.MetadataValue.text((upper or since).isoformat()),
            "status_changes": dg.MetadataValue.int(len(changes)),
        },
        check_results=evaluate_checks(client, ISSUES_CHECKS, version),
    )


@dg.asset(
    group_name="issues",
    deps=[RAW_EVENTS, event_counters],
    partitions_def=daily_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    kinds={"clickhouse"},
    check_specs=[c.spec("issue_daily_counts") for c in DAILY_COUNTS_CHECKS],
)
def issue_daily_counts(context: AssetExecutionContext, warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """One row per project, issue and UTC day: events and distinct users that day (trends and sparklines).

    Daily partitions; a scheduled tick rebuilds only the days that received events (late ones included).
    Table `issue_daily_counts`.
    """
    return rebuild_days(
        context,
        warehouse.get_client(),
        "issue_daily_counts",
        "issue_daily_counts",
        "issue_daily_counts",
        DAILY_COUNTS_CHECKS,
    )


@dg.asset(
    group_name="issues",
    deps=[RAW_EVENTS, event_counters],
    kinds={"clickhouse"},
    check_specs=[c.spec("related_issues") for c in RELATED_CHECKS],
)
def related_issues(context: AssetExecutionContext, warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """Pairs of issues related by the same user, the same 5-minute windows, a similar stack trace (shared in-app
    frames `module:function`) or the same release, each with its reason and strength.

    strength = the Jaccard index |A ∩ B| / |A ∪ B| of the two issues' sets of users / windows / frames /
    releases: exact when both sets have fewer than 10 elements, otherwise estimated from bottom-10 MinHash
    sketches (per issue and reason the 10 smallest distinct hashes of its elements, table `issue_sketches`).
    shared = hashes the two sketches have in common; hashes found in more than 50 sketches are skipped.
    Incremental: refreshes the sketches of the issues with elements that arrived since the last run (from
    `issue_element_arrivals`, fed at insert time), then re-pairs only the sketches that changed and writes the
    relations that changed (a relation that no longer holds gets a tombstone). A tick costs what the new events
    and the changed sketches cost, never a pass over the events. Table `related_issues`.
    """
    client = warehouse.get_client()
    since = ops.read_since(client, ["related_issues"])
    upper = ops.max_received(client)
    version = ops.now_version()
    written, removed = 0, 0
    if upper is not None:
        # The arrivals are kept 3 days; an older watermark (first run, long outage) rebuilds from the events.
        full = since < version - ARRIVALS_KEPT
        sketches = "related_sketches_full" if full else "related_sketches"
        ops.run_insert(client, sketches, {"since": since, "materialized_at": version})
        ops.run_insert(client, "related_issues", {"materialized_at": version})
        ops.set_watermark(client, "related_issues", upper)
        written, removed = client.query(
            load_query("pipelines/written/related_issues"), parameters={"v": version}
        ).result_rows[0]
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(int(written)),
            "removed": dg.MetadataValue.int(int(removed)),
            "read_from": dg.MetadataValue.text(since.isoformat()),
            "read_to": dg.MetadataValue.text((upper or since).isoformat()),
        },
        check_results=evaluate_checks(client, RELATED_CHECKS, version),
    )
