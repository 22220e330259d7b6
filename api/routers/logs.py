"""Log records as JSON or CSV for scripts and analysts (docs/reference.md): one project's OpenTelemetry and
Sentry
SDK logs, newest first, with the logs view's filters (docs/logs.md). Bearer API key; a project of another
organization answers 404 like one that does not exist.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from api.deps import ApiAuth, ViewedProject, Warehouse
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.csv_cells import csv_text
from stacklens.errors import InvalidInput
from stacklens.logs.search import CSV_COLUMNS, DEFAULT_LIMIT, MAX_CSV_ROWS, MAX_LIMIT, LogFilters, search_logs

router = APIRouter(prefix="/api/projects", tags=["logs"])
ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A filter value cannot be used; `detail` names the field."},
    404: {"model": ErrorBody, "description": "No such project in this organization."},
}


class LogRecordOut(BaseModel):
    timestamp: str = Field(description="ISO 8601 UTC with microseconds.")
    observed_timestamp: str = Field(description="When the collector or SDK observed it, ISO 8601 UTC.")
    severity: str = Field(description="trace, debug, info, warn, error or fatal.")
    severity_number: int = Field(description="OpenTelemetry's severity number (1–24).")
    severity_text: str = Field(description="The severity as the source wrote it.")
    body: str
    attributes: dict[str, str]
    trace_id: str
    span_id: str
    service: str
    release: str
    environment: str


class LogsOut(BaseModel):
    rows: list[LogRecordOut]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next (older) page; null at the end."
    )
    filters: dict[str, Any]


@router.get(
    "/{slug}/logs", response_model=LogsOut, responses=ERRORS, summary="Search a project's log records"
)
def list_logs(
    slug: str,
    auth: ApiAuth,
    project: ViewedProject,
    warehouse: Warehouse,
    query: Annotated[str, Query(description="text in the body or any attribute value (any case)")] = "",
    severity: Annotated[
        str, Query(description="trace, debug, info, warn, error, fatal; several comma-separated")
    ] = "",
    service: Annotated[str, Query(description="the service (OpenTelemetry service.name)")] = "",
    environment: str = "",
    release: str = "",
    trace_id: Annotated[str, Query(description="32 hex digits: the records of one trace")] = "",
    range: Annotated[str, Query(description="24h, 7d, 14d, 30d or 90d (default 24h)")] = "",
    since: Annotated[str, Query(description="ISO 8601 start (instead of range)")] = "",
    until: Annotated[str, Query(description="ISO 8601 end (default now)")] = "",
    cursor: Annotated[str, Query(description="next_cursor of the previous page")] = "",
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="records per page")] = DEFAULT_LIMIT,
    format: Annotated[str, Query(description="json or csv")] = "json",
) -> Response:
    """Records newest first: `{"rows": [{"timestamp", "observed_timestamp", "severity", "severity_number",
    "severity_text", "body", "attributes", "trace_id", "span_id", "service", "release", "environment"}],
    "next_cursor", "filters"}`. `format=csv` answers the same filters as CSV (up to 10,000 records, newest
    first; `attributes` as JSON; text cells neutralised against formulas)."""
    project_id = project.id
    if format not in ("json", "csv"):
        raise ApiError(400, "Bad Request", "format: must be json or csv")
    try:
        filters = LogFilters.parse(
            query=query,
            severity=severity,
            service=service,
            environment=environment,
            release=release,
            trace_id=trace_id,
            range=range,
            since=since,
            until=until,
        )
        if format == "csv":
            page = search_logs(warehouse, auth.org_id, project_id, filters, cursor=cursor, limit=MAX_CSV_ROWS)
        else:
            page = search_logs(warehouse, auth.org_id, project_id, filters, cursor=cursor, limit=limit)
    except InvalidInput as exc:
        raise ApiError(400, "Bad Request", str(exc)) from exc
    if format == "csv":
        rows = [{**r.as_dict(), "attributes": _json(r.attributes)} for r in page.rows]
        return Response(
            csv_text(CSV_COLUMNS, [{c: row[c] for c in CSV_COLUMNS} for row in rows]),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{slug}-logs.csv"'},
        )
    return JSONResponse(
        {
            "rows": [r.as_dict() for r in page.rows],
            "next_cursor": page.next_cursor,
            "filters": filters.describe(),
        }
    )


def _json(value: dict[str, str]) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
