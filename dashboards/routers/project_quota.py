"""The project's quota form (project settings, owners only like the page): saved with `set_project_quota`, the
same as `PUT /api/projects/{slug}/quota`, so it applies on the next ingest request and is in the activity log;
the attachment quota (MiB, empty for the installation's) is saved with it.
A bad box changes nothing: the page comes back with the boxes as typed and the bad ones named."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from dashboards.context import CurrentProject, Db
from dashboards.quota_form import ATTACHMENT_BOX, TOTAL, parse_form
from dashboards.rendering import render
from dashboards.routers.keys import project_context
from dashboards.security import check_csrf
from stacklens.control.project_quotas import LIMITED_CATEGORIES, set_project_quota

router = APIRouter(include_in_schema=False)
PAGE = "/orgs/{org_slug}/projects/{project_slug}/settings"
BOX = Annotated[str, Form(max_length=40)]


@router.post(PAGE + "/quota")
def quota_setting(
    request: Request,
    view: CurrentProject,
    db: Db,
    events_per_minute: BOX = "",
    error: BOX = "",
    transaction: BOX = "",
    session: BOX = "",
    log: BOX = "",
    span: BOX = "",
    replay: BOX = "",
    attachment_mib: BOX = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    view.viewer.require_admin()
    typed = {
        TOTAL: events_per_minute,
        "error": error,
        "transaction": transaction,
        "session": session,
        "log": log,
        "span": span,
        "replay": replay,
        ATTACHMENT_BOX: attachment_mib,
    }
    limits, form = parse_form(typed)
    if form.errors:
        # Named at the top too: the box may be below the fold on a small screen.
        error = "The quota was not saved: " + "; ".join(form.errors.values()) + "."
        context = project_context(request, view, db, quota_form=form, error=error)
        return render(request, "project_settings.html", context, 400)
    categories = {category: limits[category] for category in LIMITED_CATEGORIES}
    set_project_quota(
        db,
        view.org_id,
        view.project_id,
        limits[TOTAL],
        categories,
        view.viewer.user.id,
        attachment_bytes=limits[ATTACHMENT_BOX],
    )
    db.commit()
    page = f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/settings"
    return RedirectResponse(page + "?saved=quota#quota", status_code=303)
