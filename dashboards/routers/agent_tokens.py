"""The member's agent tokens (`/account/tokens`: create, list, revoke) and the OAuth consent page an MCP
client sends its member to (`/oauth/consent`), both behind the dashboards' sign-in (docs/agents.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from dashboards.context import CurrentUser, Db, user_orgs
from dashboards.rendering import render
from dashboards.routers.accounts import account_context
from dashboards.security import check_csrf
from stacklens.agents import consent, tokens
from stacklens.control.models import Organization, User
from stacklens.errors import StackLensError
from stacklens.public_url import public_base_url

router = APIRouter(include_in_schema=False)


def _orgs(request: Request, db: Session, user: User) -> list[tuple[Organization, str]]:
    """The member's organizations this session may act for: a session opened by one organization's single
    sign-on acts for that organization only (its provider vouches for nobody elsewhere)."""
    sso_org_id = getattr(request.state, "sso_org_id", None)
    return [(org, role) for org, role in user_orgs(db, user.id) if sso_org_id in (None, org.id)]


def _org_id(request: Request, db: Session, user: User, slug: str) -> int | None:
    for org, _role in _orgs(request, db, user):
        if not slug or org.slug == slug:
            return org.id
    return None


def _page(
    request: Request, db: Session, user: User, org: str, status_code: int = 200, **extra: object
) -> Response:
    context = account_context(db, user, org, **extra)
    viewer = context["viewer"]
    org_id = viewer.org.id if viewer is not None else None  # type: ignore[attr-defined]
    context["tokens"] = tokens.list_tokens(db, org_id, user.id) if org_id is not None else []
    context["mcp_url"] = public_base_url(request.app.state.settings) + "/mcp"
    return render(request, "account_tokens.html", context, status_code=status_code)


@router.get("/account/tokens", response_class=HTMLResponse)
def tokens_page(request: Request, user: CurrentUser, db: Db, org: str = "") -> Response:
    return _page(request, db, user, org)


@router.post("/account/tokens", response_class=HTMLResponse)
def create_token(
    request: Request,
    user: CurrentUser,
    db: Db,
    name: Annotated[str, Form()] = "",
    scopes: Annotated[str, Form()] = "read",
    expires_in_days: Annotated[str, Form()] = "30",
    org: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    org_id = _org_id(request, db, user, org)
    if org_id is None:
        return _page(request, db, user, org, 400, error="You are not a member of this organization.")
    days: object = (
        None
        if expires_in_days == "never"
        else int(expires_in_days)
        if expires_in_days.isdigit()
        else expires_in_days
    )
    try:
        row, raw = tokens.create_token(db, org_id, user.id, name, scopes.split("+"), days)
    except StackLensError as exc:
        return _page(request, db, user, org, 400, error=str(exc))
    return _page(request, db, user, org, created=raw, created_name=row.name)


@router.post("/account/tokens/{token_id}/revoke", response_class=HTMLResponse)
def revoke_token(
    request: Request,
    user: CurrentUser,
    db: Db,
    token_id: int,
    org: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    org_id = _org_id(request, db, user, org)
    if org_id is not None:
        try:
            tokens.revoke_token(db, org_id, user.id, token_id)
        except StackLensError as exc:
            return _page(request, db, user, org, 404, error=str(exc))
    return RedirectResponse(f"/account/tokens?org={org}", status_code=303)


@router.get("/oauth/consent", response_class=HTMLResponse)
def consent_page(request: Request, user: CurrentUser, db: Db) -> Response:
    blob = request.query_params.get("request", "")
    try:
        asked = consent.read(request.app.state.settings, blob)
    except StackLensError as exc:
        return render(
            request, "error.html", {"title": "Approval link not valid", "message": str(exc)}, status_code=400
        )
    context = {
        "user": user,
        "viewer": None,
        "blob": blob,
        "client": consent.name_of(db, asked),
        "redirect_host": asked.redirect_uri.split("/")[2]
        if "//" in asked.redirect_uri
        else asked.redirect_uri,
        "scopes": asked.scopes,
        "orgs": _orgs(request, db, user),
    }
    return render(request, "oauth_consent.html", context)


@router.post("/oauth/consent")
def consent_decision(
    request: Request,
    user: CurrentUser,
    db: Db,
    blob: Annotated[str, Form(alias="request")] = "",
    org: Annotated[str, Form()] = "",
    write: Annotated[str, Form()] = "",
    decision: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    try:
        asked = consent.read(request.app.state.settings, blob)
    except StackLensError as exc:
        return render(
            request, "error.html", {"title": "Approval link not valid", "message": str(exc)}, status_code=400
        )
    if decision != "approve":
        return RedirectResponse(consent.deny(asked), status_code=302)
    org_id = _org_id(request, db, user, org)
    if org_id is None:
        return render(
            request,
            "error.html",
            {"title": "Not found", "message": "You are not a member of that organization."},
            404,
        )
    scopes = ["read", "write"] if write == "on" else ["read"]
    return RedirectResponse(consent.approve(db, asked, org_id, user.id, scopes), status_code=302)
