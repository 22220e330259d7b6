"""Issue-tracker connections (`/orgs/{org}/settings/integrations`): the connections with who the token is
and what it reaches, adding one (tested before it is stored; the token is never shown again), deleting, and
how to make a token for each tracker when there is none yet."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from dashboards.context import Db, OrgViewer
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control import integrations
from stacklens.errors import StackLensError, Unavailable

router = APIRouter(include_in_schema=False)
PAGE = "/orgs/{org_slug}/settings/integrations"
FIELDS = ("type", "name", "base_url", "email", "token", "default_target", "issue_type")


def _context(viewer: OrgViewer, db: Db, **extra: Any) -> dict[str, Any]:
    rows = integrations.list_connections(db, viewer.org.id)
    return {
        "viewer": viewer,
        "user": viewer.user,
        "connections": [integrations.connection_out(r) for r in rows],
        "labels": integrations.LABELS,
        "values": {},
        "error": None,
        "created": None,
        **extra,
    }


@router.get(PAGE, response_class=HTMLResponse)
def integrations_page(request: Request, viewer: OrgViewer, db: Db) -> Response:
    return render(request, "integrations.html", _context(viewer, db))


@router.post(PAGE, response_class=HTMLResponse)
async def create(request: Request, viewer: OrgViewer, db: Db) -> Response:
    viewer.require_admin()
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    values = {k: str(form.get(k) or "").strip() for k in FIELDS}
    body: dict[str, Any] = {k: v for k, v in values.items() if v}
    body["resolve_on_close"] = form.get("resolve_on_close") == "on"
    try:
        row = await run_in_threadpool(
            integrations.create_connection,
            db,
            viewer.org.id,
            request.app.state.settings,
            body,
            viewer.user.id,
        )
    except StackLensError as exc:
        values.pop("token")  # never echoed back into the page
        status = 503 if isinstance(exc, Unavailable) else 400
        return render(
            request, "integrations.html", _context(viewer, db, values=values, error=str(exc)), status
        )
    db.flush()
    return render(
        request, "integrations.html", _context(viewer, db, created=integrations.connection_out(row))
    )


@router.post(PAGE + "/{connection_id}/delete", response_class=HTMLResponse)
async def delete(request: Request, viewer: OrgViewer, db: Db, connection_id: int) -> Response:
    viewer.require_admin()
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    try:
        integrations.delete_connection(db, viewer.org.id, connection_id, viewer.user.id)
    except StackLensError as exc:
        raise HTTPException(status_code=404, detail="Not Found") from exc
    db.flush()
    return render(request, "integrations.html", _context(viewer, db))
