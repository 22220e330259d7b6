"""Annotations over the API (docs/explore.md): ``GET/POST /api/annotations``, ``DELETE /api/annotations/{id}``
— what CI posts at a deploy (Grafana's shape: ``{"time", "text", "tags", "project", "release"}``; ``time``
ISO 8601 or epoch milliseconds, now when left out). The time charts draw them beside the releases'
first-seen markers."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from api.deps import ApiAuth, DbSession
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from api.routers.explore import json_body
from api.routers.workspace_answers import AnnotationOut, AnnotationsOut
from stacklens import annotations as notes
from stacklens.explore.scope import project_ids
from stacklens.view_filters import BadFilter, ViewFilters

router = APIRouter(prefix="/api/annotations", tags=["annotations"])
ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A field cannot be used; `detail` names it."},
    404: {"model": ErrorBody, "description": "No such annotation (or project) in this organization."},
}


def _window(range: str, since: str, until: str) -> tuple[datetime | None, datetime | None]:
    if not (range or since or until):
        return None, None
    try:
        window = ViewFilters.parse(range=range, since=since, until=until)
    except BadFilter as exc:
        raise ApiError(400, "Bad Request", str(exc)) from None
    return window.since, window.until


@router.get("", response_model=AnnotationsOut, responses=ERRORS)
def list_annotations(
    auth: ApiAuth,
    db: DbSession,
    project: Annotated[str, Query(description="a project slug: its annotations and the organization's")] = "",
    range: Annotated[str, Query(description="24h, 7d, 14d, 30d or 90d")] = "",
    since: Annotated[str, Query(description="ISO 8601 start (instead of range)")] = "",
    until: Annotated[str, Query(description="ISO 8601 end")] = "",
) -> JSONResponse:
    """The organization's annotations, newest first (at most 500): `{"rows": [{"id", "time", "text", "tags",
    "project", "release", "created_at"}]}`."""
    start, end = _window(range, since, until)
    ids = project_ids(db, auth.org_id, project) if project else None
    rows = notes.list_annotations(db, auth.org_id, project_ids=ids, since=start, until=end)
    return JSONResponse({"rows": [r.as_json() for r in rows]})


@router.post("", status_code=201, response_model=AnnotationOut, responses=ERRORS)
async def create_annotation(request: Request, auth: ApiAuth, db: DbSession) -> JSONResponse:
    """Post an annotation: `{"time", "text", "tags": [...], "project": "<slug>" (or none: every project),
    "release"}`; answers it with its `id`."""
    created = await run_in_threadpool(notes.create_annotation, db, auth.org_id, await json_body(request))
    return JSONResponse(created.as_json(), status_code=201)


@router.delete("/{annotation_id}", status_code=204, responses=ERRORS)
def delete_annotation(annotation_id: str, auth: ApiAuth, db: DbSession) -> Response:
    if not annotation_id.isdigit() or len(annotation_id) > 12:
        raise ApiError(400, "Bad Request", f"id: {annotation_id[:32]!r} is not an annotation id")
    notes.delete_annotation(db, auth.org_id, int(annotation_id))
    return Response(status_code=204)
