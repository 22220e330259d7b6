"""`GET/PUT /api/organization/settings`: settings of the key's organization — who may publish public share
links (issue pages, events, dashboards)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api.deps import ApiAuth, DbSession
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.share_publishers import PUBLISHERS, set_share_links_by, share_links_by

router = APIRouter(prefix="/api", tags=["organization"])

ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": f"`share_links_by` other than {' or '.join(PUBLISHERS)}"},
}
_WHO = (
    "Who may publish public share links: `owners` (the default) or `members` (every member). A person's "
    "links stop working when they leave the organization or this setting no longer lets them publish; the "
    "organization's API key publishes as an owner."
)


class OrganizationSettingsIn(BaseModel):
    share_links_by: str = Field(description=_WHO)


class OrganizationSettings(BaseModel):
    share_links_by: str = Field(description=_WHO)


@router.get("/organization/settings", response_model=OrganizationSettings, responses=ERRORS)
def get_settings(identity: ApiAuth, session: DbSession) -> OrganizationSettings:
    """The organization's settings."""
    return OrganizationSettings(share_links_by=share_links_by(session, identity.org_id))


@router.put("/organization/settings", response_model=OrganizationSettings, responses=ERRORS)
def put_settings(body: OrganizationSettingsIn, identity: ApiAuth, session: DbSession) -> OrganizationSettings:
    """Change the organization's settings (the API key speaks for the owners); recorded in the activity
    log."""
    return OrganizationSettings(
        share_links_by=set_share_links_by(session, identity.org_id, body.share_links_by)
    )
