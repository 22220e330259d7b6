"""Personal API tokens for agents (docs/agents.md): `POST /api/tokens`, `GET /api/tokens`,
`DELETE /api/tokens/{id}`.

Two callers: the organization's API key, for a named member (``"member": "<e-mail>"``), or a member signed
in to the dashboards, for themself (their session cookie; JSON bodies only, which a cross-site form cannot
send). The token is answered once; only its digest is stored."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, Field

from api.deps import DbSession, optional_api_key
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.agents import tokens
from stacklens.control.accounts import user_memberships
from stacklens.control.models import iso_utc
from stacklens.control.signin_sessions import Lifetimes, resolve_session
from stacklens.settings import Settings

router = APIRouter(prefix="/api", tags=["tokens"])
ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody},
    404: {"model": ErrorBody},
}


class TokenRequest(BaseModel):
    name: Any = Field(description="What uses it, e.g. 'Claude Code on my laptop'.")
    scopes: Any = Field(default=["read"], description='["read"] or ["read", "write"].')
    expires_in_days: Any = Field(default=tokens.DEFAULT_DAYS, description="1 to 365, or null: never.")
    member: str | None = Field(default=None, description="With the API key: the member's e-mail.")
    organization: str | None = Field(default=None, description="Signed in: the organization's slug.")


class TokenCreated(BaseModel):
    id: int
    token: str = Field(description="Shown once; only its digest is stored.")
    scopes: list[str]
    expires_at: str | None


class TokenOut(BaseModel):
    id: int
    name: str
    kind: str = Field(description="personal or oauth (a connected MCP client).")
    scopes: list[str]
    prefix: str
    created_at: str
    expires_at: str | None
    last_used_at: str | None


class TokenList(BaseModel):
    tokens: list[TokenOut]


async def _caller(request: Request, session: DbSession, body: TokenRequest | None) -> tuple[int, int | None]:
    """(organization, member) the request speaks for: the API key's (member: the named one, or ``None`` for
    any) or the signed-in member's."""
    key = await optional_api_key(request)
    if key is not None:
        if body is not None:
            return key.org_id, tokens.member_of(session, key.org_id, body.member).id
        return key.org_id, None
    sid = request.scope.get("session", {}).get("sid") if "session" in request.scope else None
    settings: Settings = request.app.state.settings
    lifetimes = Lifetimes(
        timedelta(minutes=settings.session_idle_minutes), timedelta(days=settings.session_max_days)
    )
    user = resolve_session(session, sid, lifetimes) if sid else None
    if user is None:
        raise ApiError(
            401, "Unauthorized", "send the API key (with member) or sign in", {"WWW-Authenticate": "Bearer"}
        )
    orgs = user_memberships(session, user.id)
    wanted = body.organization if body is not None else request.query_params.get("organization")
    chosen = [org for org, _ in orgs if not wanted or org.slug == wanted]
    if not chosen:
        raise ApiError(404, "Not Found", f"organization: you are not a member of {wanted!r}")
    return chosen[0].id, user.id


def _out(row: tokens.TokenRow) -> TokenOut:
    return TokenOut(
        id=row.id,
        name=row.name,
        kind=row.kind,
        scopes=row.scopes,
        prefix=row.prefix,
        created_at=iso_utc(row.created_at),
        expires_at=iso_utc(row.expires_at) if row.expires_at else None,
        last_used_at=iso_utc(row.last_used_at) if row.last_used_at else None,
    )


@router.post("/tokens", response_model=TokenCreated, status_code=201, responses=ERRORS)
async def create_token(request: Request, session: DbSession, body: TokenRequest) -> TokenCreated:
    """A personal token for agents (`/mcp`): `{"name", "scopes", "expires_in_days"}` (+ `"member"` with the
    API key). Answered once as `{"id", "token", "scopes", "expires_at"}`."""
    org_id, user_id = await _caller(request, session, body)
    assert user_id is not None
    row, raw = tokens.create_token(session, org_id, user_id, body.name, body.scopes, body.expires_in_days)
    return TokenCreated(
        id=row.id,
        token=raw,
        scopes=list(row.scopes),
        expires_at=iso_utc(row.expires_at) if row.expires_at else None,
    )


@router.get("/tokens", response_model=TokenList, responses=ERRORS)
async def list_tokens(request: Request, session: DbSession, member: str = "") -> TokenList:
    """The live tokens of the signed-in member, or with the API key those of `member`."""
    org_id, user_id = await _caller(request, session, None)
    if user_id is None:
        if not member:
            raise ApiError(400, "Bad Request", "member: with the API key, name the member (their e-mail)")
        user_id = tokens.member_of(session, org_id, member).id
    return TokenList(tokens=[_out(r) for r in tokens.list_tokens(session, org_id, user_id)])


@router.delete("/tokens/{token_id}", status_code=204, responses=ERRORS)
async def revoke_token(
    request: Request, session: DbSession, token_id: Annotated[int, Path(ge=1, le=2**31 - 1)]
) -> None:
    """Revoke a token (the signed-in member's own; with the API key, any member's of the organization)."""
    org_id, user_id = await _caller(request, session, None)
    tokens.revoke_token(session, org_id, user_id, token_id)
