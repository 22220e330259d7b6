"""Organization members (owners and admins): list people with their role, invite someone, withdraw an
invitation, change a member's role, and remove a member behind a confirmation page (never the last owner: the
last owner can be neither removed nor demoted; a removed person's sessions end at once). An admin manages
admins, members and viewers, never an owner, and gives roles up to admin (``stacklens.control.roles``).

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
from stacklens.control.errors import AccountError, AccountNotFound
from stacklens.control.models import User
from stacklens.control.roles import RoleRefused
from stacklens.public_url import absolute_link

router = APIRouter(include_in_schema=False)
MEMBERS = "/orgs/{org_slug}/settings/members"


def _context(viewer: OrgViewer, db: Db, **extra: object) -> dict[str, object]:
    return {
        "viewer": viewer,
        "user": viewer.user,
        "members": accounts.list_members(db, viewer.org.id),
        "invitations": invitations.pending_invitations(db, viewer.org.id),
        "roles": viewer.grantable_roles,
        "error": None,
        "email": "",
        "invite_link": None,
        "invited": None,
        **extra,
    }


@router.get(MEMBERS, response_class=HTMLResponse)
def members(request: Request, viewer: OrgViewer, db: Db) -> Response:
    viewer.require_admin()
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
    viewer.require_admin()
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
            actor_role=viewer.role,
        )
    except RoleRefused as exc:
        return render(request, "members.html", _context(viewer, db, error=str(exc), email=email), 403)
    except AccountError as exc:
        return render(request, "members.html", _context(viewer, db, error=str(exc), email=email), 400)
    link = absolute_link(request.app.state.settings, f"/invitations/{token}")
    return render(request, "members.html", _context(viewer, db, invite_link=link, invited=invitation), 201)


@router.post(MEMBERS + "/invitations/{invitation_id}/revoke", response_class=HTMLResponse)
def revoke_invitation(
    request: Request, viewer: OrgViewer, db: Db, invitation_id: int, csrf_token: Annotated[str, Form()] = ""
) -> Response:
    viewer.require_admin()
    check_csrf(request, csrf_token)
    try:
        invitations.revoke_invitation(
            db, viewer.org.id, invitation_id, viewer.user.id, actor_role=viewer.role
        )
    except RoleRefused as exc:
        return render(request, "members.html", _context(viewer, db, error=str(exc)), 403)
    except AccountError as exc:
        return render(request, "members.html", _context(viewer, db, error=str(exc)), 404)
    return RedirectResponse(f"/orgs/{viewer.org.slug}/settings/members", status_code=303)


def _member(viewer: OrgViewer, db: Db, user_id: int) -> tuple[User, str]:
    """The member ``user_id`` of the viewer's organization with their role (404 for anyone else)."""
    for member, role in accounts.list_members(db, viewer.org.id):
        if member.id == user_id:
            return member, role
    raise AccountNotFound(f"no member with id {user_id} in this organization")


def _remove_context(viewer: OrgViewer, db: Db, user_id: int, error: str | None = None) -> dict[str, object]:
    member, role = _member(viewer, db, user_id)
    owners = sum(1 for _, r in accounts.list_members(db, viewer.org.id) if r == "owner")
    return {
        "viewer": viewer,
        "user": viewer.user,
        "member": member,
        "role": role,
        "last_owner": role == "owner" and owners <= 1,
        "is_self": member.id == viewer.user.id,
        "error": error,
    }


@router.get(MEMBERS + "/{user_id}/remove", response_class=HTMLResponse)
def confirm_remove(request: Request, viewer: OrgViewer, db: Db, user_id: int) -> Response:
    """Removing someone is one step away, never one click: this page says what removal does."""
    viewer.require_admin()
    return render(request, "member_remove.html", _remove_context(viewer, db, user_id))


@router.post(MEMBERS + "/{user_id}/remove", response_class=HTMLResponse)
def remove_member(
    request: Request,
    viewer: OrgViewer,
    db: Db,
    user_id: int,
    confirm: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    viewer.require_admin()
    check_csrf(request, csrf_token)
    if confirm != "yes":
        error = "Tick the box to confirm: the person loses access at once."
        return render(request, "member_remove.html", _remove_context(viewer, db, user_id, error), 400)
    try:
        accounts.remove_member(
            db, viewer.org.id, user_id, actor_user_id=viewer.user.id, actor_role=viewer.role
        )
    except AccountNotFound:
        raise  # not a member of this organization: the 404 page, like any URL that is not theirs
    except RoleRefused as exc:
        return render(request, "member_remove.html", _remove_context(viewer, db, user_id, str(exc)), 403)
    except AccountError as exc:
        return render(request, "member_remove.html", _remove_context(viewer, db, user_id, str(exc)), 400)
    if user_id == viewer.user.id:  # an owner who removed themselves can no longer see this page
        return RedirectResponse("/", status_code=303)
    return RedirectResponse(f"/orgs/{viewer.org.slug}/settings/members", status_code=303)


@router.post(MEMBERS + "/{user_id}/role", response_class=HTMLResponse)
def change_role(
    request: Request,
    viewer: OrgViewer,
    db: Db,
    user_id: int,
    role: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    viewer.require_admin()
    check_csrf(request, csrf_token)
    try:
        accounts.change_role(
            db, viewer.org.id, user_id, role, actor_user_id=viewer.user.id, actor_role=viewer.role
        )
    except AccountNotFound:
        raise  # not a member of this organization: the 404 page, like any URL that is not theirs
    except RoleRefused as exc:
        return render(request, "members.html", _context(viewer, db, error=str(exc)), 403)
    except AccountError as exc:
        return render(request, "members.html", _context(viewer, db, error=str(exc)), 400)
    if user_id == viewer.user.id and role not in ("owner", "admin"):
        # Someone who stepped down to member or viewer can no longer manage members: the settings remain.
        return RedirectResponse(f"/orgs/{viewer.org.slug}/settings", status_code=303)
    return RedirectResponse(f"/orgs/{viewer.org.slug}/settings/members", status_code=303)
