"""Report subscriptions over the API (docs/explore.md): ``GET/POST /api/subscriptions``, ``PUT/DELETE
/api/subscriptions/{id}`` — ``{"target": {"dashboard_id" | "saved_query_id"}, "schedule": {"every": "day" |
"week", "at": "HH:MM", "weekday", "timezone"}, "format": "summary" | "csv", "channel_id", "paused"}``. An
API key has no user, so ``to_me`` is the dashboards page's; here a report goes to a channel of the
organization."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from api.deps import ApiAuth, DbSession
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from api.routers.explore import json_body
from api.routers.workspace_answers import SubscriptionOut, SubscriptionsOut
from stacklens.explore import subscriptions

router = APIRouter(prefix="/api/subscriptions", tags=["subscriptions"])
ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A field cannot be used; `detail` names it."},
    404: {"model": ErrorBody, "description": "No such subscription in this organization."},
}


def _id(raw: str) -> int:
    if not raw.isdigit() or len(raw) > 12:
        raise ApiError(400, "Bad Request", f"id: {raw[:32]!r} is not a subscription id")
    return int(raw)


@router.get("", response_model=SubscriptionsOut, responses=ERRORS)
def list_subscriptions(auth: ApiAuth, db: DbSession) -> JSONResponse:
    """The organization's subscriptions with their next and last run and last error."""
    rows = subscriptions.list_subscriptions(db, auth.org_id)
    return JSONResponse({"rows": [subscriptions.as_json(r) for r in rows]})


@router.post("", status_code=201, response_model=SubscriptionOut, responses=ERRORS)
async def create_subscription(request: Request, auth: ApiAuth, db: DbSession) -> JSONResponse:
    body = await json_body(request)
    row = await run_in_threadpool(subscriptions.create_subscription, db, auth.org_id, body)
    return JSONResponse(subscriptions.as_json(row), status_code=201)


@router.put("/{subscription_id}", response_model=SubscriptionOut, responses=ERRORS)
async def replace_subscription(
    subscription_id: str, request: Request, auth: ApiAuth, db: DbSession
) -> JSONResponse:
    body = await json_body(request)
    row = await run_in_threadpool(
        subscriptions.replace_subscription, db, auth.org_id, _id(subscription_id), body
    )
    return JSONResponse(subscriptions.as_json(row))


@router.delete("/{subscription_id}", status_code=204, responses=ERRORS)
def delete_subscription(subscription_id: str, auth: ApiAuth, db: DbSession) -> Response:
    subscriptions.delete_subscription(db, auth.org_id, _id(subscription_id))
    return Response(status_code=204)
