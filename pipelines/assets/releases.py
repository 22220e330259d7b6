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


# The hourly states each mart of this domain reads, by the asset that keeps them, and the raw tables behind them.
PAGE_STATES = {"page_metrics": ["transactions", "spans"]}
ALL_STATES = {
    **PAGE_STATES,
    "resource_breakdown": ["spans"],
    "api_endpoint_metrics": ["transactions", "spans"],
}


def _states_complete_until(client, producers: dict[str, list[str]]):  # noqa: ANN001, ANN202
    """Up to which received_at the hourly states of ``producers`` hold every raw row: the newest received_at,
    unless rows of a producer's tables arrived after its watermark (then that watermark); None with no data."""
    upper = ops.max_received(client)
    if upper is None:
        return None
    marks = ops.get_watermarks(client, producers)
    for asset, tables in producers.items():
        if ops.arrived_after(client, tables, marks[asset]):
            upper = min(upper, marks[asset])
    return upper


def _incremental(
    warehouse: ClickHouseResource,
    name: str,
    producers: dict[str, list[str]],
    checks: list[MartCheck] | None = None,
) -> dg.MaterializeResult:
    """Rebuild what received data since the asset's watermark from the producers' hourly states, then move the
    watermark to where those states are complete (never past it: what they do not hold yet is read next time)."""
    client = warehouse.get_client()
    since = ops.read_since(client, [name])
    mark = ops.get_watermarks(client, [name])[name]
    upper = _states_complete_until(client, producers)
    version = ops.now_version()
    if upper is not None and upper > mark:
        ops.run_insert(client, name, {"since": since, "materialized_at": version})
        ops.set_watermark(client, name, upper)
    written = ops.rows_written(client, name, "materialized_at", version)
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(written),
            "read_from": dg.MetadataValue.text(since.isoformat()),
            "read_to": dg.MetadataValue.text((upper or since).isoformat()),
        },
        check_results=evaluate_checks(client, checks or [], version),
    )


@dg.asset(group_name="releases", deps=[RAW_TRANSACTIONS, "page_metrics"], kinds={"clickhouse"})
def weekly_trends(warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """One row per project, page and ISO week (week_start = Monday): views, load time average and p75 (exact),
    and the change of p75 against the previous week in percent. Rebuilds the weeks with new transactions and
    the week after each, by merging the hourly states `page_hour_states` that page_metrics keeps (so it never
    re-reads a week of raw rows, and runs after page_metrics). Table `weekly_trends`.
    """
    return _incremental(warehouse, "weekly_trends", PAGE_STATES)


@dg.asset(
    group_name="releases",
    deps=[
        RAW_TRANSACTIONS,
        RAW_SPANS,
        RAW_EVENTS,
        "page_metrics",
        "resource_breakdown",
        "api_endpoint_metrics",
    ],
    kinds={"clickhouse"},
    check_specs=[c.spec("release_impact") for c in RELEASE_CHECKS],
)
def release_impact(warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """One row per project and release (ordered by first seen): load time p75, JavaScript bytes per view, API p95,
    error events and new issues (issues whose first event is in the release), each with its change in percent
    against the previous release. Rebuilds the projects with new data from the hourly states the performance
    assets keep (`page_hour_states`, `resource_hour_states`, `endpoint_hour_states`) and the insert-time error
    aggregates, never from raw rows. Percentiles exact. Table `release_impact`.
    """
    return _incremental(warehouse, "release_impact", ALL_STATES, RELEASE_CHECKS)
