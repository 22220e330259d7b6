"""Organization members (owners only): list people with their role, add one, remove one (never the last
owner). Every change is written to the activity log by the control store in the same transaction."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import Db, OrgViewer
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control import accounts
from stacklens.control.errors import AccountError

router = APIRouter(include_in_schema=False)
MEMBERS = "/orgs/{org_slug}/settings/members"


def _context(viewer: OrgViewer, db: Db, **extra: object) -> dict[str, object]:
    return {
        "viewer": viewer,
        "user": viewer.user,
        "members": accounts.list_members(db, viewer.org.id),
        "roles": accounts.ROLES,
        "error": None,
        "email": "",
        **extra,
    }


@router.get(MEMBERS, response_class=HTMLResponse)
def members(request: Request, viewer: OrgViewer, db: Db) -> Response:
    viewer.require_owner()
    return render(request, "members.html", _context(viewer, db))


@router.post(MEMBERS, response_class=HTMLResponse)
def add_member(
    request: Request,
    viewer: OrgViewer,
    db: Db,
    email: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    role: Annotated[str, Form()] = "member",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    viewer.require_owner()
    check_csrf(request, csrf_token)
    try:
        # Every refusal (role, e-mail, password, last owner) is raised before anything is written.
        accounts.add_member(db, viewer.org.id, email, password, role, actor_user_id=viewer.user.id)
    except AccountError as exc:
        return render(request, "members.html", _context(viewer, db, error=str(exc), email=email), 400)
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
