"""`GET/PUT /api/me/notifications` (docs/issues.md): how "me" hears of issue news, per project and kind. With
an
API key, "me" is the member who created the key (a key created by the `stacklens` CLI has nobody: 403)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field
from sqlalchemy import select

from api.deps import ApiAuth, DbSession
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.models import ApiKey, Membership
from stacklens.issues.notifications import DEFAULTS, DIGEST_HOUR, KINDS, set_settings, settings_of

router = APIRouter(prefix="/api", tags=["teams"])
ERRORS = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A kind or mode cannot be used (the message names it)."},
    403: {"model": ErrorBody, "description": "The API key was created by nobody who is a member now."},
    404: {"model": ErrorBody, "description": "No such project in this organization."},
}
Mode = Literal["none", "immediate", "daily", "weekly"]


class NotificationSettings(BaseModel):
    projects: dict[str, dict[str, Mode]] = Field(
        description=f"Project slug → kind ({', '.join(KINDS)}) → mode: none, immediate, or daily (a digest at "
        f"{DIGEST_HOUR:02d}:00 UTC); `weekly` takes none or weekly (a summary on Mondays). A kind left out keeps "
        f"its mode (defaults: {DEFAULTS})."
    )


def _me(auth: ApiAuth, db: DbSession) -> int:
    key = db.get(ApiKey, auth.api_key_id)
    user_id = key.created_by_user_id if key is not None else None
    member = (
        db.scalar(select(Membership).where(Membership.org_id == auth.org_id, Membership.user_id == user_id))
        if user_id is not None
        else None
    )
    if member is None:
        raise ApiError(
            403, "Forbidden", "this API key was created by nobody who is a member now; no one is 'me'"
        )
    return member.user_id


@router.get("/me/notifications", response_model=NotificationSettings, responses=ERRORS)
def get_notifications(auth: ApiAuth, db: DbSession) -> NotificationSettings:
    return NotificationSettings.model_validate({"projects": settings_of(db, auth.org_id, _me(auth, db))})


@router.put("/me/notifications", response_model=NotificationSettings, responses=ERRORS)
def put_notifications(auth: ApiAuth, db: DbSession, body: NotificationSettings) -> NotificationSettings:
    """Change the modes given; answers every project's modes."""
    changed = set_settings(db, auth.org_id, _me(auth, db), {k: dict(v) for k, v in body.projects.items()})
    return NotificationSettings.model_validate({"projects": changed})
