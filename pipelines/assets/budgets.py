"""Budgets domain: each budget's current value and pass/fail; recommendations over the performance marts."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

from datetime import UTC, date, datetime, timedelta

import dagster as dg
from dagster import AssetExecutionContext
from sqlalchemy import select

from pipelines import warehouse_ops as ops
from pipelines.assets.common import RAW_SPANS, RAW_TRANSACTIONS
from pipelines.resources import ClickHouseResource, ControlStoreResource
from stacklens.performance.budget_rules import WINDOW_DAYS, passes
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
    from stacklens.control.models import Budget

    with control_store.session() as session:
        rows = session.execute(
            select(Budget.id, Budget.org_id, Budget.project_id, Budget.metric, Budget.scope, Budget.value)
        ).all()
    return [(int(i), int(o), int(p), str(m), str(s or "*"), float(v)) for i, o, p, m, s, v in rows]


AGGREGATE_CHECK = "budgets_within_limits"
DELETED_BUDGETS = "DELETE FROM budget_status WHERE NOT has({ids:Array(UInt64)}, budget_id)"
# Recommendations of earlier runs that this run did not make again (under FINAL the others are replaced).
STALE_RECOMMENDATIONS = (
    "SELECT DISTINCT project_id, toString(rule), page, subject FROM recommendations"
    " WHERE materialized_at < {v:DateTime64(6, 'UTC')} AND (project_id, rule, page, subject) NOT IN"
    " (SELECT project_id, rule, page, subject FROM recommendations WHERE materialized_at = {v:DateTime64(6, 'UTC')})"
)


def _aggregate_check(rows: list[list]) -> dg.AssetCheckResult:
    """Fails when any budget evaluated by this run is over; its metadata names every budget with its value
    and status, and counts those over (the per-budget verdicts are the mart's rows, not separate checks, so
    the code location does not change when budgets are added or deleted)."""
    metadata: dict[str, dg.RawMetadataValue] = {
        f"budget {r[2]} {r[3]} {r[4]}": ("pass" if r[7] else "FAIL") + f": {r[6]} / {r[5]:g}" for r in rows
    }
    failing = sum(1 for r in rows if not r[7])
    metadata["budgets"] = len(rows)
    metadata["over_budget"] = failing
    return dg.AssetCheckResult(
        check_name=AGGREGATE_CHECK,
        passed=failing == 0,
        metadata=metadata,
        severity=dg.AssetCheckSeverity.ERROR,
    )


@dg.asset(
    group_name="budgets",
    deps=[RAW_TRANSACTIONS, RAW_SPANS],
    kinds={"clickhouse"},
    check_specs=[
        dg.AssetCheckSpec(
            AGGREGATE_CHECK,
            asset="budget_status",
            description="Fails when any budget is over; the metadata lists every budget with its value and status.",
        )
    ],
)
def budget_status(
    context: AssetExecutionContext, warehouse: ClickHouseResource, control_store: ControlStoreResource
) -> dg.MaterializeResult:
    """One row per performance budget (kept in the control store, set through the API and the CLI): metric,
    scope (a page route or * for the project), budget value, current value over the last 7 days and
    pass/fail.

    Current values: load_time_ms, ttfb_ms, lcp_ms, inp_ms, cls = p75 over page loads; js_bytes = JavaScript
    bytes per page view; api_p95_ms = p95 of API calls. No data counts as passing. Table `budget_status`.
    The asset check `budgets_within_limits` fails when any budget is over; each budget's verdict is its row.
    """
    return _evaluate_budgets(context, warehouse, control_store)


def _evaluate_budgets(
    context: AssetExecutionContext,
    warehouse: ClickHouseResource,
    control_store: ControlStoreResource,
) -> dg.MaterializeResult:
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
    # Budgets deleted from the control store disappear from the mart. A DELETE is a mutation over every part
    # even when it matches nothing, so it runs only when there is something to remove.
    ids = {"ids": [b[0] for b in budgets]}
    if client.query(DELETED_BUDGETS.replace("DELETE", "SELECT count()"), parameters=ids).result_rows[0][0]:
        client.command(warehouse.in_place(DELETED_BUDGETS), parameters=ids)
    for line in over:
        context.log.warning(line)
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(len(rows)),
            "over_budget": dg.MetadataValue.int(len(over)),
        },
        check_results=[_aggregate_check(rows)],
    )


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
    # Only the recommendations that no longer hold are deleted (a DELETE is a mutation over every part, even
    # when it matches nothing): the table keeps the latest run only.
    stale = [tuple(r) for r in client.query(STALE_RECOMMENDATIONS, parameters={"v": version}).result_rows]
    if stale:
        client.command(
            warehouse.in_place(
                "DELETE FROM recommendations WHERE materialized_at < {v:DateTime64(6, 'UTC')}"
                " AND (project_id, rule, page, subject) IN {keys:Array(Tuple(UInt64, String, String, String))}"
            ),
            parameters={"v": version, "keys": stale},
        )
    written = ops.rows_written(client, "recommendations", "materialized_at", version)
    return dg.MaterializeResult(metadata={"row_count": dg.MetadataValue.int(written)})
