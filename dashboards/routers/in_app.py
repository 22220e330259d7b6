"""The project's in-app rules (project settings): module prefixes whose frames are the application's own or
a vendor's, whatever the SDK marked. They set the culprit and in-app frames of events received from then on
and the in-app / vendor badge of every frame shown; grouping never reads them (stacklens/ingest/in_app.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from dashboards.context import CurrentProject, Db
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control.projects_settings import set_in_app_rules
from stacklens.ingest.in_app import BadPrefix, InAppRules, parse_prefixes

router = APIRouter(include_in_schema=False)
PAGE = "/orgs/{org_slug}/projects/{project_slug}/settings"


@router.post(PAGE + "/in-app")
def in_app_setting(
    request: Request,
    view: CurrentProject,
    db: Db,
    include: Annotated[str, Form(max_length=5000)] = "",
    exclude: Annotated[str, Form(max_length=5000)] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    view.viewer.require_admin()
    try:
        rules = InAppRules(parse_prefixes(include), parse_prefixes(exclude))
    except BadPrefix as exc:
        return render(request, "error.html", {"title": "In-app rules unchanged", "message": str(exc)}, 400)
    set_in_app_rules(db, view.org_id, view.project_id, rules)
    db.commit()
    return RedirectResponse(
        f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/settings#in-app", status_code=303
    )
