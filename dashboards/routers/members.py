"""Organization members (owners only): list people with their role, invite someone, withdraw an invitation,
remove a member (never the last owner; their sessions end at once).

Nobody is added without consent: an invitation is a link the invited person accepts
(``dashboards/routers/invitations.py``). Until StackLens sends mail, the owner copies the link shown once
here and hands it over. Creating an invitation answers the same whether or not the e-mail has an account.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import Db, OrgViewer
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control import accounts, invitations
from stacklens.control.errors import AccountError

router = APIRouter(include_in_schema=False)
MEMBERS = "/orgs/{org_slug}/settings/members"


def base_url(request: Request) -> str:
    public = request.app.state.settings.public_url
    return public.rstrip("/") if public else str(request.base_url).rstrip("/")


def _context(viewer: OrgViewer, db: Db, **extra: object) -> dict[str, object]:
    return {
        "viewer": viewer,
        "user": viewer.user,
        "members": accounts.list_members(db, viewer.org.id),
        "invitations": invitations.pending_invitations(db, viewer.org.id),
        "roles": accounts.ROLES,
        "error": None,
        "email": "",
        "invite_link": None,
        "invited": None,
        **extra,
    }


@router.get(MEMBERS, response_class=HTMLResponse)
def members(request: Request, viewer: OrgViewer, db: Db) -> Response:
    viewer.require_owner()
    return render(request, "members.html", _context(viewer, db))


@router.post(MEMBERS + "/invitations", response_class=HTMLResponse)
def invite(
    request: Request,
    viewer: OrgViewer,
    db: Db,
    email: Annotated[str, Form()] = "",
    role: Annotated[str, Form()] = "member",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    viewer.require_owner()
    check_csrf(request, csrf_token)
    settings = request.app.state.settings
    try:
        invitation, token = invitations.create_invitation(
            db,
            invitations.signer_for(settings.secret()),
            viewer.org.id,
            email,
            role=role or "member",
            days=settings.invitation_days,
            actor_user_id=viewer.user.id,
        )
    except AccountError as exc:
        return render(request, "members.html", _context(viewer, db, error=str(exc), email=email), 400)
    link = f"{base_url(request)}/invitations/{token}"
    return render(request, "members.html", _context(viewer, db, invite_link=link, invited=invitation), 201)


@router.post(MEMBERS + "/invitations/{invitation_id}/revoke", response_class=HTMLResponse)
def revoke_invitation(
    request: Request, viewer: OrgViewer, db: Db, invitation_id: int, csrf_token: Annotated[str, Form()] = ""
) -> Response:
    viewer.require_owner()
    check_csrf(request, csrf_token)
    try:
        invitations.revoke_invitation(db, viewer.org.id, invitation_id, viewer.user.id)
    except AccountError as exc:
        return render(request, "members.html", _context(viewer, db, error=str(exc)), 404)
    return RedirectResponse(f"/orgs/{viewer.org.slug}/settings/members", status_code=303)


@router.post(MEMBERS + "/{user_id}/remove", response_class=HTMLResponse)
def remove_member(
    request: Request,
    viewer: OrgViewer,
    db: Db,
    user_id: int,
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    viewer.require_owner()
    check_csrf(request, csrf_token)
    try:
        accounts.remove_member(db, viewer.org.id, user_id, actor_user_id=viewer.user.id)
    except AccountError as exc:
        return render(request, "members.html", _context(viewer, db, error=str(exc)), 400)
    if user_id == viewer.user.id:  # an owner who removed themselves can no longer see this page
        return RedirectResponse("/", status_code=303)
    return RedirectResponse(f"/orgs/{viewer.org.slug}/settings/members", status_code=303)
