"""Releases domain: weekly trends per page and the impact of each release."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

import dagster as dg

from pipelines import warehouse_ops as ops
from pipelines.assets.common import RAW_EVENTS, RAW_SPANS, RAW_TRANSACTIONS, MartCheck, evaluate_checks
from pipelines.resources import ClickHouseResource

RELEASE_CHECKS = [
    MartCheck(
        "release_order_valid",
        "A release is never its own predecessor.",
        "SELECT count() FROM release_impact FINAL WHERE previous_release = release",
    )
]


def _incremental(
    warehouse: ClickHouseResource, name: str, checks: list[MartCheck] | None = None
) -> dg.MaterializeResult:
    client = warehouse.get_client()
    since = ops.read_since(client, [name])
    upper = ops.max_received(client)
    version = ops.now_version()
    if upper is not None:
        ops.run_insert(client, name, {"since": since, "materialized_at": version})
        ops.set_watermark(client, name, upper)
    written = ops.rows_written(client, name, "materialized_at", version)
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(written),
            "read_from": dg.MetadataValue.text(since.isoformat()),
        },
        check_results=evaluate_checks(client, checks or [], version),
    )


@dg.asset(group_name="releases", deps=[RAW_TRANSACTIONS], kinds={"clickhouse"})
def weekly_trends(warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """One row per project, page and ISO week (week_start = Monday): views, load time average and p75, and the
    change of p75 against the previous week in percent. Rebuilds the weeks with new page views and the week
    after each. Table `weekly_trends`.
    """
    return _incremental(warehouse, "weekly_trends")


@dg.asset(
    group_name="releases",
    deps=[RAW_TRANSACTIONS, RAW_SPANS, RAW_EVENTS],
    kinds={"clickhouse"},
    check_specs=[c.spec("release_impact") for c in RELEASE_CHECKS],
)
def release_impact(warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """One row per project and release (ordered by first seen): load time p75, JavaScript bytes per view, API p95,
    error events and new issues (issues whose first event is in the release), each with its change in percent
    against the previous release. Rebuilds the projects with new data. Table `release_impact`.
    """
    return _incremental(warehouse, "release_impact", RELEASE_CHECKS)
