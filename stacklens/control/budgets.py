"""Budgets in the control store: list, set (create or change), delete — shared by the API, the CLI and the
`budget_status` asset. Every call is scoped to one project (and so to its organization); validation is
:func:`stacklens.performance.budget_rules.validate_budget`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import Budget, Project, iso_utc
from stacklens.performance.budget_eval import BudgetSpec
from stacklens.performance.budget_rules import (
    BUDGET_METRICS,
    MIN_SAMPLES,
    WINDOW_DAYS,
    BudgetDefinition,
    DuplicateBudget,
    validate_budget,
)


@dataclass(frozen=True)
class BudgetRow:
    id: int
    org_id: int
    project_id: int
    project: str
    metric: str
    scope: str
    value: float
    unit: str
    description: str
    statistic: str
    window_days: int
    min_samples: int
    created_at: str
    last_error: str = ""  # the last scheduled evaluation raised (see stacklens.isolation)

    def spec(self) -> BudgetSpec:
        """What :mod:`stacklens.performance.budget_eval` judges."""
        return BudgetSpec(
            self.id,
            self.project_id,
            self.metric,
            self.statistic,
            self.scope,
            self.value,
            self.window_days,
            self.min_samples,
        )


def as_row(budget: Budget, project: Project) -> BudgetRow:
    description, unit = BUDGET_METRICS.get(budget.metric, ("", ""))
    return BudgetRow(
        id=budget.id,
        org_id=budget.org_id,
        project_id=budget.project_id,
        project=project.slug,
        metric=budget.metric,
        scope=budget.scope or "*",
        value=float(budget.value),
        unit=unit,
        description=description,
        statistic=budget.statistic or "p75",
        window_days=int(budget.window_days or WINDOW_DAYS),
        min_samples=int(budget.min_samples or MIN_SAMPLES),
        created_at=iso_utc(budget.created_at),
        last_error=budget.last_error or "",
    )


def list_budgets(session: Session, project: Project) -> list[BudgetRow]:
    budgets = session.scalars(
        select(Budget).where(Budget.project_id == project.id).order_by(Budget.metric, Budget.scope, Budget.id)
    ).all()
    return [as_row(b, project) for b in budgets]


def find(session: Session, project: Project, metric: str, scope: str) -> Budget | None:
    return session.scalar(
        select(Budget).where(Budget.project_id == project.id, Budget.metric == metric, Budget.scope == scope)
    )


def _apply(budget: Budget, d: BudgetDefinition) -> None:
    budget.metric, budget.scope, budget.value = d.metric, d.scope, d.value
    budget.statistic, budget.window_days, budget.min_samples = d.statistic, d.window_days, d.min_samples
    budget.retry_at = None  # a changed budget is evaluated on the next run, even while a failure backs off


def add_budget(session: Session, project: Project, definition: BudgetDefinition) -> BudgetRow:
    """A new budget from a validated definition; :class:`DuplicateBudget` when the metric has one there."""
    if find(session, project, definition.metric, definition.scope) is not None:
        raise DuplicateBudget(
            f"{definition.metric} on {definition.scope} already has a budget; change it instead", "metric"
        )
    budget = Budget(org_id=project.org_id, project_id=project.id)
    _apply(budget, definition)
    session.add(budget)
    session.flush()
    return as_row(budget, project)


def create_budget(
    session: Session,
    project: Project,
    metric: str,
    scope: str,
    value: float,
    statistic: str | None = None,
    window_days: object = WINDOW_DAYS,
    min_samples: object = MIN_SAMPLES,
    pages_seen: Collection[str] | None = None,
) -> BudgetRow:
    """A new budget; :class:`BudgetError` when invalid or when the metric already has one on that scope."""
    definition = validate_budget(metric, scope, value, statistic, window_days, min_samples, pages_seen)
    return add_budget(session, project, definition)


def set_budget(
    session: Session,
    project: Project,
    metric: str,
    scope: str,
    value: float,
    statistic: str | None = None,
    window_days: object = None,
    min_samples: object = None,
    pages_seen: Collection[str] | None = None,
) -> tuple[BudgetRow, bool]:
    """Create the budget of ``metric`` on ``scope`` or change it (what is not given stays); also whether it
    was created."""
    cleaned = validate_budget(metric, scope, value, statistic, WINDOW_DAYS, MIN_SAMPLES, pages_seen)
    budget = find(session, project, cleaned.metric, cleaned.scope)
    definition = validate_budget(
        cleaned.metric,
        cleaned.scope,
        value,
        statistic or (budget.statistic if budget else None),
        window_days if window_days not in (None, "") else (budget.window_days if budget else WINDOW_DAYS),
        min_samples if min_samples not in (None, "") else (budget.min_samples if budget else MIN_SAMPLES),
    )
    if budget is None:
        return add_budget(session, project, definition), True
    _apply(budget, definition)
    session.flush()
    return as_row(budget, project), False


def budget_in_org(session: Session, budget_id: int, org_id: int) -> tuple[Budget, Project] | None:
    """The budget and its project when it belongs to ``org_id``; another organization's is ``None``."""
    row = session.execute(
        select(Budget, Project)
        .join(Project, Project.id == Budget.project_id)
        .where(Budget.id == budget_id, Budget.org_id == org_id, Project.org_id == org_id)
    ).first()
    return (row[0], row[1]) if row else None


def update_budget(
    session: Session,
    budget: Budget,
    project: Project,
    metric: str | None,
    scope: str | None,
    value: float,
    statistic: str | None = None,
    window_days: object = None,
    min_samples: object = None,
    pages_seen: Collection[str] | None = None,
) -> BudgetRow:
    """Change a budget; fields not given keep their value (a new metric takes its own default statistic)."""
    new_metric = metric or budget.metric
    keep_statistic = budget.statistic if new_metric == budget.metric else None
    definition = validate_budget(
        new_metric,
        scope or budget.scope,
        value,
        statistic or keep_statistic,
        window_days if window_days not in (None, "") else budget.window_days,
        min_samples if min_samples not in (None, "") else budget.min_samples,
        pages_seen,
    )
    other = find(session, project, definition.metric, definition.scope)
    if other is not None and other.id != budget.id:
        raise DuplicateBudget(
            f"{definition.metric} on {definition.scope} already has another budget ({other.id})", "metric"
        )
    _apply(budget, definition)
    session.flush()
    return as_row(budget, project)


def delete_budget(session: Session, project: Project, metric: str, scope: str) -> bool:
    """Delete the budget of ``metric`` on ``scope``; whether there was one."""
    budget = find(session, project, (metric or "").strip(), (scope or "*").strip() or "*")
    if budget is None:
        return False
    session.delete(budget)
    return True


def import_budgets(
    session: Session, project: Project, definitions: list[BudgetDefinition]
) -> tuple[list[BudgetRow], int]:
    """Create or change the budget of each definition (an existing one keeps its statistic, window and
    minimum samples; only the value changes); the rows and how many were created. The caller's transaction
    makes it all-or-nothing."""
    rows, created = [], 0
    for definition in definitions:
        budget = find(session, project, definition.metric, definition.scope)
        if budget is None:
            rows.append(add_budget(session, project, definition))
            created += 1
        else:
            budget.value = definition.value
            session.flush()
            rows.append(as_row(budget, project))
    return rows, created
