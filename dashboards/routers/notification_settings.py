"""`/account/notifications`: how the signed-in person hears of issue news, per organization, project and kind
(none, immediate, daily digest). Each select is named ``<org slug>/<project slug>/<kind>``."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import select

from dashboards.context import CurrentUser, Db, user_orgs
from dashboards.rendering import render
from dashboards.routers.accounts import account_context
from dashboards.security import check_csrf
from stacklens.control.models import Project
from stacklens.errors import InvalidInput, NotFound
from stacklens.issues.notifications import DIGEST_HOUR, KIND_MODES, KINDS, set_settings, settings_of

router = APIRouter(include_in_schema=False)
PAGE = "/account/notifications"
# Column headings; the kinds' full descriptions are listed under the table.
KIND_LABELS = {
    "assigned": "Assigned",
    "mentions": "Mentions",
    "comments": "Comments",
    "regressions": "Regressions",
    "weekly": "Weekly summary",
    "feedback": "User feedback",
}
MODE_LABELS = {
    "none": "none",
    "immediate": "immediately",
    "daily": f"daily digest ({DIGEST_HOUR:02d}:00 UTC)",
}


def _page(
    request: Request, user: CurrentUser, db: Db, org: str, status: int = 200, **extra: object
) -> Response:
    orgs = [(o, settings_of(db, o.id, user.id)) for o, _ in user_orgs(db, user.id)]
    # Each project by its name, its slug beside it (issue 71: the page named projects by slug only).
    names = {
        o.id: {
            slug: name
            for slug, name in db.execute(select(Project.slug, Project.name).where(Project.org_id == o.id))
        }
        for o, _ in orgs
    }
    context = account_context(
        db,
        user,
        org,
        orgs=orgs,
        kinds=KINDS,
        modes=MODE_LABELS,
        kind_modes=KIND_MODES,
        kind_labels=KIND_LABELS,
        names=names,
        saved=request.query_params.get("saved") == "1",
        **extra,
    )
    return render(request, "notification_settings.html", context, status)


@router.get(PAGE, response_class=HTMLResponse)
def notification_settings(request: Request, user: CurrentUser, db: Db, org: str = "") -> Response:
    return _page(request, user, db, org)


@router.post(PAGE, response_class=HTMLResponse)
async def save_notification_settings(request: Request, user: CurrentUser, db: Db) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token", "")))
    memberships = {o.slug: o for o, _ in user_orgs(db, user.id)}
    changes: dict[str, dict[str, dict[str, str]]] = {}
    for name, value in form.multi_items():
        if name.count("/") != 2:
            continue
        org_slug, project_slug, kind = name.split("/")
        if org_slug not in memberships:  # only the person's own organizations
            continue
        changes.setdefault(org_slug, {}).setdefault(project_slug, {})[kind] = str(value)
    try:
        for org_slug, projects in changes.items():
            if any(kind not in KINDS for kinds in projects.values() for kind in kinds):
                raise InvalidInput("choose a mode for each kind of news")
            set_settings(db, memberships[org_slug].id, user.id, projects)
    except (InvalidInput, NotFound) as exc:
        db.rollback()
        return _page(request, user, db, str(form.get("org", "")), 400, error=f"Nothing saved: {exc}")
    org = str(form.get("org", ""))
    return RedirectResponse(f"{PAGE}?saved=1" + (f"&org={org}" if org else ""), status_code=303)
