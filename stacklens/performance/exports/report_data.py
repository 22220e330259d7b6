"""Everything the PDF report of a project shows, read once: the views of the performance pages for the
filters (the same :mod:`~stacklens.performance.view_data` the pages and the API use) and the project's budgets
with their status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypedDict

from clickhouse_connect.driver.client import Client
from sqlalchemy.orm import Session

from stacklens.control.budgets import list_budgets
from stacklens.control.models import Project
from stacklens.performance import view_data
from stacklens.performance.budget_status import with_status
from stacklens.performance.inp.reads import InpView, inp_view
from stacklens.view_filters import ViewFilters


class ReportViews(TypedDict):
    """The views the report shows, each as its page shows it (default sort, recommendations of old releases
    left out)."""

    overview: view_data.OverviewData
    pages: view_data.PagesData
    resources: view_data.ResourcesData
    endpoints: view_data.EndpointsData
    trends: view_data.TrendsData
    releases: view_data.ReleasesData
    recommendations: view_data.RecommendationsData


class ReportBudgetRow(TypedDict):
    """A budget as the report's summary lists it: its metric, statistic and scope, the budget and the current
    value (in the metric's unit), samples against the minimum, status and when it was evaluated."""

    metric: str
    description: str
    statistic: str
    scope: str
    budget: float
    unit: str
    current: float | None
    samples: int
    min_samples: int
    status: str
    evaluated_at: datetime | None


@dataclass(frozen=True)
class ReportData:
    project: str
    project_slug: str
    filters: ViewFilters
    generated_at: datetime
    views: ReportViews
    budgets: list[ReportBudgetRow] = field(default_factory=list)
    inp: InpView | None = None  # the INP causes section (docs/performance.md, "INP causes")


def budget_rows(
    session: Session, client: Client, project: Project, now: datetime | None = None
) -> list[ReportBudgetRow]:
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
    session: Session, client: Client, project: Project, filters: ViewFilters, now: datetime | None = None
) -> ReportData:
    """Read every section of the report for ``filters`` (organization-scoped like every view)."""
    org_id, project_id = project.org_id, project.id
    built: ReportViews = {
        "overview": view_data.overview(client, org_id, project_id, filters),
        "pages": view_data.pages(client, org_id, project_id, filters),
        "resources": view_data.resources(client, org_id, project_id, filters),
        "endpoints": view_data.endpoints(client, org_id, project_id, filters),
        "trends": view_data.trends(client, org_id, project_id, filters),
        "releases": view_data.releases(client, org_id, project_id, filters),
        "recommendations": view_data.recommendations(client, org_id, project_id, filters),
    }
    generated_at = (now or datetime.now(UTC)).astimezone(UTC)
    return ReportData(
        project=project.name,
        project_slug=project.slug,
        filters=filters,
        generated_at=generated_at,
        views=built,
        budgets=budget_rows(session, client, project, generated_at),
        inp=inp_view(client, org_id, project_id, filters),
    )
