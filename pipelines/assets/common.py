"""Shared steps of the assets: which days a partitioned run covers, watermark bookkeeping, and the asset checks
each asset evaluates in its own step."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import dagster as dg
from clickhouse_connect.driver.client import Client
from dagster import AssetExecutionContext

from pipelines import warehouse_ops as ops

RAW_EVENTS = dg.AssetKey(["raw", "events"])
RAW_TRANSACTIONS = dg.AssetKey(["raw", "transactions"])
RAW_SPANS = dg.AssetKey(["raw", "spans"])


@dataclass(frozen=True)
class MartCheck:
    """An asset check evaluated inside its asset's step (declared with ``check_specs``): one query counting the
    rows that break a rule; it passes when there are none. ``sql`` may name ``{v:DateTime64(6, 'UTC')}``, the
    version the run stamped on the rows it wrote. A separate check step would cost each run Dagster's per-step
    events and bookkeeping for a query of a few milliseconds."""

    name: str
    description: str
    sql: str

    def spec(self, asset: str) -> dg.AssetCheckSpec:
        return dg.AssetCheckSpec(self.name, asset=asset, description=self.description)


def evaluate_checks(client: Client, checks: list[MartCheck], version: datetime) -> list[dg.AssetCheckResult]:
    results = []
    for check in checks:
        parameters: dict[str, Any] = {"v": version} if "{v:" in check.sql else {}
        bad = int(client.query(check.sql, parameters=parameters).result_rows[0][0])
        results.append(
            dg.AssetCheckResult(check_name=check.name, passed=bad == 0, metadata={"bad_rows": bad})
        )
    return results


def run_days(context: AssetExecutionContext) -> list[tuple[date, date]]:
    """Day ranges to rebuild: the days a scheduled tick found new data for, else the run's partition range."""
    tags = context.run.tags
    listed = tags.get(ops.asset_tag(ops.DAYS_TAG, context.asset_key.to_user_string()), tags.get(ops.DAYS_TAG))
    if listed:
        return ops.day_ranges(date.fromisoformat(d) for d in listed.split(",") if d)
    window = context.partition_time_window
    return [(window.start.date(), window.end.date())]


def advance_watermark(context: AssetExecutionContext, client: Client, asset: str) -> None:
    """After success, move the asset's watermark to where the scheduled tick read up to (backfills do not)."""
    tags = context.run.tags
    mark = tags.get(
        ops.asset_tag(ops.WATERMARK_TAG, context.asset_key.to_user_string()), tags.get(ops.WATERMARK_TAG)
    )
    if mark:
        ops.set_watermark(client, asset, datetime.fromisoformat(mark))


def rebuild_days(
    context: AssetExecutionContext,
    client: Client,
    query: str,
    table: str,
    asset: str,
    checks: list[MartCheck] | None = None,
) -> dg.MaterializeResult:
    """Run a day-range INSERT … SELECT for every range of the run, evaluate the asset's checks and report."""
    version = ops.now_version()
    ranges = run_days(context)
    for start, end in ranges:
        ops.run_insert(client, query, {**ops.day_bounds(start, end), "materialized_at": version})
    written = ops.rows_written(client, table, "materialized_at", version)
    advance_watermark(context, client, asset)
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(written),
            "days": dg.MetadataValue.text(", ".join(f"{s}..{e}" for s, e in ranges)),
        },
        check_results=evaluate_checks(client, checks or [], version),
    )


def rebuild_from_states(
    context: AssetExecutionContext,
    client: Client,
    asset: str,
    sources: list[str],
    states: list[str],
    marts: list[tuple[str, str, str]],
    checks: list[MartCheck],
    parameters: dict[str, Any] | None = None,
) -> dg.MaterializeResult:
    """Rebuild the run's days of a performance mart in two steps, so a tick never re-reads a whole day's raw rows:

    1. refresh the hourly states (``states``: INSERT … SELECT queries over ``[start, end)``) of the hours that
       received rows of ``sources`` since the asset's watermark — from the raw rows of those hours only. A run
       without the scheduler's day list (a backfill) refreshes every hour of its range;
    2. rebuild each day of the run from the states of its hours (``marts``: (query, table, metadata key) —
       the rows each table got are reported under its key, ``row_count`` for the asset's own table).

    ``parameters`` are extra query parameters of the state queries (the score's control points).
    """
    version = ops.now_version()
    ranges = run_days(context)
    scheduled = bool(
        context.run.tags.get(ops.asset_tag(ops.DAYS_TAG, asset), context.run.tags.get(ops.DAYS_TAG))
    )
    since = ops.read_since(client, [asset]) if scheduled else ops.EPOCH
    hours = 0
    for start, end in ranges:
        bounds = ops.day_bounds(start, end)
        dirty = ops.dirty_hours(client, sources, since, bounds["start"], bounds["end"])
        hours += len(dirty)
        for first, last in ops.hour_ranges(dirty):
            for query in states:
                bounds_h = {"start": first, "end": last, "materialized_at": version}
                ops.run_insert(client, query, {**(parameters or {}), **bounds_h})
        for query, _, _ in marts:
            ops.run_insert(client, query, {**bounds, "materialized_at": version})
    advance_watermark(context, client, asset)
    metadata: dict[str, Any] = {
        "days": dg.MetadataValue.text(", ".join(f"{s}..{e}" for s, e in ranges)),
        "hours_refreshed": dg.MetadataValue.int(hours),
    }
    for _, table, key in marts:
        metadata[key] = dg.MetadataValue.int(ops.rows_written(client, table, "materialized_at", version))
    return dg.MaterializeResult(metadata=metadata, check_results=evaluate_checks(client, checks, version))


raw_sources = [
    dg.AssetSpec(
        RAW_EVENTS, group_name="raw", description="Error events stored by /api/ingest (table events)."
    ),
    dg.AssetSpec(
        RAW_TRANSACTIONS,
        group_name="raw",
        description="Page loads, navigations and API requests (transactions).",
    ),
    dg.AssetSpec(
        RAW_SPANS, group_name="raw", description="Spans of transactions: resources, API calls (spans)."
    ),
]
