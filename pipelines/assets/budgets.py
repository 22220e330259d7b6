"""Budgets domain: each budget's current value and pass/fail; recommendations over the performance marts."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

from datetime import UTC, date, datetime, timedelta

import dagster as dg
from dagster import AssetExecutionContext
from sqlalchemy import select

from pipelines import warehouse_ops as ops
from pipelines.assets.common import RAW_SPANS, RAW_TRANSACTIONS
from pipelines.budget_rules import WINDOW_DAYS, passes
from pipelines.budget_store import BudgetRow
from pipelines.resources import ClickHouseResource, ControlStoreResource
from stacklens.warehouse.queries import load_query

BUDGET_COLUMNS = [
    "org_id",
    "project_id",
    "budget_id",
    "metric",
    "scope",
    "budget_value",
    "current_value",
    "passed",
    "window_days",
    "evaluated_at",
]


def _budgets(control_store: ControlStoreResource) -> list[tuple[int, int, int, str, str, float]]:
    from stacklens.control.db import session_scope
    from stacklens.control.models import Budget

    with session_scope(control_store.settings()) as session:
        rows = session.execute(
            select(Budget.id, Budget.org_id, Budget.project_id, Budget.metric, Budget.scope, Budget.value)
        ).all()
    return [(int(i), int(o), int(p), str(m), str(s or "*"), float(v)) for i, o, p, m, s, v in rows]


@dg.asset(group_name="budgets", deps=[RAW_TRANSACTIONS, RAW_SPANS], kinds={"clickhouse"})
def budget_status(
    context: AssetExecutionContext, warehouse: ClickHouseResource, control_store: ControlStoreResource
) -> dg.MaterializeResult:
    """One row per performance budget (kept in the control store, set through the API and the CLI): metric,
    scope (a page route or * for the project), budget value, current value over the last 7 days and pass/fail.

    Current values: load_time_ms, ttfb_ms, lcp_ms, inp_ms, cls = p75 over page loads; js_bytes = JavaScript
    bytes per page view; api_p95_ms = p95 of API calls. No data counts as passing. Table `budget_status`.
    """
    client = warehouse.get_client()
    budgets = _budgets(control_store)
    evaluated_at = ops.now_version()
    since = datetime.now(UTC) - timedelta(days=WINDOW_DAYS)
    values: dict[tuple[int, str], dict[str, float | None]] = {}
    project_ids = sorted({b[2] for b in budgets})
    if project_ids:
        result = client.query(
            load_query("pipelines/budget_metrics"), parameters={"project_ids": project_ids, "since": since}
        )
        for row in result.named_results():
            values[(int(row["project_id"]), str(row["scope"]))] = row
    rows, over = [], []
    for budget_id, org_id, project_id, metric, scope, value in budgets:
        current = (values.get((project_id, scope)) or {}).get(metric)
        current = None if current is None or current != current else float(current)  # NaN = no data
        ok = passes(current, value)
        rows.append(
            [org_id, project_id, budget_id, metric, scope, value, current, int(ok), WINDOW_DAYS, evaluated_at]
        )
        if not ok:
            over.append(f"budget {budget_id} ({metric} on {scope}): {current:.1f} > {value:g}")
    if rows:
        client.insert("budget_status", rows, column_names=BUDGET_COLUMNS)
    # Budgets deleted from the control store disappear from the mart.
    client.command(
        "DELETE FROM budget_status WHERE NOT has({ids:Array(UInt64)}, budget_id)",
        parameters={"ids": [b[0] for b in budgets]},
    )
    for line in over:
        context.log.warning(line)
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(len(rows)),
            "over_budget": dg.MetadataValue.int(len(over)),
        }
    )


@dg.asset_check(
    asset=budget_status,
    description="Fails when any budget is over; the metadata lists every budget with its value and status.",
)
def budgets_within_limits(warehouse: ClickHouseResource) -> dg.AssetCheckResult:
    rows = (
        warehouse.get_client()
        .query(
            "SELECT budget_id, metric, scope, budget_value, current_value, passed FROM budget_status FINAL ORDER BY budget_id"
        )
        .result_rows
    )
    metadata: dict[str, dg.RawMetadataValue] = {
        f"budget {bid} {metric} {scope}": ("pass" if ok else "FAIL") + f": {current} / {value:g}"
        for bid, metric, scope, value, current, ok in rows
    }
    failing = sum(1 for row in rows if not row[5])
    metadata["over_budget"] = failing
    return dg.AssetCheckResult(passed=failing == 0, metadata=metadata, severity=dg.AssetCheckSeverity.ERROR)


def budget_check(budget: BudgetRow) -> dg.AssetChecksDefinition:
    """The check of one budget (``budget_<id>``): fails when the budget's evaluation in this run is over.

    Built from the budgets the control store holds when the definitions load (see
    ``pipelines.definitions.current_definitions``); ``budgets_within_limits`` covers every budget regardless.
    """
    unit = f" {budget.unit}" if budget.unit else ""

    @dg.asset_check(
        asset=budget_status,
        name=f"budget_{budget.id}",
        description=f"{budget.project}: {budget.metric} on {budget.scope} stays <= {budget.value:g}{unit}",
    )
    def _check(warehouse: ClickHouseResource) -> dg.AssetCheckResult:
        rows = (
            warehouse.get_client()
            .query(
                "SELECT current_value, passed, evaluated_at FROM budget_status FINAL WHERE budget_id = {id:UInt64}",
                parameters={"id": budget.id},
            )
            .result_rows
        )
        if not rows:  # deleted since the definitions loaded: nothing to judge
            return dg.AssetCheckResult(
                passed=True,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"status": "budget no longer exists"},
            )
        current, ok, evaluated_at = rows[0]
        return dg.AssetCheckResult(
            passed=bool(ok),
            severity=dg.AssetCheckSeverity.ERROR,
            metadata={
                "budget": budget.value,
                "current": dg.MetadataValue.float(float(current)) if current is not None else "no data",
                "evaluated_at": evaluated_at.isoformat(),
            },
        )

    return _check


@dg.asset(
    group_name="performance",
    deps=["page_metrics", "resource_breakdown", "api_endpoint_metrics"],
    kinds={"clickhouse"},
)
def recommendations(context: AssetExecutionContext, warehouse: ClickHouseResource) -> dg.MaterializeResult:
    """Rules over the last 7 days of the performance marts, each with its evidence figures and page:
    large JavaScript (> 300 KB per view), render-blocking CSS (impact High/Medium), slow TTFB (p75 > 800 ms),
    oversized images (> 200 KB), poorly compressed images (BMP/TIFF, PNG > 100 KB), slow API endpoints
    (p95 > 1 s) and failing ones (> 5 % errors over >= 20 calls). Table `recommendations`: the latest run only.
    """
    client = warehouse.get_client()
    version = ops.now_version()
    since_day: date = (datetime.now(UTC) - timedelta(days=WINDOW_DAYS)).date()
    ops.run_insert(client, "recommendations", {"since_day": since_day, "materialized_at": version})
    client.command(
        "DELETE FROM recommendations WHERE materialized_at < {v:DateTime64(6, 'UTC')}",
        parameters={"v": version},
    )
    written = ops.rows_written(client, "recommendations", "materialized_at", version)
    context.log.info(f"{written} recommendations")
    return dg.MaterializeResult(metadata={"row_count": dg.MetadataValue.int(written)})
