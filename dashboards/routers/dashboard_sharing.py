"""Shared dashboards: `/share/dashboards/{token}` — read-only, signed out, served from the link's snapshot
(taken when the first visitor comes and refreshed at most every few minutes, by one visitor while the
others get the snapshot they find), 410 once expired or revoked; and on the dashboard's page, *Share* (a
new link, shown once) and *Revoke all links*, both CSRF-checked forms."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import Db, OrgViewer, app_settings
from dashboards.dashboard_board import board_views
from dashboards.dashboard_snapshot import snapshot_of
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control.models import Organization
from stacklens.errors import InvalidInput, NotFound
from stacklens.explore import dashboard_shares as shares
from stacklens.explore import dashboards as boards
from stacklens.public_url import absolute_link

router = APIRouter(include_in_schema=False)
ONE = "/orgs/{org_slug}/dashboards/{dashboard_id}"


@router.post(ONE + "/share", response_class=HTMLResponse)
async def share(request: Request, dashboard_id: int, viewer: OrgViewer, db: Db) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    days = str(form.get("expires_in_days") or "30")
    if not days.isdigit():
        raise InvalidInput("expires_in_days: a whole number of days from 1 to 365")
    row, token = shares.create_share(
        db, viewer.org.id, dashboard_id, shares.expiry_days({"expires_in_days": int(days)}), viewer.user.id
    )
    url = absolute_link(app_settings(request), shares.PATH.format(token=token))
    context = {
        "viewer": viewer,
        "user": viewer.user,
        "url": url,
        "expires_at": row.expires_at,
        "back": ONE.format(org_slug=viewer.org.slug, dashboard_id=dashboard_id),
    }
    return render(request, "dashboard_share_created.html", context)


@router.post(ONE + "/share/revoke")
async def revoke(request: Request, dashboard_id: int, viewer: OrgViewer, db: Db) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    shares.revoke_shares(db, viewer.org.id, dashboard_id)
    return RedirectResponse(ONE.format(org_slug=viewer.org.slug, dashboard_id=dashboard_id), status_code=303)


@router.get("/share/dashboards/{token}", response_class=HTMLResponse)
def shared_dashboard(request: Request, token: str, db: Db) -> Response:
    now = datetime.now(UTC)
    try:
        row = shares.open_share(db, token, now)
    except shares.ShareGone:
        message = "This dashboard link has expired or was revoked. Ask for a new one."
        return render(request, "error.html", {"title": "Link no longer valid", "message": message}, 410)
    except NotFound:
        raise HTTPException(status_code=404, detail="Not Found") from None
    snapshot = row.snapshot
    if not shares.fresh(row, now) and (shares.claim_refresh(db, row, now) or snapshot is None):
        board = boards.get_dashboard(db, row.org_id, row.dashboard_id)
        org = db.get(Organization, row.org_id)
        # The dashboard's own variable values (its defaults), as its page opens.
        chosen = {v["name"]: v.get("default", "") for v in board.variables}
        views, _ = board_views(
            app_settings(request),
            db,
            row.org_id,
            org.slug if org else "",
            board,
            board.filters,
            chosen,
            links=False,
            now=now,
        )
        snapshot = snapshot_of(board.name, board.description, board.filters, views, now)
        snapshot["variables"] = {f"${k}": v or "all" for k, v in chosen.items()}
        shares.store_snapshot(db, row, snapshot, now)
    context = {"viewer": None, "user": None, "snap": snapshot, "minutes": shares.SNAPSHOT_MINUTES}
    response = render(request, "dashboard_shared.html", context)
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Robots-Tag"] = "noindex"
    return response
