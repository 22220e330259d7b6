"""`GET /api/activity`: the organization's activity log (key creation, regeneration, views, use), newest
first."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from api.deps import ApiAuth, DbSession
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.activity import MAX_PAGE, list_activity
from stacklens.control.activity_text import describe
from stacklens.control.models import iso_utc

router = APIRouter(prefix="/api", tags=["activity"])


class ActivityOut(BaseModel):
    id: str
    created_at: str = Field(description="When it happened; for a usage row, the last use in that hour.")
    action: str = Field(examples=["api_key.regenerated", "api_key.used", "app_key.created"])
    target_kind: str
    target_id: int | None
    actor_user_id: int | None
    detail: dict[str, Any] = Field(
        description="For `*.used`: hour, requests, events, last_ip, last_user_agent."
    )
    summary: str = Field(
        description="The entry as one sentence, times to the second (what the activity page shows).",
        examples=["Revealed the current API key …a1b2."],
    )


class ActivityPage(BaseModel):
    items: list[ActivityOut]
    next_cursor: str | None


@router.get("/activity", response_model=ActivityPage, responses={**AUTH_ERRORS, 400: {"model": ErrorBody}})
def activity(
    identity: ApiAuth,
    session: DbSession,
    api_key_only: bool = Query(
        default=False, description="Only API-key actions (creation, regeneration, views, use)."
    ),
    cursor: str | None = Query(
        default=None,
        max_length=512,
        pattern=r"^[A-Za-z0-9_=-]*$",
        description="`next_cursor` of the previous page.",
    ),
    limit: int = Query(default=50, ge=1, le=MAX_PAGE),
) -> ActivityPage:
    """One page of the activity log; use is aggregated per key per hour."""
    rows, next_cursor = list_activity(
        session, identity.org_id, api_key_only=api_key_only, cursor=cursor, limit=limit
    )
    return ActivityPage(
        items=[
            ActivityOut(
                id=r.id,
                created_at=iso_utc(r.created_at),
                action=r.action,
                target_kind=r.target_kind,
                target_id=r.target_id,
                actor_user_id=r.actor_user_id,
                detail=r.detail,
                summary=describe(r),
            )
            for r in rows
        ],
        next_cursor=next_cursor,
    )
