"""`GET /api/outcomes`: what became of the organization's items, per hour, project, category, outcome and
reason (docs/architecture.md §5)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field
from sqlalchemy import select

from api.deps import ApiAuth, AppSettings, DbSession, Warehouse
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.models import Project
from stacklens.control.projects import project_by_slug
from stacklens.outcomes.counting import CATEGORIES, OUTCOMES
from stacklens.outcomes.reads import RANGES, OutcomeQuery, outcome_rows

router = APIRouter(prefix="/api", tags=["outcomes"])


class OutcomeOut(BaseModel):
    hour: str = Field(description="Start of the UTC hour, ISO 8601.")
    project: str | None = Field(
        description="The project's slug; null for items whose app key named no project of the organization."
    )
    category: str = Field(description=", ".join(CATEGORIES))
    outcome: str = Field(description=", ".join(OUTCOMES))
    reason: str = Field(description="Why (empty for accepted items); an SDK's own reason for its discards.")
    quantity: int = Field(description="Items.")


class OutcomesAnswer(BaseModel):
    rows: list[OutcomeOut]


@router.get(
    "/outcomes",
    response_model=OutcomesAnswer,
    responses={**AUTH_ERRORS, 400: {"model": ErrorBody}, 404: {"model": ErrorBody}},
)
def outcomes(
    identity: ApiAuth,
    settings: AppSettings,
    session: DbSession,
    client: Warehouse,
    project: Annotated[str, Query(description="A project's slug (default: every project)")] = "",
    category: Annotated[str, Query(description=f"One of {', '.join(CATEGORIES)} (default: all)")] = "",
    range: Annotated[str, Query(description=f"{', '.join(RANGES)} (default 24h)")] = "24h",
) -> OutcomesAnswer:
    """Every item that reached an entrance, counted once: accepted, filtered, rate limited, invalid, too
    large, or dropped by the SDK itself (its client reports), by hour, project, category and reason."""
    project_id = project_by_slug(session, project, identity.org_id).id if project else 0
    query = select(Project.id, Project.slug).where(Project.org_id == identity.org_id)
    slugs = {int(row.id): str(row.slug) for row in session.execute(query)}
    rows = outcome_rows(settings, client, identity.org_id, OutcomeQuery(range, project_id, category), slugs)
    return OutcomesAnswer(
        rows=[
            OutcomeOut(
                hour=row.hour.isoformat().replace("+00:00", "Z"),
                project=row.project,
                category=row.category,
                outcome=row.outcome,
                reason=row.reason,
                quantity=row.quantity,
            )
            for row in rows
        ]
    )
