"""Notification channels (`/orgs/{org}/settings/channels`): health badges, a visible warning on paused
channels, create (a webhook's signing secret is shown once), "Send test" through the outbox with the real
response, resume, delete, and the delivery log."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from dashboards.context import Db, OrgViewer
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.alerts.delivery_log import delivery_log
from stacklens.alerts.errors import AlertInputError, AlertNotFound
from stacklens.alerts.sending import send_test
from stacklens.control import channels

router = APIRouter(include_in_schema=False)
CHANNELS = "/orgs/{org_slug}/settings/channels"
LOG_ROWS = 50


def _context(viewer: OrgViewer, db: Db, channel_id: int | None = None, **extra: Any) -> dict[str, Any]:
    rows = channels.list_channels(db, viewer.org.id)
    log = delivery_log(db, viewer.org.id, channel_id, LOG_ROWS)
    return {
        "viewer": viewer,
        "user": viewer.user,
        "selected": channel_id,
        "channels": [
            {"row": c, "health": channels.health(c), "target": channels.target_text(c)} for c in rows
        ],
        "names": {c.id: c.name for c in rows},
        "log": log,
        "values": {},
        "error": None,
        "secret": None,
        "test": None,
        **extra,
    }


@router.get(CHANNELS, response_class=HTMLResponse)
def channel_page(request: Request, viewer: OrgViewer, db: Db, channel_id: int | None = None) -> Response:
    return render(request, "channels.html", _context(viewer, db, channel_id))


@router.post(CHANNELS, response_class=HTMLResponse)
async def create(request: Request, viewer: OrgViewer, db: Db) -> Response:
    viewer.require_admin()
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    values = {k: str(form.get(k) or "").strip() for k in ("type", "name", "url", "to")}
    try:
        row, secret = channels.create_channel(
            db,
            viewer.org.id,
            request.app.state.settings,
            type=values["type"],
            name=values["name"],
            url=values["url"] or None,
            to=values["to"] or None,
            actor_user_id=viewer.user.id,
        )
    except AlertInputError as exc:
        return render(request, "channels.html", _context(viewer, db, values=values, error=str(exc)), 400)
    return render(
        request,
        "channels.html",
        _context(viewer, db, secret=(row.name, secret) if secret else None, created=row.name),
    )


@router.post(CHANNELS + "/{channel_id}/{action}", response_class=HTMLResponse)
async def act(request: Request, viewer: OrgViewer, db: Db, channel_id: int, action: str) -> Response:
    viewer.require_admin()
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    try:
        if action == "test":
            db.commit()  # the test send writes through its own sessions
            result = send_test(request.app.state.settings, viewer.org.id, channel_id)
            db.expire_all()
            return render(request, "channels.html", _context(viewer, db, channel_id, test=result))
        if action == "resume":
            channels.resume_channel(db, viewer.org.id, channel_id, viewer.user.id)
        elif action == "delete":
            channels.delete_channel(db, viewer.org.id, channel_id, viewer.user.id)
        else:
            raise HTTPException(status_code=404, detail="Not Found")
    except AlertNotFound as exc:
        raise HTTPException(status_code=404, detail="Not Found") from exc
    db.flush()
    return render(request, "channels.html", _context(viewer, db))
