"""A project's ownership rules (`/orgs/{org}/projects/{project}/settings/ownership`): every member reads them;
owners write them in Sentry's syntax or import a CODEOWNERS file (shown converted, saved only when the owner
saves). New issues are assigned by them within about a minute (stacklens.issues.auto_assign)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import CurrentProject, Db
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control.teams import list_teams
from stacklens.errors import InvalidInput
from stacklens.issues.auto_assign import get_rules, import_codeowners, set_rules
from stacklens.issues.ownership import MAX_TEXT

router = APIRouter(include_in_schema=False)
PAGE = "/orgs/{org_slug}/projects/{project_slug}/settings/ownership"


def _page(
    request: Request,
    view: CurrentProject,
    db: Db,
    status: int = 200,
    *,
    rules: str | None = None,
    **extra: object,
) -> Response:
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "rules": get_rules(db, view.org_id, view.project_id) if rules is None else rules,
        "teams": [t.slug for t in list_teams(db, view.org_id)],
        "max_text": MAX_TEXT,
        "error": None,
        "notes": [],
        "saved": request.query_params.get("saved") == "1",
        "imported": False,
        **extra,
    }
    return render(request, "ownership.html", context, status)


@router.get(PAGE, response_class=HTMLResponse)
def ownership(request: Request, view: CurrentProject, db: Db) -> Response:
    return _page(request, view, db)


@router.post(PAGE, response_class=HTMLResponse)
def save_ownership(
    request: Request,
    view: CurrentProject,
    db: Db,
    rules: Annotated[str, Form(max_length=MAX_TEXT)] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    view.viewer.require_admin()
    user = view.viewer.user
    try:
        set_rules(db, view.org_id, view.project, rules, actor=user.email, actor_user_id=user.id)
    except InvalidInput as exc:
        return _page(request, view, db, 400, rules=rules, error=f"Rules not saved: {exc}")
    return RedirectResponse(
        f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/settings/ownership?saved=1",
        status_code=303,
    )


@router.post(PAGE + "/codeowners", response_class=HTMLResponse)
def codeowners(
    request: Request,
    view: CurrentProject,
    db: Db,
    codeowners: Annotated[str, Form(max_length=MAX_TEXT)] = "",
    rules: Annotated[str, Form(max_length=MAX_TEXT)] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    """CODEOWNERS converted and appended to the rules being edited; nothing is saved yet."""
    check_csrf(request, csrf_token)
    view.viewer.require_admin()
    converted, notes = import_codeowners(db, view.org_id, codeowners)
    combined = "\n".join(part for part in (rules.strip(), converted) if part)
    return _page(request, view, db, rules=combined, notes=notes, imported=True)
