"""Settings: the organization's API key (masked, reveal logged, "create next key" for a zero-downtime
rotation, regenerate behind a confirmation), project app keys (primary and per-service: create, reveal
(logged), and regenerate or revoke behind a confirmation naming the consequence) and the activity log.

An app key and its DSN are shown the same way: masked until "Reveal", which shows both in full and is logged
(the DSN carries the whole key)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from dashboards.context import CurrentProject, Db, OrgViewer
from dashboards.quota_form import (
    ATTACHMENT_BOX,
    ATTACHMENT_LABEL,
    LABELS,
    QuotaForm,
    attachment_facts,
    current_form,
)
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control.activity import actor_labels, list_activity
from stacklens.control.activity_text import describe
from stacklens.control.errors import AccountError
from stacklens.control.keys import lifecycle as keys
from stacklens.control.keys.dsn import masked_dsn, project_dsns
from stacklens.control.project_quotas import quota_of
from stacklens.feedback.attachment_files import stored_bytes

router = APIRouter(include_in_schema=False)
ORG = "/orgs/{org_slug}/settings"
PROJECT = "/orgs/{org_slug}/projects/{project_slug}/settings"
ROTATION_ORDER = (
    "Update every shipper configuration with the new key.",
    "Restart the shipper instances.",
    "Verify events flow.",
    "Then regenerate in the dashboard.",
)


def _api_key_context(viewer: OrgViewer, db: Db, **extra: object) -> dict[str, object]:
    current = keys.current_api_key(db, viewer.org.id)
    masked = f"stacklens_api_…{current.last4}" if current else "(none)"
    pending = keys.next_api_key(db, viewer.org.id)
    return {
        "viewer": viewer,
        "user": viewer.user,
        "masked": masked,
        "current": current,
        "next_key": pending,
        "next_masked": f"stacklens_api_…{pending.last4}" if pending else None,
        "rotation": ROTATION_ORDER,
        "revealed": None,
        "revealed_next": None,
        "new_key": None,
        "new_next_key": None,
        "error": None,
        **extra,
    }


@router.get(ORG + "/api-keys", response_class=HTMLResponse)
def api_keys(request: Request, viewer: OrgViewer, db: Db) -> Response:
    viewer.require_owner()
    return render(request, "api_keys.html", _api_key_context(viewer, db))


@router.post(ORG + "/api-keys/reveal", response_class=HTMLResponse)
def reveal(
    request: Request,
    viewer: OrgViewer,
    db: Db,
    which: Annotated[str, Form()] = "current",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    viewer.require_owner()
    check_csrf(request, csrf_token)
    next_key = which == "next"
    try:
        value = keys.reveal_api_key(db, viewer.org.id, viewer.user.id, next_key=next_key)
    except AccountError as exc:
        return render(request, "error.html", {"title": "No API key", "message": str(exc)}, 409)
    extra = {"revealed_next": value} if next_key else {"revealed": value}
    return render(request, "api_keys.html", _api_key_context(viewer, db, **extra))


@router.post(ORG + "/api-keys/next", response_class=HTMLResponse)
def create_next(
    request: Request, viewer: OrgViewer, db: Db, csrf_token: Annotated[str, Form()] = ""
) -> Response:
    """Step one of a zero-downtime rotation: a next key that works beside the current one."""
    viewer.require_owner()
    check_csrf(request, csrf_token)
    try:
        _row, value = keys.create_next_api_key(db, viewer.org.id, viewer.user.id)
    except AccountError as exc:
        return render(request, "api_keys.html", _api_key_context(viewer, db, error=str(exc)), 409)
    return render(request, "api_keys.html", _api_key_context(viewer, db, new_next_key=value), 201)


@router.get(ORG + "/api-keys/regenerate", response_class=HTMLResponse)
def confirm_regenerate(request: Request, viewer: OrgViewer, db: Db) -> Response:
    viewer.require_owner()
    return render(request, "api_key_regenerate.html", _api_key_context(viewer, db))


@router.post(ORG + "/api-keys/regenerate", response_class=HTMLResponse)
def regenerate(
    request: Request,
    viewer: OrgViewer,
    db: Db,
    confirm: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    viewer.require_owner()
    check_csrf(request, csrf_token)
    if confirm != "yes":
        context = _api_key_context(
            viewer, db, error="Tick the box to confirm the old key stops working at once."
        )
        return render(request, "api_key_regenerate.html", context, 400)
    value = keys.regenerate_api_key(db, viewer.org.id, viewer.user.id)
    return render(request, "api_keys.html", _api_key_context(viewer, db, new_key=value))


def project_context(
    request: Request,
    view: CurrentProject,
    db: Db,
    revealed_key_id: int | None = None,
    quota_form: QuotaForm | None = None,
    **extra: object,
) -> dict[str, object]:
    """The project's settings; every app key and its DSN masked, except the one just revealed (logged); the
    quota boxes show ``quota_form`` (a refused save, as typed) or else the stored quota."""
    settings = request.app.state.settings
    app_keys = keys.list_app_keys(db, view.project_id)
    dsns = project_dsns(db, view.project_id, settings)
    shown = {
        key.id: dsns.get(key.id) if key.id == revealed_key_id else masked_dsn(dsns.get(key.id), key.masked)
        for key in app_keys
    }
    return {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "keys": app_keys,
        "dsns": shown,
        "new_key": None,
        "revealed": None,
        "revealed_key_id": revealed_key_id,
        "revealed_service": "",
        "quota_form": quota_form
        or current_form(view.project.events_per_minute, view.project.category_quotas),
        "quota_labels": LABELS,
        "attachment_box": (ATTACHMENT_BOX, ATTACHMENT_LABEL),
        "attachments": attachment_facts(
            quota_of(view.project_id, None, view.project.category_quotas).attachment_bytes,
            settings.attachment_quota_bytes,
            stored_bytes(db, view.project_id),
        ),
        "quota_saved": request.query_params.get("saved") == "quota",
        "retention_form": _retention_form(view),
        "retention_labels": RETENTION_LABELS,
        "retention_saved": request.query_params.get("saved") == "retention",
        "installation_days": settings.retention_days,
        "error": None,
        **extra,
    }


RETENTION_LABELS = {
    "days": "Days kept",
    "max_events_per_issue": "Events kept per issue",
    "max_events_per_project": "Events kept in the project",
}


def _retention_form(view: CurrentProject) -> dict[str, dict[str, str]]:
    """The retention boxes as stored (empty: none of the project's own)."""
    project = view.project
    stored = {
        "days": project.retention_days,
        "max_events_per_issue": project.max_events_per_issue,
        "max_events_per_project": project.max_events_per_project,
    }
    return {"values": {k: "" if v is None else str(v) for k, v in stored.items()}, "errors": {}}


@router.get(PROJECT, response_class=HTMLResponse)
def project_settings(request: Request, view: CurrentProject, db: Db) -> Response:
    view.viewer.require_admin()
    return render(request, "project_settings.html", project_context(request, view, db))


CONSEQUENCES = {
    "regenerate": "A new value replaces {key} and the old value stops working at once: every SDK, browser "
    "page and shipper still sending it is refused until its configuration holds the new key.",
    "revoke": "{key} stops working at once and is not replaced: every SDK, browser page and shipper still "
    "sending it is refused from now on.",
}


@router.post(PROJECT + "/app-keys", response_class=HTMLResponse)
def app_key_action(
    request: Request,
    view: CurrentProject,
    db: Db,
    action: Annotated[str, Form()] = "",
    service: Annotated[str, Form()] = "",
    key_id: Annotated[str, Form()] = "",
    confirm: Annotated[str, Form()] = "",
    csrf_token: Annotated[str, Form()] = "",
) -> Response:
    view.viewer.require_admin()
    check_csrf(request, csrf_token)
    actor = view.viewer.user.id
    owned = {key.id: key for key in keys.list_app_keys(db, view.project_id)}
    target = owned.get(int(key_id)) if key_id.isdigit() else None
    if action in CONSEQUENCES and confirm != "yes":
        # One click never breaks a deployment: regenerate and revoke first show what they will do.
        if action == "revoke" and target is None:
            raise HTTPException(status_code=404, detail="Not Found")
        name = target.masked if target else "the primary app key"
        primary = (target.service if target else service.strip()) in (None, "")
        context = {
            **project_context(request, view, db),
            "action": action,
            "target": target,
            "service": service,
            "key_id": key_id,
            "consequence": CONSEQUENCES[action].format(key=name),
            "primary": primary,
        }
        return render(request, "app_key_confirm.html", context)
    revealed, revealed_key_id = None, None
    try:
        if action == "create":
            value = keys.create_app_key(db, view.project_id, service.strip(), actor)
        elif action == "regenerate":
            value = keys.regenerate_app_key(db, view.project_id, service.strip() or None, actor)
        elif action == "revoke":
            if target is None:
                raise HTTPException(status_code=404, detail="Not Found")
            keys.revoke_app_key(db, target.id, actor)
            value = None
        elif action == "reveal":
            value = None
            revealed = keys.reveal_app_key(db, view.project_id, service.strip() or None, actor)
            revealed_key_id = next(
                (key.id for key in owned.values() if (key.service or "") == service.strip()), None
            )
        else:
            raise AccountError("choose create, regenerate, reveal or revoke")
    except AccountError as exc:
        return render(
            request, "project_settings.html", project_context(request, view, db, error=str(exc)), 400
        )
    # A created key adds a service; a regenerated one replaces a value that deployments still carry.
    context = project_context(
        request,
        view,
        db,
        new_key=value,
        new_key_action=action,
        new_key_service=service.strip(),
        revealed_key_id=revealed_key_id,
        revealed=revealed,
        revealed_service=service.strip(),
    )
    return render(request, "project_settings.html", context)


@router.get(ORG + "/activity", response_class=HTMLResponse)
def activity(
    request: Request, viewer: OrgViewer, db: Db, api_key_only: bool = False, cursor: str = ""
) -> Response:
    try:
        rows, next_cursor = list_activity(
            db, viewer.org.id, api_key_only=api_key_only, cursor=cursor or None, limit=50
        )
    except (AccountError, ValueError):
        rows, next_cursor = list_activity(db, viewer.org.id, api_key_only=api_key_only, limit=50)
    context = {
        "viewer": viewer,
        "user": viewer.user,
        "rows": rows,
        "actors": actor_labels(db, rows),
        "sentences": {row.id: describe(row) for row in rows},
        "next_cursor": next_cursor,
        "api_key_only": api_key_only,
    }
    return render(request, "activity.html", context)
