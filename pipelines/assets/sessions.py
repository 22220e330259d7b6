"""Release health: the session states `session_periods` that the release pages, the releases API and the
release alert rules read, from the raw SDK sessions."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

import dagster as dg
from dagster import AssetExecutionContext

from pipelines import warehouse_ops as ops
from pipelines.assets.common import (
    RAW_SESSIONS,
    AssetResult,
    MartCheck,
    advance_watermark,
    evaluate_checks,
    run_days,
)
from pipelines.partitions import daily_partitions
from pipelines.resources import ClickHouseResource

ASSET = "session_periods"  # named after the table it writes, as every state asset
# Minutes from the raw rows, then each coarser grain merged from the one below, all for the same hours.
GRAIN_QUERIES = (
    "session_periods_minute",
    "session_periods_hour",
    "session_periods_day",
    "session_periods_blocks",
)
SESSION_CHECKS = [
    MartCheck(
        "session_counts_are_consistent",
        "Every period the run wrote has crashed and abnormal sessions among its errored ones (a crashed or "
        "abnormal session is an errored one).",
    ),
    MartCheck(
        "session_hours_add_up_to_their_days",
        "Every day the run wrote counts the sessions, errored and crashed sessions of its hours.",
    ),
]


@dg.asset(
    deps=[RAW_SESSIONS],
    check_specs=[c.spec(ASSET) for c in SESSION_CHECKS],
    partitions_def=daily_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    kinds={"clickhouse"},
    group_name="releases",
)
def session_periods(context: AssetExecutionContext, warehouse: ClickHouseResource) -> AssetResult:
    """Release health states `session_periods`: per project, release, environment and period (minute, hour,
    UTC day, blocks of 2-16 days) the sessions started, errored, crashed and abnormal sessions, the first
    session start, and the users, errored users and crashed users as uniqCombined64 states — counted as
    Relay's metrics extraction counts (a session in the period of its `started`, once however many updates it
    sent; an aggregate bucket by its quantity).

    A tick refreshes the minutes of the hours whose sessions received updates since the watermark (keyed by
    the hour of `started`, so a session closed hours later refreshes the hour that counts it) from the raw
    `sessions`, then merges their hours, days and blocks. Read by the release health list and page, the
    releases API and the crash-free alert rules (stacklens/releases, docs/releases.md). Partitions are the
    UTC days of the retention (90 days); a day before the first data has nothing to build and stays Missing in
    the partitions view (not an error).
    """
    client = warehouse.get_client()
    version = ops.now_version()
    tags = context.run.tags
    scheduled = bool(tags.get(ops.asset_tag(ops.DAYS_TAG, ASSET), tags.get(ops.DAYS_TAG)))
    since = ops.read_since(client, [ASSET]) if scheduled else ops.EPOCH
    ranges = run_days(context)
    hours = 0
    for start, end in ranges:
        bounds = ops.day_bounds(start, end)
        dirty = ops.dirty_hours(client, ["sessions"], since, bounds["start"], bounds["end"])
        hours += len(dirty)
        for first, last in ops.hour_ranges(dirty):
            for query in GRAIN_QUERIES:
                ops.run_insert(client, query, {"start": first, "end": last, "materialized_at": version})
    advance_watermark(context, client, ASSET)
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(ops.rows_written(client, "session_periods", version)),
            "days": dg.MetadataValue.text(", ".join(f"{s}..{e}" for s, e in ranges)),
            "hours_refreshed": dg.MetadataValue.int(hours),
        },
        check_results=evaluate_checks(client, SESSION_CHECKS, version),
    )
