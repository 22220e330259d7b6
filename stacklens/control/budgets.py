"""Budgets in the control store: list, set (create or change), delete — shared by the API, the CLI and the
`budget_status` asset. Every call is scoped to one project (and so to its organization); validation is
:func:`stacklens.performance.budget_rules.validate_budget`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import Budget, Project, iso_utc
from stacklens.performance.budget_rules import BUDGET_METRICS, DuplicateBudget, validate_budget


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
    created_at: str


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
        created_at=iso_utc(budget.created_at),
    )


def list_budgets(session: Session, project: Project) -> list[BudgetRow]:
    budgets = session.scalars(
        select(Budget).where(Budget.project_id == project.id).order_by(Budget.metric, Budget.scope, Budget.id)
    ).all()
    return [as_row(b, project) for b in budgets]


def _find(session: Session, project: Project, metric: str, scope: str) -> Budget | None:
    return session.scalar(
        select(Budget).where(Budget.project_id == project.id, Budget.metric == metric, Budget.scope == scope)
    )


def create_budget(session: Session, project: Project, metric: str, scope: str, value: float) -> BudgetRow:
    """A new budget; :class:`BudgetError` when invalid or when the metric already has one on that scope."""
    metric, scope, value = validate_budget(metric, scope, value)
    if _find(session, project, metric, scope) is not None:
        raise DuplicateBudget(f"{metric} on {scope} already has a budget; change it instead")
    budget = Budget(org_id=project.org_id, project_id=project.id, metric=metric, scope=scope, value=value)
    session.add(budget)
    session.flush()
    return as_row(budget, project)


def set_budget(
    session: Session, project: Project, metric: str, scope: str, value: float
) -> tuple[BudgetRow, bool]:
    """Create the budget of ``metric`` on ``scope`` or change its value; also whether it was created."""
    metric, scope, value = validate_budget(metric, scope, value)
    budget = _find(session, project, metric, scope)
    if budget is None:
        return create_budget(session, project, metric, scope, value), True
    budget.value = value
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
    session: Session, budget: Budget, project: Project, metric: str | None, scope: str | None, value: float
) -> BudgetRow:
    metric, scope, value = validate_budget(metric or budget.metric, scope or budget.scope, value)
    other = _find(session, project, metric, scope)
    if other is not None and other.id != budget.id:
        raise DuplicateBudget(f"{metric} on {scope} already has another budget ({other.id})")
    budget.metric, budget.scope, budget.value = metric, scope, value
    session.flush()
    return as_row(budget, project)


def delete_budget(session: Session, project: Project, metric: str, scope: str) -> bool:
    """Delete the budget of ``metric`` on ``scope``; whether there was one."""
    budget = _find(session, project, (metric or "").strip(), (scope or "*").strip() or "*")
    if budget is None:
        return False
    session.delete(budget)
    return True
