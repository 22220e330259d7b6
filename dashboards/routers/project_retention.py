"""The project's retention form (project settings, owners only like the page): days kept and event caps, saved
with the same functions as `PUT /api/projects/{slug}/retention`, so each change is in the activity log and the
next retention run (daily, or `stacklens retention run`) applies it. A bad box changes nothing: the page comes
back with the boxes as typed and the bad ones named."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from dashboards.context import CurrentProject, Db
from dashboards.rendering import render
from dashboards.routers.keys import RETENTION_LABELS as LABELS
from dashboards.routers.keys import project_context
from dashboards.security import check_csrf
from stacklens.control.project_retention import MAX_CAP, set_event_caps, set_project_retention
from stacklens.errors import InvalidInput

router = APIRouter(include_in_schema=False)
PAGE = "/orgs/{org_slug}/projects/{project_slug}/settings"
BOX = Annotated[str, Form(max_length=40)]


def _parse(typed: dict[str, str], installation_days: int) -> tuple[dict[str, int | None], dict[str, str]]:
    """The boxes as numbers (empty: none of the project's own) and an error per bad box, naming it."""
    values: dict[str, int | None] = {}
    errors: dict[str, str] = {}
    for name, text in typed.items():
        text = text.strip().replace(",", "").replace("_", "")
        if not text:
            values[name] = None
            continue
        highest = installation_days if name == "days" else MAX_CAP
        if not text.isdigit() or not 1 <= int(text) <= highest:
            errors[name] = f"{LABELS[name]}: a whole number from 1 to {highest:,}, or empty"
            continue
        values[name] = int(text)
    return values, errors


@router.post(PAGE + "/retention")
def retention_setting(
    request: Request,
    view: CurrentProject,
    db: Db,
    days: BOX = "",
    max_events_per_issue: BOX = "",
    max_events_per_project: BOX = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    view.viewer.require_admin()
    settings = request.app.state.settings
    typed = {
        "days": days,
        "max_events_per_issue": max_events_per_issue,
        "max_events_per_project": max_events_per_project,
    }
    values, errors = _parse(typed, settings.retention_days)
    if errors:
        error = "The retention was not saved: " + "; ".join(errors.values()) + "."
        form = {"values": typed, "errors": errors}
        context = project_context(request, view, db, retention_form=form, error=error)
        return render(request, "project_settings.html", context, 400)
    actor = view.viewer.user.id
    try:
        set_project_retention(
            db, view.org_id, view.project_id, values["days"], settings.retention_days, actor
        )
        set_event_caps(
            db,
            view.org_id,
            view.project_id,
            values["max_events_per_issue"],
            values["max_events_per_project"],
            actor,
        )
    except InvalidInput as exc:  # the same bounds as _parse; kept so a change of either never answers 500
        db.rollback()
        context = project_context(request, view, db, error=str(exc))
        return render(request, "project_settings.html", context, 400)
    db.commit()
    page = f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/settings"
    return RedirectResponse(page + "?saved=retention#retention", status_code=303)
