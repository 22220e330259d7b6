"""Sentry's HTTP check-in, for scripts without an SDK (a `curl` in a crontab):
`GET|POST /api/{project_id}/cron/{monitor_slug}/{sentry_key}/?status=in_progress|ok|error`.

The key in the path is the project's DSN key; a wrong key answers 403 and writes nothing. Query parameters
`check_in_id`, `environment` and `duration` (seconds) are read as the envelope's check-in item reads them; a
POST may carry a JSON body with the same fields and a `monitor_config`, which creates or updates the monitor.
The answer is Sentry's: 202 `{"id": "<check-in id>"}`.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from api.deps import app_settings
from api.errors import APPLICATION_NOT_FOUND, ApiError
from api.item_quotas import item_taker
from api.routers.auth import ErrorBody
from api.routers.ingest import read_body
from api.token_buckets import get_rate_limiter
from stacklens.control.keys.dsn_callers import dsn_caller
from stacklens.errors import InvalidInput
from stacklens.ingest.jsondepth import MAX_JSON_DEPTH, JsonTooDeep, loads
from stacklens.monitors.checkins import record_all

router = APIRouter(prefix="/api", tags=["sentry protocol"])

# A check-in's body is a few hundred bytes; 1 MiB is the smallest bound read_body words in MiB.
MAX_BODY_BYTES = 1024 * 1024
CATEGORY = "monitor"
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "A bad status, duration, check-in id or monitor_config field"},
    413: {"model": ErrorBody, "description": "A body over 1 MiB"},
    403: {"model": ErrorBody, "description": "The key is not a current app key of this project"},
    429: {"model": ErrorBody, "description": "The project's or organization's quota is spent (Retry-After)"},
    404: {"model": ErrorBody, "description": "The project id is not a number"},
}


class CheckInAnswer(BaseModel):
    id: str = Field(description="The check-in's id (the one to close an in_progress check-in with).")


def _fields(query: dict[str, str], body: bytes) -> dict[str, Any]:
    fields: dict[str, Any] = {
        k: query[k] for k in ("status", "check_in_id", "environment", "duration") if k in query
    }
    if body.strip():
        try:
            parsed = loads(body, MAX_JSON_DEPTH, where="the check-in")
        except JsonTooDeep as exc:
            raise InvalidInput(str(exc)) from None
        except (ValueError, RecursionError) as exc:
            raise InvalidInput(f"the body is not a JSON check-in: {exc}") from None
        if not isinstance(parsed, dict):
            raise InvalidInput("the body is a JSON object (status, monitor_config, …)")
        fields.update(parsed)
    return fields


async def _checkin(request: Request, project_id: str, monitor_slug: str, sentry_key: str) -> JSONResponse:
    settings = app_settings(request)
    if not (project_id.isdigit() and len(project_id) <= 18):
        raise ApiError(404, "Not Found", "the project id of a DSN is a number (of at most 18 digits)")
    body = await read_body(request, MAX_BODY_BYTES) if request.method == "POST" else b""
    found = await run_in_threadpool(dsn_caller, settings, sentry_key)
    if found is None or str(found.identity.project_id) != project_id:
        # An unknown key and a key of another project answer alike: nothing about other projects leaks.
        raise ApiError(
            403, APPLICATION_NOT_FOUND, f"the DSN's key is not a current app key of project {project_id}"
        )
    fields = _fields(dict(request.query_params), body)
    fields["monitor_slug"] = monitor_slug
    identity = found.identity
    # The front door's quotas hold for check-ins as for events: the project's and the organization's
    # items per minute (category "monitor", as Sentry names check-ins), 429 with Retry-After when spent.
    quotas = {identity.project_id: found.quota} if found.quota is not None else {}
    take = item_taker(settings, get_rate_limiter(settings), identity.org_id, found.events_per_minute, quotas)
    give_back = await run_in_threadpool(take, Counter({(identity.project_id, CATEGORY): 1}))
    try:
        ids = await run_in_threadpool(
            record_all, settings, identity.org_id, identity.project_id, [fields], datetime.now(UTC), "http"
        )
    except Exception:
        if give_back is not None:  # refused (a bad field): the check-in did not spend the quota
            give_back()
        raise
    return JSONResponse({"id": ids[0]}, status_code=202)


PATH = "/{project_id}/cron/{monitor_slug}/{sentry_key}/"


@router.get(PATH, status_code=202, response_model=CheckInAnswer, responses=ERRORS)
async def http_checkin(request: Request, project_id: str, monitor_slug: str, sentry_key: str) -> JSONResponse:
    """Record a check-in of `monitor_slug` (created in state `new` when unknown, as Sentry does):
    `?status=in_progress|ok|error` (default ok), `check_in_id`, `environment`, `duration` (seconds)."""
    return await _checkin(request, project_id, monitor_slug, sentry_key)


@router.post(PATH, status_code=202, response_model=CheckInAnswer, responses=ERRORS)
async def http_checkin_post(
    request: Request, project_id: str, monitor_slug: str, sentry_key: str
) -> JSONResponse:
    """The same, with the fields (and a `monitor_config`) as a JSON body."""
    return await _checkin(request, project_id, monitor_slug, sentry_key)
