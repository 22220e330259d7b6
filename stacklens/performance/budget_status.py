"""A project's budgets with their status, as the page, the API, the CLI and the downloads show them.

The `budget_status` mart holds each budget's latest evaluation (every 5 minutes); a budget the mart has not
judged yet, judged with another definition, or longer ago than :data:`FRESH` is evaluated here, with the
same code (:func:`stacklens.performance.budget_eval.evaluate`).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypedDict, cast

from stacklens.control.budgets import BudgetRow
from stacklens.performance.budget_eval import ERROR, Evaluation, evaluate, headroom
from stacklens.warehouse.queries import load_query

FRESH = timedelta(minutes=10)
# The columns of the page's table, of the CSV and of the JSON (the API adds nothing and drops nothing).
# A budget's verdict: over budget is "fail", a verdict, not an error; "error": it could not be evaluated.
Verdict = Literal["pass", "fail", "insufficient_data", "error"]


class BudgetStatusRow(TypedDict):
    """A budget with its verdict, as the API, the budgets page, the CLI, the weekly summary and the reports
    show it (the mart's evaluation when fresh, else one made now)."""

    id: int
    project: str
    metric: str
    description: str
    statistic: str
    scope: str
    value: float
    unit: str
    window_days: int
    min_samples: int
    current_value: float | None
    samples: int
    status: Verdict
    margin: (
        float | None
    )  # within budget by (budget_eval.headroom): negative when over it, or under it (uptime)
    failing_since: datetime | None
    evaluated_at: datetime
    created_at: str
    error: str  # status "error": why the budget could not be evaluated


COLUMNS = tuple(BudgetStatusRow.__annotations__)


def pages_seen(client: Any, project_id: int) -> list[str]:
    """The page routes the project has data for (a scoped budget must match one of them)."""
    rows = client.query(load_query("budgets/pages_seen"), parameters={"project": project_id}).result_rows
    return [str(r[0]) for r in rows]


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _from_mart(
    client: Any, project_id: int, rows: list[BudgetRow], now: datetime
) -> dict[int, tuple[Evaluation, datetime]]:
    if not rows:
        return {}
    found = client.query(
        load_query("budgets/latest_status"), parameters={"project": project_id, "ids": [r.id for r in rows]}
    ).result_rows
    by_id = {row.id: row for row in rows}
    out = {}
    for budget_id, fields, at in found:
        row = by_id.get(int(budget_id))
        metric, scope, value, statistic, window, min_samples, current, samples, status, since = fields
        at = _utc(at)
        # A budget whose scheduled evaluation failed keeps that verdict until the run tries it again
        # (with backoff): evaluating it here on every view would repeat the failure at the viewer's cost.
        failing = str(status) == ERROR and bool(row and row.last_error)
        if row is None or at is None or (now - at > FRESH and not failing):
            continue
        if (metric, scope, float(value), statistic, int(window), int(min_samples)) != (
            row.metric,
            row.scope,
            row.value,
            row.statistic,
            row.window_days,
            row.min_samples,
        ):
            continue  # changed since it was judged: judged again below
        current = None if current is None else float(current)
        margin = headroom(row.metric, current, row.value)
        error = row.last_error if str(status) == ERROR else ""
        out[row.id] = (Evaluation(current, int(samples), str(status), margin, _utc(since), error), at)
    return out


def with_status(client: Any, rows: list[BudgetRow], now: datetime | None = None) -> list[BudgetStatusRow]:
    """Every budget with its verdict (the mart's evaluation when fresh, else one made now)."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    known: dict[int, tuple[Evaluation, datetime]] = {}
    for project_id in sorted({r.project_id for r in rows}):
        known.update(_from_mart(client, project_id, [r for r in rows if r.project_id == project_id], now))
    missing = [r for r in rows if r.id not in known]
    for row, evaluation in zip(missing, evaluate(client, [r.spec() for r in missing], now), strict=True):
        known[row.id] = (evaluation, now)
    out: list[BudgetStatusRow] = []
    for row in rows:
        evaluation, at = known[row.id]
        fields = asdict(row)
        fields.update(
            current_value=evaluation.value,
            samples=evaluation.samples,
            status=evaluation.status,
            margin=evaluation.margin,
            failing_since=evaluation.failing_since,
            evaluated_at=at,
            error=evaluation.error,
        )
        out.append(cast(BudgetStatusRow, {k: fields[k] for k in COLUMNS}))
    return out
