"""Teams of the organization (`/orgs/{org}/settings/teams`): every member sees the teams and who is in them;
owners create teams and choose their members. A team is assigned issues as ``#slug`` and named by ownership
rules."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import Db, OrgViewer
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control import accounts
from stacklens.control.teams import create_team, list_teams, set_members
from stacklens.errors import Conflict, InvalidInput, NotFound

router = APIRouter(include_in_schema=False)
TEAMS = "/orgs/{org_slug}/settings/teams"


def _page(request: Request, viewer: OrgViewer, db: Db, status: int = 200, **extra: object) -> Response:
    context = {
        "viewer": viewer,
        "user": viewer.user,
        "teams": list_teams(db, viewer.org.id),
        "members": [member.email for member, _ in accounts.list_members(db, viewer.org.id)],
        "error": None,
        "values": {},
        **extra,
    }
    return render(request, "teams.html", context, status)


@router.get(TEAMS, response_class=HTMLResponse)
def teams(request: Request, viewer: OrgViewer, db: Db) -> Response:
    return _page(request, viewer, db)


@router.post(TEAMS, response_class=HTMLResponse)
def new_team(
    request: Request,
    viewer: OrgViewer,
    db: Db,
    slug: Annotated[str, Form()] = "",
    name: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    viewer.require_admin()
    check_csrf(request, csrf_token)
    try:
        create_team(db, viewer.org.id, slug, name, viewer.user.id)
    except (InvalidInput, Conflict) as exc:
        return _page(
            request, viewer, db, 400, error=f"Team not created: {exc}", values={"slug": slug, "name": name}
        )
    return RedirectResponse(f"/orgs/{viewer.org.slug}/settings/teams", status_code=303)


@router.post(TEAMS + "/{slug}/members", response_class=HTMLResponse)
def team_members(
    request: Request,
    viewer: OrgViewer,
    db: Db,
    slug: str,
    members: Annotated[list[str] | None, Form()] = None,
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    viewer.require_admin()
    check_csrf(request, csrf_token)
    try:
        set_members(db, viewer.org.id, slug, members or [], viewer.user.id)
    except NotFound as exc:
        return _page(request, viewer, db, 404, error=f"Members unchanged: {exc}")
    return RedirectResponse(f"/orgs/{viewer.org.slug}/settings/teams#team-{slug}", status_code=303)
