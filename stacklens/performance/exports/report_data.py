"""Everything the PDF report of a project shows, read once: the views of the performance pages for the
filters (the same ``views.build`` the pages and the API use) and the project's budgets with their status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy.orm import Session

from stacklens.control.budgets import list_budgets
from stacklens.control.models import Project
from stacklens.performance import views
from stacklens.performance.filters import PerfFilters

REPORT_VIEWS = ("overview", "pages", "resources", "endpoints", "trends", "releases", "recommendations")
LATEST_STATUS = (
    "SELECT budget_id, argMax(current_value, evaluated_at), argMax(passed, evaluated_at), max(evaluated_at)"
    " FROM budget_status WHERE org_id = {org:UInt64} AND project_id = {project:UInt64}"
    " AND budget_id IN {ids:Array(UInt64)} GROUP BY budget_id"
)


@dataclass(frozen=True)
class ReportData:
    project: str
    project_slug: str
    filters: PerfFilters
    generated_at: datetime
    views: dict[str, dict[str, Any]]
    budgets: list[dict[str, Any]] = field(default_factory=list)


def budget_rows(session: Session, client: Client, project: Project) -> list[dict[str, Any]]:
    """The project's budgets with their latest evaluation: the one seam between the report and the budgets'
    status (today the ``budget_status`` mart; a budget it has not evaluated, or evaluated without data,
    says so instead of passing)."""
    budgets = list_budgets(session, project)
    latest: dict[int, tuple[Any, Any, Any]] = {}
    if budgets:
        result = client.query(
            LATEST_STATUS,
            parameters={"org": project.org_id, "project": project.id, "ids": [b.id for b in budgets]},
        )
        latest = {int(row[0]): (row[1], row[2], row[3]) for row in result.result_rows}
    rows = []
    for budget in budgets:
        current, passed, evaluated_at = latest.get(budget.id, (None, None, None))
        if evaluated_at is None:
            status = "not evaluated yet"
        elif current is None or current != current:  # NULL or NaN: no samples in the window
            status, current = "no data", None
        else:
            status = "pass" if passed else "fail"
        rows.append(
            {
                "metric": budget.metric,
                "description": budget.description,
                "scope": budget.scope,
                "budget": budget.value,
                "unit": budget.unit,
                "current": None if current is None else float(current),
                "status": status,
                "evaluated_at": evaluated_at,
            }
        )
    return rows


def report_data(
    session: Session, client: Client, project: Project, filters: PerfFilters, now: datetime | None = None
) -> ReportData:
    """Read every section of the report for ``filters`` (organization-scoped like every view)."""
    built = {name: views.build(name, client, project.org_id, project.id, filters) for name in REPORT_VIEWS}
    return ReportData(
        project=project.name,
        project_slug=project.slug,
        filters=filters,
        generated_at=(now or datetime.now(UTC)).astimezone(UTC),
        views=built,
        budgets=budget_rows(session, client, project),
    )
