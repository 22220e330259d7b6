"""A project's data scrubbing rules (`/orgs/{org}/projects/{project}/settings/scrubbing`, docs/scrubbing.md):
every member reads them; admins add and remove rules (method, type, pattern, selector), each checked before it
is saved. A preview (``?event_id=``) shows what the saved rules would change in a stored event."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import CurrentProject, Db
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.errors import InvalidInput
from stacklens.issues.events import valid_event_id
from stacklens.scrubbing.apply import ScrubRules
from stacklens.scrubbing.patterns import MAX_PATTERN, TYPES
from stacklens.scrubbing.preview import Preview, preview_event
from stacklens.scrubbing.rules import BUILT_IN, DEFAULT_SELECTOR, METHODS, RuleSpec, spec_of
from stacklens.scrubbing.selectors import MAX_SELECTOR
from stacklens.scrubbing.store import compiled, get_rules, set_rules

router = APIRouter(include_in_schema=False)
PAGE = "/orgs/{org_slug}/projects/{project_slug}/settings/scrubbing"
MAX_SHOWN = 300  # characters of a value shown in the preview table


def _page(request: Request, view: CurrentProject, status: int = 200, **extra: Any) -> Response:
    context = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "rules": get_rules(view.project),
        "built_in": BUILT_IN,
        "methods": METHODS,
        "types": TYPES,
        "max_pattern": MAX_PATTERN,
        "max_selector": MAX_SELECTOR,
        "default_selector": DEFAULT_SELECTOR,
        "form": {},
        "error": None,
        "saved": request.query_params.get("saved"),
        "preview": None,
        "preview_id": "",
        "preview_error": None,
        **extra,
    }
    return render(request, "scrubbing.html", context, status)


def _shown(value: Any) -> str:
    text = "(removed)" if value is None else value if isinstance(value, str) else repr(value)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"


@router.get(PAGE, response_class=HTMLResponse)
def scrubbing(
    request: Request, view: CurrentProject, event_id: Annotated[str, Query(max_length=64)] = ""
) -> Response:
    if not event_id.strip():
        return _page(request, view)
    rules: ScrubRules = compiled(view.project.scrubbing)
    found: Preview | None = None
    if valid_event_id(event_id.strip()) is not None:
        found = preview_event(view.warehouse, view.org_id, view.project_id, event_id.strip(), rules)
    if found is None:
        return _page(
            request,
            view,
            404,
            preview_id=event_id,
            preview_error=f"No event {event_id.strip()!r} in this project (an event id is 32 hex digits).",
        )
    changes = [(c.path, _shown(c.before), _shown(c.after)) for c in found.changes]
    return _page(request, view, preview={"event_id": found.event_id, "changes": changes}, preview_id=event_id)


@router.post(PAGE + "/add", response_class=HTMLResponse)
def add_rule(
    request: Request,
    view: CurrentProject,
    db: Db,
    method: Annotated[str, Form(max_length=16)] = "",
    type: Annotated[str, Form(max_length=16)] = "",
    pattern: Annotated[str, Form(max_length=MAX_PATTERN)] = "",
    applies_to: Annotated[str, Form(max_length=MAX_SELECTOR)] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    view.viewer.require_admin()
    rules = get_rules(view.project)
    form = {"method": method, "type": type, "pattern": pattern, "applies_to": applies_to}
    try:
        new = spec_of(form, len(rules))
        set_rules(db, view.org_id, view.project, [*rules, new], actor_user_id=view.viewer.user.id)
    except InvalidInput as exc:
        db.rollback()
        return _page(request, view, 400, form=form, error=f"Rule not added: {exc}")
    db.commit()
    return _back(view, "added")


@router.post(PAGE + "/remove", response_class=HTMLResponse)
def remove_rule(
    request: Request,
    view: CurrentProject,
    db: Db,
    index: Annotated[int, Form(ge=0, le=1000)],
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(request, csrf_token)
    view.viewer.require_admin()
    rules: list[RuleSpec] = get_rules(view.project)
    if index < len(rules):
        set_rules(
            db,
            view.org_id,
            view.project,
            rules[:index] + rules[index + 1 :],
            actor_user_id=view.viewer.user.id,
        )
        db.commit()
    return _back(view, "removed")


def _back(view: CurrentProject, what: str) -> Response:
    return RedirectResponse(
        f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/settings/scrubbing?saved={what}",
        status_code=303,
    )
