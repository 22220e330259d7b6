"""Scheduled reports on a dashboard's page (its "Scheduled reports" section): subscribe yourself or a channel,
daily or weekly at a time in a time zone, as a summary or CSV; pause, resume and delete. Each form carries the
CSRF token; the reports go out through the channels' outbox (stacklens.explore.reports)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from dashboards.context import Db, OrgViewer
from dashboards.security import check_csrf
from stacklens.control.models import AlertChannel
from stacklens.explore import subscriptions

router = APIRouter(include_in_schema=False)
BOARD = "/orgs/{org_slug}/dashboards/{dashboard_id}"
ACTIONS = ("pause", "resume", "delete")


async def _form(request: Request) -> Any:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    return form


@router.post(BOARD + "/subscriptions")
async def subscribe(request: Request, dashboard_id: int, viewer: OrgViewer, db: Db) -> Response:
    form = await _form(request)
    target = str(form.get("send_to") or "me")
    body: dict[str, Any] = {
        "target": {"dashboard_id": dashboard_id},
        "schedule": {
            "every": str(form.get("every") or ""),
            "at": str(form.get("at") or ""),
            "timezone": str(form.get("timezone") or "UTC"),
            **({"weekday": str(form.get("weekday") or "")} if form.get("every") == "week" else {}),
        },
        "format": str(form.get("format") or "summary"),
    }
    if target == "me":
        body["to_me"] = True
    else:
        body["channel_id"] = int(target) if target.isdigit() else target
    subscriptions.create_subscription(
        db, viewer.org.id, body, owner_user_id=viewer.user.id, me=viewer.user.email
    )
    path = BOARD.format(org_slug=viewer.org.slug, dashboard_id=dashboard_id)
    return RedirectResponse(path + "#subscriptions", status_code=303)


@router.post("/orgs/{org_slug}/subscriptions/{subscription_id}/{action}")
async def change(request: Request, subscription_id: int, action: str, viewer: OrgViewer, db: Db) -> Response:
    await _form(request)
    row = subscriptions.get_subscription(db, viewer.org.id, subscription_id)
    back = BOARD.format(org_slug=viewer.org.slug, dashboard_id=row.dashboard_id) + "#subscriptions"
    if action == "delete":
        subscriptions.delete_subscription(db, viewer.org.id, subscription_id)
    elif action in ("pause", "resume"):
        subscriptions.set_paused(db, viewer.org.id, subscription_id, action == "pause")
    else:
        raise subscriptions.BadSubscription("action", f"use one of {', '.join(ACTIONS)}")
    return RedirectResponse(back, status_code=303)


def channel_names(db: Session, org_id: int) -> dict[int, str]:
    rows = db.execute(select(AlertChannel.id, AlertChannel.name).where(AlertChannel.org_id == org_id))
    return {int(i): str(n) for i, n in rows}
