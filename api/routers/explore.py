"""Explore over the API (docs/reference.md): ``POST /api/explore/query`` runs a structured query of a dataset
—
filters, up to three group-by fields, aggregates of the metric catalog, a time series — scoped to the key's
organization; ``?format=csv|parquet|json`` downloads the full result (up to 1,000,000 rows). Saved queries
live under ``/api/explore/queries``. Unknown fields, functions and values answer 400 naming them."""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from api.deps import ApiAuth, AppSettings, DbSession, LocalOperator, Warehouse
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from api.routers.workspace_answers import ExploreAnswerOut, SavedQueriesOut, SavedQueryOut
from stacklens.explore import saved
from stacklens.explore.compare import run_compared
from stacklens.explore.download import Download, open_download
from stacklens.explore.download_names import download_name
from stacklens.explore.operator_sql import run_operator_sql
from stacklens.explore.query import BadQuery
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import Result, TooManyQueries
from stacklens.explore.scope import project_ids
from stacklens.ingest import jsondepth
from stacklens.ingest.jsondepth import JsonTooDeep
from stacklens.settings import Settings
from stacklens.warehouse.client import analyst_client, own_client

router = APIRouter(prefix="/api/explore", tags=["explore"])
ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A field, function or value cannot be used; `detail` names it."},
    404: {"model": ErrorBody, "description": "No such project (or saved query) in this organization."},
    429: {"model": ErrorBody, "description": "The organization already runs its maximum of Explore queries."},
}
FORMATS = ("json", "csv", "parquet")


async def json_body(request: Request) -> object:
    """The body parsed as JSON whatever its Content-Type says (the CLI and curl send any), so the depth
    guard is applied here too: the middleware measures only bodies labelled JSON, and a deeper body would
    reach the parser's recursion limit (a 500 and a reset connection)."""
    try:
        return jsondepth.loads(await request.body() or b"null", where="the JSON body")
    except JsonTooDeep as exc:
        raise ApiError(400, "Bad Request", str(exc)) from None
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "Bad Request", "body: must be JSON") from None


def _busy(exc: TooManyQueries) -> ApiError:
    return ApiError(429, "Too Many Requests", str(exc), {"Retry-After": "1"})


def _run(body: object, auth: ApiAuth, db: DbSession, settings: Settings) -> Result:
    query = parse_query(body)
    ids = project_ids(db, auth.org_id, query.project)
    try:
        with analyst_client(settings) as client:
            return run_compared(client, query, auth.org_id, ids)[0]
    except TooManyQueries as exc:
        raise _busy(exc) from exc


def _open(
    body: object, auth: ApiAuth, db: DbSession, settings: Settings, fmt: str, name: str
) -> tuple[Download, str]:
    query = parse_query(body, download=True)
    ids = project_ids(db, auth.org_id, query.project)
    connect = partial(own_client, settings.resolved_warehouse_url, settings.warehouse_database)
    try:
        return open_download(connect, query, auth.org_id, ids, fmt), download_name(query, fmt, name)
    except TooManyQueries as exc:
        raise _busy(exc) from exc


@router.post("/query", response_model=ExploreAnswerOut, responses=ERRORS)
async def explore_query(
    request: Request,
    auth: ApiAuth,
    db: DbSession,
    warehouse: Warehouse,  # resolved for its read-your-writes: events answered before the question land first
    settings: AppSettings,
    format: Annotated[
        str,
        Query(description="json, csv or parquet: the full result (up to 1,000,000 rows) as a streamed file"),
    ] = "",
    name: Annotated[
        str,
        Query(
            description="the download's name (a widget's or saved query's title); by default the question "
            "in words. The file is named after it and the window, as a safe slug: lcp-p75-by-release-30d.csv",
        ),
    ] = "",
) -> Response:
    """Body: `{"dataset", "project", "filters": [{"field", "op", "value"}], "group_by", "aggregates": [{"fn",
    "metric"}], "interval", "since"/"until"/"range", "order_by", "limit", "compare"}`. Answers `{"columns",
    "rows", "series", "meta": {"rows_read", "elapsed_ms", "truncated"}}`; with `"compare":
    {"previous_period": true}` (or `{"since", "until"}`, or `{"previous_release": true}` with one `release
    =` filter: that release against the one first seen before it, named in `meta.compared_release`) each
    aggregate column has `<column>_previous` (its value in the other window or release) and
    `<column>_change_pct` beside it; with `format` the full result as a file, streamed (numbers raw, in the
    unit each column's name carries; `X-Explore-Truncated: 1` when cut at `limit`)."""
    if format and format not in FORMATS:
        raise ApiError(400, "Bad Request", f"format: must be one of {', '.join(FORMATS)}")
    body = await json_body(request)
    if not format:
        # The engine call blocks: off the event loop, as the sync routes run.
        result = await run_in_threadpool(_run, body, auth, db, settings)
        return JSONResponse(
            result.as_json(), headers={"X-Explore-Truncated": "1" if result.truncated else "0"}
        )
    download, filename = await run_in_threadpool(_open, body, auth, db, settings, format, name)
    headers = {
        "X-Explore-Truncated": "1" if download.truncated else "0",
        "Content-Disposition": f'attachment; filename="{filename}"',
        "Cache-Control": "no-store",
    }
    return StreamingResponse(download.chunks(), media_type=download.media_type, headers=headers)


@router.get("/queries", response_model=SavedQueriesOut, responses=ERRORS)
def list_queries(auth: ApiAuth, db: DbSession) -> JSONResponse:
    """The organization's saved queries: `{"rows": [{"id", "name", "description", "owner_user_id",
    "query"}]}`."""
    return JSONResponse({"rows": [s.as_json() for s in saved.list_saved(db, auth.org_id)]})


@router.post("/queries", status_code=201, response_model=SavedQueryOut, responses=ERRORS)
async def create_query(request: Request, auth: ApiAuth, db: DbSession) -> JSONResponse:
    """Save a query: body `{"name", "description", "query": {…the query body…}}`; answers it with its `id`."""
    created = await run_in_threadpool(saved.create_saved, db, auth.org_id, await json_body(request))
    return JSONResponse(created.as_json(), status_code=201)


def _id(query_id: str) -> int:
    if not query_id.isdigit() or len(query_id) > 12:
        raise BadQuery("id", f"{query_id[:32]!r} is not a saved query id")
    return int(query_id)


@router.get("/queries/{query_id}", response_model=SavedQueryOut, responses=ERRORS)
def get_query(query_id: str, auth: ApiAuth, db: DbSession) -> JSONResponse:
    return JSONResponse(saved.get_saved(db, auth.org_id, _id(query_id)).as_json())


@router.put("/queries/{query_id}", response_model=SavedQueryOut, responses=ERRORS)
async def replace_query(query_id: str, request: Request, auth: ApiAuth, db: DbSession) -> JSONResponse:
    """Replace a saved query's name, description and query."""
    body = await json_body(request)
    replaced = await run_in_threadpool(saved.replace_saved, db, auth.org_id, _id(query_id), body)
    return JSONResponse(replaced.as_json())


@router.delete("/queries/{query_id}", status_code=204, responses=ERRORS)
def delete_query(query_id: str, auth: ApiAuth, db: DbSession) -> Response:
    saved.delete_saved(db, auth.org_id, _id(query_id))
    return Response(status_code=204)


@router.post("/sql", include_in_schema=False, dependencies=[Depends(LocalOperator("operator SQL"))])
async def operator_sql(request: Request, settings: AppSettings) -> JSONResponse:
    """`stacklens sql`: one read-only statement (`{"sql": "SELECT …"}`), judged by the engine's parser first,
    run on a connection of its own (never the shared one) with the per-query time and memory limits; answers
    `{"columns", "rows", "meta"}`."""
    body = await json_body(request)
    sql = body.get("sql") if isinstance(body, dict) else None
    connect = partial(own_client, settings.resolved_warehouse_url, settings.warehouse_database)
    result = await run_in_threadpool(run_operator_sql, connect, sql)
    data = result.as_json()
    return JSONResponse({"columns": data["columns"], "rows": data["rows"], "meta": data["meta"]})
