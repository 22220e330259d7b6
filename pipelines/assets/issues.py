"""Issues domain: the `issues` mart and related issues, built from the insert-time tables the `event_counters`
step keeps equal to the events (pipelines/assets/event_counters.py)."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

import dagster as dg
from dagster import AssetExecutionContext

from pipelines import warehouse_ops as ops
from pipelines.assets.common import RAW_EVENTS, AssetResult, MartCheck, evaluate_checks
from pipelines.assets.event_counters import ARRIVALS_KEPT
from pipelines.resources import ClickHouseResource
from stacklens.issues.rules import apply_system_transitions
from stacklens.warehouse.queries import load_query

ISSUES_CHECKS = [
    MartCheck(
        "issues_are_consistent",
        "No issue was seen last before it was seen first, or has no events.",
    )
]
RELATED_CHECKS = [
    MartCheck(
        "related_issues_are_valid",
        "The relations the run wrote have strengths in (0, 1] and never relate an issue to itself.",
    )
]


@dg.asset(
    group_name="issues",
    deps=[RAW_EVENTS, "issue_live_counters", "issue_rollup", "issue_element_arrivals"],
    kinds={"clickhouse"},
    check_specs=[c.spec("issues") for c in ISSUES_CHECKS],
)
def issues(context: AssetExecutionContext, warehouse: ClickHouseResource) -> AssetResult:
    """One row per project and fingerprint (issue): title, culprit (top in-app frame), level, platform, first
    and last seen, events, users affected, first/last release, environments, services and workflow status.

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
    deps=[RAW_EVENTS, "issue_element_arrivals"],
    kinds={"clickhouse"},
    check_specs=[c.spec("related_issues") for c in RELATED_CHECKS],
)
def related_issues(context: AssetExecutionContext, warehouse: ClickHouseResource) -> AssetResult:
    """Pairs of issues related by the same user, the same 5-minute windows, a similar stack trace (shared
    in-app frames `module:function`) or the same release, each with its reason and strength.

    strength = the Jaccard index |A ∩ B| / |A ∪ B| of the two issues' sets of users / windows / frames /
    releases: exact when both sets have fewer than 10 elements, otherwise estimated from bottom-10 MinHash
    sketches (per issue and reason the 10 smallest distinct hashes of its elements, table `issue_sketches`).
    shared = hashes the two sketches have in common; hashes found in more than 50 sketches are skipped.
    Incremental: refreshes the sketches of the issues with elements that arrived since the last run (from
    `issue_element_arrivals`, fed at insert time), then re-pairs only the sketches that changed and writes the
    relations that changed (a relation that no longer holds gets a tombstone). A tick costs what the new
    events and the changed sketches cost, never a pass over the events. Table `related_issues`."""
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
