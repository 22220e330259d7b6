"""`GET/PUT/DELETE /api/sso`: the organization's company sign-in (OpenID Connect). The API key speaks for the
owners. The client secret is write-only: answers carry ``has_client_secret``, never the secret."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body
from fastapi.responses import Response
from pydantic import BaseModel, Field

from api.deps import ApiAuth, AppSettings, DbSession
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.sso.config import SSO_ROLES, SsoFieldError, read_settings, remove, save

router = APIRouter(prefix="/api", tags=["sso"])

ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {
        "model": ErrorBody,
        "description": "A field is wrong, named first in `detail` (`issuer: …`): the provider cannot be reached, "
        "its discovery document lacks the endpoints a code flow needs, a role map names an unknown role …",
    },
}


class SsoSettingsOut(BaseModel):
    configured: bool = Field(description="Whether the organization has single sign-on.")
    issuer: str
    client_id: str
    has_client_secret: bool = Field(description="A secret is stored (it is never answered).")
    scopes: list[str]
    groups_claim: str = Field(
        description="The ID token claim holding the groups; a dotted path reaches into objects."
    )
    role_map: dict[str, str] = Field(description=f"group → role, roles: {', '.join(SSO_ROLES)}")
    default_role: str = Field(description="The role of a person in no mapped group.")
    enforce: bool = Field(
        description="Password sign-in refused for the organization's people, break-glass excepted."
    )
    session_max_age_minutes: int = Field(
        description="An SSO session ends this long after sign-in (5 or more)."
    )
    allowed_domains: list[str] = Field(description="E-mail domains allowed to sign in; empty: any.")
    callback_url: str = Field(description="The redirect URI to register at the provider.")
    updated_at: str | None


@router.get("/sso", response_model=SsoSettingsOut, responses=ERRORS)
def get_sso(identity: ApiAuth, session: DbSession, settings: AppSettings) -> SsoSettingsOut:
    """The organization's single sign-on settings (never the client secret)."""
    return SsoSettingsOut(**read_settings(session, settings, identity.org_id).as_dict())


@router.put("/sso", response_model=SsoSettingsOut, responses=ERRORS)
def put_sso(
    identity: ApiAuth,
    session: DbSession,
    settings: AppSettings,
    body: dict[str, Any] = Body(  # noqa: B008  # FastAPI's way to declare a body
        examples=[
            {
                "issuer": "https://id.example.com/realms/acme",
                "client_id": "stacklens",
                "client_secret": "…",
                "scopes": ["openid", "email", "profile", "groups"],
                "groups_claim": "groups",
                "role_map": {"sre": "owner", "developers": "member"},
                "default_role": "viewer",
                "enforce": False,
                "session_max_age_minutes": 720,
                "allowed_domains": ["example.com"],
            }
        ]
    ),
) -> SsoSettingsOut:
    """Set single sign-on up or change it; a field left out keeps its value (the secret too). The provider's
    discovery document is fetched first (through the outbound guard)."""
    try:
        saved = save(session, settings, identity.org_id, body)
    except SsoFieldError as exc:
        raise ApiError(400, "Bad Request", str(exc)) from exc
    return SsoSettingsOut(**saved.as_dict())


@router.delete(
    "/sso",
    status_code=204,
    responses={**ERRORS, 404: {"model": ErrorBody, "description": "The organization has no single sign-on."}},
)
def delete_sso(identity: ApiAuth, session: DbSession) -> Response:
    """Turn single sign-on off (password sign-in works again for everyone)."""
    if not remove(session, identity.org_id):
        raise ApiError(404, "Not Found", "this organization has no single sign-on")
    return Response(status_code=204)
