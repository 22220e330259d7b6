"""`GET/PUT /api/projects/{slug}/quota`: a project's own events-per-minute quota inside its organization's,
and its per-category limits (docs/architecture.md §5)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from api.deps import ApiAuth, AppSettings, DbSession, OrgProject
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.project_quotas import (
    LIMITED_CATEGORIES,
    ProjectQuota,
    project_quotas,
    set_project_quota,
)
from stacklens.feedback.attachment_files import stored_bytes
from stacklens.settings import Settings

router = APIRouter(prefix="/api", tags=["projects"])

ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {
        "model": ErrorBody,
        "description": "A limit out of 1..100,000,000, an unknown category, or attachment_bytes out of 0..2^50",
    },
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
    attachment_bytes: int | None = Field(
        default=None,
        description="Bytes of attachments the project keeps at most (0 to 2^50); an attachment past it is "
        "refused and counted in outcomes (rate_limited, attachment_quota). null: the installation's "
        "STACKLENS_ATTACHMENT_QUOTA_BYTES. Omitted: unchanged.",
    )


class QuotaOut(BaseModel):
    project: str = Field(description="The project's slug.")
    events_per_minute: int | None
    categories: dict[str, int] = Field(description="The per-category limits per minute.")
    attachment_bytes: int | None = Field(description="The project's own attachment quota (null: none).")
    attachment_bytes_applied: int = Field(
        description="The attachment quota that applies: the project's own, else the installation's."
    )
    attachment_bytes_stored: int = Field(description="The bytes of attachments the project keeps now.")


def _out(session: Session, settings: Settings, slug: str, quota: ProjectQuota) -> QuotaOut:
    return QuotaOut(
        project=slug,
        events_per_minute=quota.events_per_minute,
        categories=dict(quota.categories),
        attachment_bytes=quota.attachment_bytes,
        attachment_bytes_applied=quota.attachment_quota(settings),
        attachment_bytes_stored=stored_bytes(session, quota.project_id),
    )


@router.get("/projects/{slug}/quota", response_model=QuotaOut, responses=ERRORS)
def get_quota(project: OrgProject, session: DbSession, settings: AppSettings) -> QuotaOut:
    """The project's own quotas (inside the organization's) and its attachment quota."""
    quota = project_quotas(session, [project.id]).get(project.id) or ProjectQuota(project.id)
    return _out(session, settings, project.slug, quota)


@router.put("/projects/{slug}/quota", response_model=QuotaOut, responses=ERRORS)
def put_quota(
    project: OrgProject, body: QuotaIn, identity: ApiAuth, session: DbSession, settings: AppSettings
) -> QuotaOut:
    """Set the project's events per minute (and, when given, its per-category limits and its attachment
    quota); applies on the next request. Items over it are refused with 429 `Rate Limited` while the
    organization's other projects flow."""
    quota = set_project_quota(
        session,
        identity.org_id,
        project.id,
        body.events_per_minute,
        body.categories,
        attachment_bytes=body.attachment_bytes if "attachment_bytes" in body.model_fields_set else "keep",
    )
    return _out(session, settings, project.slug, quota)
