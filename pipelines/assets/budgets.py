"""Budgets domain: each budget's current value and pass/fail, over the performance states the views read."""

# No `from __future__ import annotations` here: Dagster reads the decorated functions' annotations
# at definition time (context and resource parameters) and does not resolve string annotations.

from datetime import UTC, datetime
from typing import Any

import dagster as dg
from dagster import AssetExecutionContext
from sqlalchemy import select

from pipelines import warehouse_ops as ops
from pipelines.assets.common import RAW_TRANSACTIONS, AssetResult
from pipelines.resources import ClickHouseResource, ControlStoreResource
from stacklens.isolation import retry_at
from stacklens.performance.budget_eval import ERROR, FAIL, PASS, BudgetSpec, Evaluation, evaluate
from stacklens.performance.budget_rules import WINDOW_DAYS
from stacklens.warehouse.queries import load_query

BUDGET_COLUMNS = [
    "org_id",
    "project_id",
    "budget_id",
    "metric",
    "scope",
    "budget_value",
    "statistic",
    "current_value",
    "samples",
    "passed",
    "status",
    "failing_since",
    "window_days",
    "min_samples",
    "evaluated_at",
]


def _budgets(control_store: ControlStoreResource) -> list[tuple[int, BudgetSpec, datetime | None]]:
    """(organization, definition, retry time after a failed evaluation) of every budget."""
    from stacklens.control.models import Budget

    with control_store.session() as session:
        rows = session.scalars(select(Budget).order_by(Budget.id)).all()
        return [
            (
                int(b.org_id),
                BudgetSpec(
                    int(b.id),
                    int(b.project_id),
                    str(b.metric),
                    str(b.statistic or "p75"),
                    str(b.scope or "*"),
                    float(b.value),
                    int(b.window_days or WINDOW_DAYS),
                    int(b.min_samples or 20),
                ),
                b.retry_at,
            )
            for b in rows
        ]


def _record_outcomes(
    control_store: ControlStoreResource, outcomes: dict[int, Evaluation], now: datetime
) -> None:
    """Each budget's failure on the budget (the budgets page shows it) with its next attempt, or, after a
    success, the failure cleared."""
    from stacklens.control.models import Budget

    with control_store.session() as session:
        for budget in session.scalars(select(Budget).where(Budget.id.in_(list(outcomes)))):
            result = outcomes[budget.id]
            if result.status == ERROR:
                budget.last_error = result.error
                budget.failures = (budget.failures or 0) + 1
                budget.retry_at = retry_at(budget.failures, now)
            elif budget.failures or budget.last_error:
                budget.last_error, budget.failures, budget.retry_at = "", 0, None


# A data-quality check: whether every budget could be evaluated. A budget over its value is a business state
# (its row says `fail`, the budgets page and the alert rules act on it), not bad data: reporting it as a
# failed check put a red mark on the asset for a healthy pipeline (issue #47).
AGGREGATE_CHECK = "budgets_evaluated"


def _aggregate_check(rows: list[dict[str, Any]]) -> dg.AssetCheckResult:
    """Fails when a budget could not be evaluated by this run (status `error`); its metadata names every
    budget with its value and status, and counts those over, those without enough data and those not
    evaluated (the per-budget verdicts are the mart's rows, not separate checks, so the code location does
    not change when budgets are added or deleted). Budgets over their value pass the check: they are the
    mart's findings."""
    metadata: dict[str, dg.RawMetadataValue] = {
        f"budget {r['budget_id']} {r['metric']} {r['scope']}": f"{r['status']}: {r['current_value']}"
        f" / {r['budget_value']:g} ({r['samples']} samples)"
        for r in rows
    }
    not_evaluated = sum(1 for r in rows if r["status"] == ERROR)
    metadata["budgets"] = len(rows)
    metadata["over_budget"] = sum(1 for r in rows if r["status"] == FAIL)
    metadata["insufficient_data"] = sum(1 for r in rows if r["status"] not in (PASS, FAIL, ERROR))
    metadata["not_evaluated"] = not_evaluated
    return dg.AssetCheckResult(
        check_name=AGGREGATE_CHECK,
        passed=not_evaluated == 0,
        metadata=metadata,
        severity=dg.AssetCheckSeverity.ERROR,
    )


@dg.asset(
    group_name="budgets",
    # What budget_eval reads: the page-load and API-call states the views read, the raw transactions (failed
    # share).
    deps=["pageload_periods", "endpoint_call_periods", RAW_TRANSACTIONS],
    kinds={"clickhouse"},
    check_specs=[
        dg.AssetCheckSpec(
            AGGREGATE_CHECK,
            asset="budget_status",
            description="Fails when a budget could not be evaluated; the metadata lists every budget with its "
            "value and status (over budget is a finding of the mart, not a failed check).",
        )
    ],
)
def budget_status(
    context: AssetExecutionContext, warehouse: ClickHouseResource, control_store: ControlStoreResource
) -> AssetResult:
    """One row per performance budget (kept in the control store, set through the dashboard, the API and
    the CLI): metric, statistic, scope (all pages, a route or a pattern), window, minimum samples, budget,
    current value, sample count and status — pass, fail, or insufficient_data when the window holds fewer
    samples than the minimum (no data is never a pass) — and since when a failing budget fails. A budget whose
    evaluation raises gets the status `error` (the reason is on the budget, shown on the budgets page) and is
    evaluated again after a backoff; the other budgets, of every organization, are judged as usual.

    Every budget reads what the performance views read — the page-load states `pageload_periods` (timings, web
    vitals, bytes per page view), the endpoint states `endpoint_call_periods` (API response time), the raw
    transactions for the failed share — over the same window a view shows (whole minutes), as the alert rules
    do; stacklens.performance.budget_eval is the one evaluation, the same the page and the API use. Table
    `budget_status`, read by the budgets page, the budgets API and the CLI
    (stacklens/performance/budget_status.py). The asset check `budgets_evaluated` fails when a budget could
    not be evaluated; a budget over its value is a verdict (its row, and `over_budget` in the check's
    metadata), not a failed check."""
    return _evaluate_budgets(context, warehouse, control_store)


def _evaluate_budgets(
    context: AssetExecutionContext,
    warehouse: ClickHouseResource,
    control_store: ControlStoreResource,
) -> AssetResult:
    client = warehouse.get_client()
    budgets = _budgets(control_store)
    evaluated_at = ops.now_version()
    now = evaluated_at  # the status's time: the budgets page's chart ends on the evaluation made at it
    # A budget whose evaluation failed waits for its retry (its last row, status error, stays the mart's).
    due = [(org_id, spec) for org_id, spec, retry in budgets if retry is None or _utc(retry) <= now]
    results = evaluate(client, [spec for _, spec in due], now)
    rows: list[dict[str, Any]] = []
    over, failed = [], []
    for (org_id, spec), result in zip(due, results, strict=True):
        rows.append(
            {
                "org_id": org_id,
                "project_id": spec.project_id,
                "budget_id": spec.id,
                "metric": spec.metric,
                "scope": spec.scope,
                "budget_value": spec.value,
                "statistic": spec.statistic,
                "current_value": result.value,
                "samples": result.samples,
                "passed": int(result.status == PASS),
                "status": result.status,
                "failing_since": result.failing_since,
                "window_days": spec.window_days,
                "min_samples": spec.min_samples,
                "evaluated_at": evaluated_at,
            }
        )
        if result.status == FAIL:
            over.append(
                f"budget {spec.id} ({spec.metric} on {spec.scope}): {result.value:.1f} > {spec.value:g}"
            )
        elif result.status == ERROR:
            failed.append(f"budget {spec.id} ({spec.metric} on {spec.scope}) not evaluated: {result.error}")
    if rows:
        client.insert(
            "budget_status", [[r[c] for c in BUDGET_COLUMNS] for r in rows], column_names=BUDGET_COLUMNS
        )
    _record_outcomes(control_store, {spec.id: r for (_, spec), r in zip(due, results, strict=True)}, now)
    # Budgets deleted from the control store disappear from the mart. A DELETE is a mutation over every part
    # even when it matches nothing, so it runs only when there is something to remove.
    ids = {"ids": [spec.id for _, spec, _ in budgets]}
    if client.query(load_query("pipelines/budget_status_stale"), parameters=ids).result_rows[0][0]:
        client.command(warehouse.in_place(load_query("pipelines/budget_status_stale_delete")), parameters=ids)
    for line in over:
        context.log.warning(line)
    for line in failed[:20]:
        context.log.warning(line)
    return dg.MaterializeResult(
        metadata={
            "row_count": dg.MetadataValue.int(len(rows)),
            "over_budget": dg.MetadataValue.int(len(over)),
            "not_evaluated": dg.MetadataValue.int(len(failed)),
            "waiting_to_retry": dg.MetadataValue.int(len(budgets) - len(due)),
        },
        check_results=[_aggregate_check(rows)],
    )


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value
