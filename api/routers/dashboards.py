"""Dashboards over the API (docs/explore.md): ``GET/POST /api/dashboards``, ``GET/PUT/DELETE
/api/dashboards/{id}``, the key's organization's only. The body is the dashboard's JSON as the page exports it
(``{"name", "description", "filters": {"range", "environment", "release", "project"}, "widgets": [{"title",
"kind", "query"
| "saved_query_id" | "view", "layout": {"x", "y", "w", "h"}}]}``), so a file kept in git is ``POST``ed or
``PUT`` as it is. A bad field answers 400 naming it (``widgets[1].query.aggregates[0].fn: …``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from api.deps import ApiAuth, AppSettings, DbSession
from api.routers.auth import AUTH_ERRORS, ErrorBody
from api.routers.explore import json_body
from api.routers.workspace_answers import DashboardOut, DashboardsOut, ShareLinkOut
from stacklens.explore import dashboard_shares as shares
from stacklens.explore import dashboards
from stacklens.explore.query import BadQuery
from stacklens.public_url import absolute_link

router = APIRouter(prefix="/api/dashboards", tags=["dashboards"])
ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A field cannot be used; `detail` names it."},
    404: {"model": ErrorBody, "description": "No such dashboard in this organization."},
}


def _id(dashboard_id: str) -> int:
    if not dashboard_id.isdigit() or len(dashboard_id) > 12:
        raise BadQuery("id", f"{dashboard_id[:32]!r} is not a dashboard id")
    return int(dashboard_id)


@router.get("", response_model=DashboardsOut, responses=ERRORS)
def list_dashboards(auth: ApiAuth, db: DbSession) -> JSONResponse:
    """The organization's dashboards: `{"rows": [{"id", "name", "description", "filters", "widgets", …}]}`."""
    return JSONResponse({"rows": [b.as_json() for b in dashboards.list_dashboards(db, auth.org_id)]})


@router.post("", status_code=201, response_model=DashboardOut, responses=ERRORS)
async def create_dashboard(request: Request, auth: ApiAuth, db: DbSession) -> JSONResponse:
    """Create a dashboard (or import an exported one); answers it with its `id`."""
    created = await run_in_threadpool(dashboards.create_dashboard, db, auth.org_id, await json_body(request))
    return JSONResponse(created.as_json(), status_code=201)


@router.get("/{dashboard_id}", response_model=DashboardOut, responses=ERRORS)
def get_dashboard(dashboard_id: str, auth: ApiAuth, db: DbSession) -> JSONResponse:
    return JSONResponse(dashboards.get_dashboard(db, auth.org_id, _id(dashboard_id)).as_json())


@router.put("/{dashboard_id}", response_model=DashboardOut, responses=ERRORS)
async def replace_dashboard(
    dashboard_id: str, request: Request, auth: ApiAuth, db: DbSession
) -> JSONResponse:
    """Replace a dashboard's name, description, filters and widgets."""
    body = await json_body(request)
    replaced = await run_in_threadpool(dashboards.replace_dashboard, db, auth.org_id, _id(dashboard_id), body)
    return JSONResponse(replaced.as_json())


@router.delete("/{dashboard_id}", status_code=204, responses=ERRORS)
def delete_dashboard(dashboard_id: str, auth: ApiAuth, db: DbSession) -> Response:
    dashboards.delete_dashboard(db, auth.org_id, _id(dashboard_id))
    return Response(status_code=204)


@router.post("/{dashboard_id}/share", status_code=201, response_model=ShareLinkOut, responses=ERRORS)
async def share_dashboard(
    dashboard_id: str, request: Request, auth: ApiAuth, db: DbSession, settings: AppSettings
) -> JSONResponse:
    """A read-only link to the dashboard, signed out: body `{"expires_in_days"}` (1–365, default 30); answers
    `{"url": "/share/dashboards/{token}", "absolute_url", "expires_at"}` — the token is shown once. The
    page is served from a snapshot refreshed at most every 10 minutes."""
    raw = await request.body()
    body = await json_body(request) if raw.strip() else None
    days = shares.expiry_days(body)
    row, token = await run_in_threadpool(shares.create_share, db, auth.org_id, _id(dashboard_id), days)
    path = shares.PATH.format(token=token)
    return JSONResponse(
        {
            "url": path,
            "absolute_url": absolute_link(settings, path),
            "expires_at": row.expires_at.isoformat().replace("+00:00", "Z"),
        },
        status_code=201,
    )


@router.delete("/{dashboard_id}/share", status_code=204, responses=ERRORS)
def revoke_dashboard_shares(dashboard_id: str, auth: ApiAuth, db: DbSession) -> Response:
    """Revoke every link of the dashboard (their pages answer 410 from the next request)."""
    shares.revoke_shares(db, auth.org_id, _id(dashboard_id))
    return Response(status_code=204)
