"""`GET /api/auth/verify`: is this API key valid, and whose is it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api.deps import ApiAuth
from api.errors import INVALID_API_KEY
from stacklens.control.models import iso_utc

router = APIRouter(prefix="/api/auth", tags=["auth"])


class ErrorBody(BaseModel):
    error: str = Field(examples=[INVALID_API_KEY])
    detail: str = ""


class VerifyResponse(BaseModel):
    valid: bool = Field(description="Whether the presented API key is valid (always true on a 200).")
    organization: str = Field(description="Name of the organization that owns the key.")
    created_at: str = Field(
        description="Creation time of the key, ISO 8601 UTC.", examples=["2026-11-21T19:22:03.123Z"]
    )


AUTH_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {
        "model": ErrorBody,
        "description": "`Invalid API Key`: missing, unknown, regenerated, whitespace, app key",
    },
    429: {
        "model": ErrorBody,
        "description": "`Rate Limited`: the key's requests per second; see `Retry-After`",
    },
}


@router.get("/verify", response_model=VerifyResponse, responses=AUTH_ERRORS)
def verify(identity: ApiAuth) -> VerifyResponse:
    """Confirm the bearer API key and name the organization that owns it."""
    return VerifyResponse(valid=True, organization=identity.org_name, created_at=iso_utc(identity.created_at))
