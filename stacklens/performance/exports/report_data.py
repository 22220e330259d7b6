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
from stacklens.performance.budget_status import with_status
from stacklens.performance.filters import PerfFilters

REPORT_VIEWS = ("overview", "pages", "resources", "endpoints", "trends", "releases", "recommendations")


@dataclass(frozen=True)
class ReportData:
    project: str
    project_slug: str
    filters: PerfFilters
    generated_at: datetime
    views: dict[str, dict[str, Any]]
    budgets: list[dict[str, Any]] = field(default_factory=list)


def budget_rows(
    session: Session, client: Client, project: Project, now: datetime | None = None
) -> list[dict[str, Any]]:
    """The project's budgets with their status (pass / fail / insufficient data), current value and samples:
    the same evaluation the budgets page, its API and the CLI show (:func:`with_status`)."""
    return [
        {
            "metric": row["metric"],
            "description": row["description"],
            "statistic": row["statistic"],
            "scope": row["scope"],
            "budget": row["value"],
            "unit": row["unit"],
            "current": row["current_value"],
            "samples": row["samples"],
            "min_samples": row["min_samples"],
            "status": str(row["status"]).replace("_", " "),
            "evaluated_at": row["evaluated_at"],
        }
        for row in with_status(client, list_budgets(session, project), now)
    ]


def report_data(
    session: Session, client: Client, project: Project, filters: PerfFilters, now: datetime | None = None
) -> ReportData:
    """Read every section of the report for ``filters`` (organization-scoped like every view)."""
    built = {name: views.build(name, client, project.org_id, project.id, filters) for name in REPORT_VIEWS}
    generated_at = (now or datetime.now(UTC)).astimezone(UTC)
    return ReportData(
        project=project.name,
        project_slug=project.slug,
        filters=filters,
        generated_at=generated_at,
        views=built,
        budgets=budget_rows(session, client, project, generated_at),
    )
