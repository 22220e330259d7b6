"""Issues domain: the `issues` mart, daily counts for trends and sparklines, and related issues."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

from datetime import datetime

import dagster as dg
from dagster import AssetExecutionContext

from pipelines import warehouse_ops as ops
from pipelines.assets.common import RAW_EVENTS, rebuild_days
from pipelines.partitions import daily_partitions
from pipelines.resources import ClickHouseResource
from stacklens.issues.rules import apply_system_transitions


def _incremental(client, asset: str, query: str, table: str) -> tuple[int, datetime, datetime]:  # noqa: ANN001
    """Rebuild ``table`` for what arrived since the asset's watermark; return rows written and the window."""
    since = ops.read_since(client, [asset])
    upper = ops.max_received(client)
    version = ops.now_version()
    if upper is None:
        return 0, since, since
    ops.run_insert(client, query, {"since": since, "materialized_at": version})
    ops.set_watermark(client, asset, upper)
    return ops.rows_written(client, table, "materialized_at", version), since, upper


@dg.asset(group_name="issues", deps=[RAW_EVENTS], kinds={"clickhouse"})
def issues(context: AssetExecutionContext, warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """One row per project and fingerprint (issue): title, culprit (top in-app frame), level, platform, first and
    last seen, events, users affected, first/last release, environments, services and workflow status.

    Incremental: rebuilds only the issues with events received since the last run. Then writes the derived
    workflow changes (a resolved issue with a new event becomes `regressed`; an ignore whose condition is met
    ends), each with a history row. Table `issues`; the live list is the `issue_list` view.
    """
    client = warehouse.get_client()
    written, since, upper = _incremental(client, "issues", "issues_refresh", "issues")
    changes = apply_system_transitions(client)
    for change in changes:
        context.log.info(
            f"issue {change.issue_id}: {change.from_status} -> {change.to_status} ({change.reason})"
        )
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(written),
            "read_from": dg.MetadataValue.text(since.isoformat()),
            "read_to": dg.MetadataValue.text(upper.isoformat()),
            "status_changes": dg.MetadataValue.int(len(changes)),
        }
    )


@dg.asset_check(
    asset=issues, description="No issue was seen last before it was seen first, or has no events."
)
def issues_are_consistent(warehouse: ClickHouseResource) -> dg.AssetCheckResult:
    bad = (
        warehouse.get_client()
        .query("SELECT count() FROM issues FINAL WHERE first_seen > last_seen OR events = 0")
        .result_rows[0][0]
    )
    return dg.AssetCheckResult(passed=bad == 0, metadata={"inconsistent_issues": int(bad)})


@dg.asset(
    group_name="issues",
    deps=[RAW_EVENTS],
    partitions_def=daily_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    kinds={"clickhouse"},
)
def issue_daily_counts(context: AssetExecutionContext, warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """One row per project, issue and UTC day: events and distinct users that day (trends and sparklines).

    Daily partitions; a scheduled tick rebuilds only the days that received events (late ones included).
    Table `issue_daily_counts`.
    """
    return rebuild_days(
        context, warehouse.get_client(), "issue_daily_counts", "issue_daily_counts", "issue_daily_counts"
    )


@dg.asset_check(
    asset=issue_daily_counts,
    description="Every daily row counts at least one event and one user at most per event.",
)
def issue_daily_counts_are_sane(warehouse: ClickHouseResource) -> dg.AssetCheckResult:
    bad = (
        warehouse.get_client()
        .query("SELECT count() FROM issue_daily_counts FINAL WHERE events = 0 OR users > events")
        .result_rows[0][0]
    )
    return dg.AssetCheckResult(passed=bad == 0, metadata={"bad_rows": int(bad)})


@dg.asset(group_name="issues", deps=[RAW_EVENTS], kinds={"clickhouse"})
def related_issues(context: AssetExecutionContext, warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """Pairs of issues related by the same user, the same 5-minute windows, a similar stack trace or the same
    release, each with its reason and strength.

    Each issue is compared through a capped set per reason: its 10 most frequent (by events) users; 5-minute
    windows with events; distinct in-app frames `module:function`; releases (from the `topK(20)` states kept
    at insert time in `issue_element_top`; exact while an issue has at most 60 distinct elements of a reason). strength = Jaccard
    index |A ∩ B| / |A ∪ B| of the two capped sets, shared = |A ∩ B|; elements found in more than 50 issues'
    sets are skipped. Incremental: refreshes the sets of the issues with events since the last run, then
    recomputes their relations against every issue's set (a relation that no longer holds is deleted), so a
    tick costs what the touched issues cost, never a pass over the events. Table `related_issues`.
    """
    client = warehouse.get_client()
    since = ops.read_since(client, ["related_issues"])
    upper = ops.max_received(client)
    version = ops.now_version()
    written = 0
    if upper is not None:
        ops.run_insert(client, "related_sets", {"since": since, "materialized_at": version})
        ops.run_insert(client, "related_issues", {"materialized_at": version})
        ops.set_watermark(client, "related_issues", upper)
        written = ops.rows_written(client, "related_issues", "materialized_at", version)
    context.log.info(f"related_issues: {written} relation rows for issues with events since {since}")
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(written),
            "read_from": dg.MetadataValue.text(since.isoformat()),
            "read_to": dg.MetadataValue.text((upper or since).isoformat()),
        }
    )


@dg.asset_check(
    asset=related_issues, description="Strengths lie in (0, 1] and no issue is related to itself."
)
def related_issues_are_valid(warehouse: ClickHouseResource) -> dg.AssetCheckResult:
    bad = (
        warehouse.get_client()
        .query(
            "SELECT count() FROM related_issues FINAL WHERE strength <= 0 OR strength > 1 OR issue_id = related_issue_id"
        )
        .result_rows[0][0]
    )
    return dg.AssetCheckResult(passed=bad == 0, metadata={"bad_rows": int(bad)})
