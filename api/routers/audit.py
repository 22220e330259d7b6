"""`GET /api/audit?action=signin`: the organization's audit trail of sign-ins — every sign-in, refusal (with
its reason), role change and break-glass use — newest first; `?source=mcp`: the agents' tool calls
(docs/agents.md)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from api.deps import ApiAuth, DbSession
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.models import iso_utc
from stacklens.pagination import InvalidCursor
from stacklens.sso.audit import MAX_PAGE, list_audit

router = APIRouter(prefix="/api", tags=["audit"])


class AuditEntry(BaseModel):
    id: int
    created_at: str
    action: str = Field(
        examples=[
            "signin.sso",
            "signin.password",
            "signin.refused",
            "signin.break_glass",
            "signin.role_changed",
        ]
    )
    email: str = Field(description="Whose sign-in it was, when known.")
    reason: str | None = Field(
        description="For a refusal: bad_signature, wrong_issuer, wrong_audience, expired, nonce_mismatch, "
        "replayed, domain_not_allowed, sso_enforced, …"
    )
    ip: str
    detail: dict[str, Any]
    summary: str = Field(description="The entry as one sentence.")


class AuditPage(BaseModel):
    items: list[AuditEntry]
    next_cursor: str | None


@router.get("/audit", response_model=AuditPage, responses={**AUTH_ERRORS, 400: {"model": ErrorBody}})
def audit(
    identity: ApiAuth,
    session: DbSession,
    action: str = Query(
        default="signin",
        max_length=64,
        pattern=r"^[a-z_.]+$",
        description="An action (`signin.refused`) or a family of them (`signin`: every sign-in entry).",
    ),
    source: str = Query(
        default="",
        pattern=r"^(|mcp|signin)$",
        description="`mcp`: the agents' tool calls (who, client, tool, arguments' digest, rows and bytes read, "
        "duration, outcome in `detail`), instead of `action`.",
    ),
    cursor: str | None = Query(default=None, max_length=512, pattern=r"^[A-Za-z0-9_=-]*$"),
    limit: int = Query(default=50, ge=1, le=MAX_PAGE),
) -> AuditPage:
    """One page of the audit trail."""
    if source:
        action = "mcp" if source == "mcp" else "signin"
    try:
        rows, next_cursor = list_audit(session, identity.org_id, action, cursor, limit)
    except InvalidCursor as exc:
        raise ApiError(400, "Bad Request", "cursor: not one this API gave") from exc
    return AuditPage(
        items=[
            AuditEntry(
                id=row.id,
                created_at=iso_utc(row.created_at),
                action=row.action,
                email=row.email,
                reason=row.reason,
                ip=row.ip,
                detail=row.detail,
                summary=row.summary,
            )
            for row in rows
        ],
        next_cursor=next_cursor,
    )
