"""`GET/PUT /api/projects/{slug}/quota`: a project's own events-per-minute quota inside its organization's,
and its per-category limits (docs/architecture.md §5)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api.deps import ApiAuth, DbSession, OrgProject
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.project_quotas import LIMITED_CATEGORIES, project_quotas, set_project_quota

router = APIRouter(prefix="/api", tags=["projects"])

ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A limit out of 1..100,000,000, or an unknown category"},
    404: {"model": ErrorBody, "description": "No project with this slug in the key's organization"},
}


class QuotaIn(BaseModel):
    events_per_minute: int | None = Field(
        description="Items per minute the project may send over every category (null: only the "
        "organization's quota applies)."
    )
    categories: dict[str, int | None] | None = Field(
        default=None,
        description=f"Per-category limits per minute, by category ({', '.join(LIMITED_CATEGORIES)}); null "
        "for a category removes its limit. Omitted: the category limits stay as they are.",
    )


class QuotaOut(BaseModel):
    project: str = Field(description="The project's slug.")
    events_per_minute: int | None
    categories: dict[str, int] = Field(description="The per-category limits per minute.")


@router.get("/projects/{slug}/quota", response_model=QuotaOut, responses=ERRORS)
def get_quota(project: OrgProject, session: DbSession) -> QuotaOut:
    """The project's own quotas (inside the organization's)."""
    quota = project_quotas(session, [project.id]).get(project.id)
    return QuotaOut(
        project=project.slug,
        events_per_minute=quota.events_per_minute if quota else None,
        categories=dict(quota.categories) if quota else {},
    )


@router.put("/projects/{slug}/quota", response_model=QuotaOut, responses=ERRORS)
def put_quota(project: OrgProject, body: QuotaIn, identity: ApiAuth, session: DbSession) -> QuotaOut:
    """Set the project's events per minute (and, when given, its per-category limits); applies on the next
    request. Items over it are refused with 429 `Rate Limited` while the organization's other projects
    flow."""
    quota = set_project_quota(session, identity.org_id, project.id, body.events_per_minute, body.categories)
    return QuotaOut(
        project=project.slug, events_per_minute=quota.events_per_minute, categories=dict(quota.categories)
    )
