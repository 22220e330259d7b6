"""Shared steps of the assets: which days a partitioned run covers, watermark bookkeeping, and the asset
checks each asset evaluates in its own step."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, TypeAlias

import dagster as dg
from clickhouse_connect.driver.client import Client
from dagster import AssetExecutionContext

from pipelines import warehouse_ops as ops
from stacklens.warehouse.queries import load_query, scalar_row

# What an asset returns: `MaterializeResult[Any]` to the type checker, the bare class at run time, where
# Dagster recognises an asset's result by the bare class only (a subscript fails with checks or outputs).
if TYPE_CHECKING:
    AssetResult: TypeAlias = dg.MaterializeResult[Any]
else:
    AssetResult = dg.MaterializeResult

RAW_EVENTS = dg.AssetKey(["raw", "events"])
RAW_TRANSACTIONS = dg.AssetKey(["raw", "transactions"])
RAW_OUTCOMES = dg.AssetKey(["raw", "outcomes"])
RAW_SPANS = dg.AssetKey(["raw", "spans"])
RAW_SESSIONS = dg.AssetKey(["raw", "sessions"])


@dataclass(frozen=True)
class MartCheck:
    """An asset check evaluated inside its asset's step (declared with ``check_specs``): one query counting
    the rows that break a rule, ``queries/pipelines/checks/<name>.sql``; it passes when there are none. The
    query may name ``{v:DateTime64(6, 'UTC')}``, the version the run stamped on the rows it wrote. A
    separate check step would cost each run Dagster's per-step events and bookkeeping for a query of a few
    milliseconds."""

    name: str
    description: str

    @property
    def sql(self) -> str:
        return load_query(f"pipelines/checks/{self.name}")

    def spec(self, asset: str) -> dg.AssetCheckSpec:
        return dg.AssetCheckSpec(self.name, asset=asset, description=self.description)


def _used(sql: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """The parameters ``sql`` names (``{name:Type}``)."""
    return {name: value for name, value in parameters.items() if "{" + name + ":" in sql}


def evaluate_checks(
    client: Client,
    checks: list[MartCheck] | tuple[MartCheck, ...],
    version: datetime,
    parameters: dict[str, Any] | None = None,
    asset: str | None = None,
) -> list[dg.AssetCheckResult]:
    """Each check's result, from one query for all of them (each check a scalar subquery: one round trip
    and one plan, not one per check). ``parameters`` are further query parameters the checks may name
    besides ``v``; ``asset`` names the checks' asset (needed when the step materializes several)."""
    if not checks:
        return []
    values = {"v": version, **(parameters or {})}
    sql = scalar_row([check.sql for check in checks])
    row = client.query(sql, parameters=_used(sql, values)).result_rows[0]
    key = dg.AssetKey(asset) if asset else None
    return [
        dg.AssetCheckResult(
            asset_key=key, check_name=check.name, passed=int(bad) == 0, metadata={"bad_rows": int(bad)}
        )
        for check, bad in zip(checks, row, strict=True)
    ]


def scheduled_days(context: AssetExecutionContext, asset: str) -> str:
    """The days a scheduled tick listed for ``asset`` (comma-separated ISO dates), '' for a run without
    them (a backfill of the run's partition range)."""
    tags = context.run.tags
    return tags.get(ops.asset_tag(ops.DAYS_TAG, asset), tags.get(ops.DAYS_TAG, ""))


def run_days(context: AssetExecutionContext, asset: str | None = None) -> list[tuple[date, date]]:
    """Day ranges to rebuild: the days a scheduled tick found new data for, else the run's partition range.
    ``asset``: whose days (default: the step's one asset)."""
    listed = scheduled_days(context, asset or context.asset_key.to_user_string())
    if listed:
        return ops.day_ranges(date.fromisoformat(d) for d in listed.split(",") if d)
    window = context.partition_time_window
    return [(window.start.date(), window.end.date())]


def advance_watermark(context: AssetExecutionContext, client: Client, asset: str) -> None:
    """After success, move the watermark ``asset`` (an asset's name: the one whose per-asset tag holds it)
    to where the scheduled tick read up to (backfills do not)."""
    tags = context.run.tags
    mark = tags.get(ops.asset_tag(ops.WATERMARK_TAG, asset), tags.get(ops.WATERMARK_TAG))
    if mark:
        ops.set_watermark(client, asset, datetime.fromisoformat(mark))
