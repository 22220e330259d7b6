"""An organization's read-only SQL (docs/explore.md, "SQL panels"): ``POST /api/sql`` ``{"sql", "params"}``
answers ``{"columns", "rows", "elapsed_ms", "rows_read", "bytes_read"}`` (and ``truncated``).

Two callers: the organization's API key, or a member signed in to the dashboards (their session cookie, a
JSON body, ``?organization=<slug>`` when they belong to several) whose role builds (owner, admin, member); a
viewer is refused (403). The statement runs through :func:`stacklens.explore.sql_panel.run_panel_sql`: the
operator's guard, the documented tables only, the caller's organization's rows only (the server's filter),
the query budgets. A refused or failing statement answers 400 with the engine's message and, for a syntax
error, the position where the parser stopped; a budget exceeded answers 400 naming it."""

from __future__ import annotations

from datetime import timedelta
from functools import partial
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from api.deps import DbSession, optional_api_key
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS
from stacklens.control import roles
from stacklens.control.accounts import user_memberships
from stacklens.control.signin_sessions import Lifetimes, resolve_session
from stacklens.explore.run import QueryTooCostly
from stacklens.explore.sql_panel import SqlRefused, run_panel_sql
from stacklens.ingest.front_door import settle_spooled
from stacklens.settings import Settings
from stacklens.warehouse.client import own_client

router = APIRouter(prefix="/api", tags=["sql"])


class SqlRequest(BaseModel):
    sql: Any = Field(
        description="One read-only SELECT over the documented tables (docs/explore.md, 'SQL panels').",
        examples=["SELECT release, count() AS events FROM events GROUP BY release ORDER BY events DESC"],
    )
    params: Any = Field(
        default=None,
        description='Values bound where the statement says {name:Type}, e.g. {"release": "1.4.0"}.',
    )


class SqlAnswer(BaseModel):
    columns: list[str] = Field(description="The answer's column names, in order.")
    rows: list[list[Any]] = Field(description="One array per row, its values in the columns' order.")
    elapsed_ms: float = Field(description="How long the engine took, in milliseconds.")
    rows_read: int = Field(description="Rows the engine read.")
    bytes_read: int = Field(description="Bytes the engine read.")
    truncated: bool = Field(description="Whether the answer was cut at 10,000 rows.")


class SqlError(BaseModel):
    error: str = Field(examples=["Bad Request"])
    detail: str = Field(description="The reason, in the engine's words for a statement it cannot run.")
    field: str = Field(default="sql", description="The field at fault: sql or params.")
    position: int | None = Field(default=None, description="Where the parser stopped (1-based character).")
    line: int | None = None
    col: int | None = None


ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": SqlError, "description": "Refused before it ran, failed, or stopped at a query budget."},
    403: {"model": SqlError, "description": "A viewer: only owners, admins and members run SQL."},
    404: {"model": SqlError, "description": "The signed-in member belongs to no such organization."},
    415: {"model": SqlError, "description": "A signed-in member sent no JSON body."},
    429: {"model": SqlError, "description": "The organization already runs its maximum of queries."},
}


def _caller_org(request: Request, session: Session, settings: Settings) -> int:
    """The organization of the signed-in member whose role runs SQL (401 signed out, 403 a viewer)."""
    sid = request.scope.get("session", {}).get("sid") if "session" in request.scope else None
    lifetimes = Lifetimes(
        timedelta(minutes=settings.session_idle_minutes), timedelta(days=settings.session_max_days)
    )
    user = resolve_session(session, sid, lifetimes) if sid else None
    if user is None:
        raise ApiError(401, "Unauthorized", "send the API key or sign in", {"WWW-Authenticate": "Bearer"})
    if "json" not in request.headers.get("content-type", ""):
        raise ApiError(415, "Unsupported Media Type", "send the statement as a JSON body")
    wanted = request.query_params.get("organization")
    chosen = [
        (org, role) for org, role in user_memberships(session, user.id) if not wanted or org.slug == wanted
    ]
    if not chosen:
        raise ApiError(404, "Not Found", f"organization: you are not a member of {wanted!r}")
    org, role = chosen[0]
    if not roles.writes(role):
        raise ApiError(403, "Forbidden", "viewers read dashboards; only owners, admins and members run SQL")
    return org.id


@router.post("/sql", response_model=SqlAnswer, responses=ERRORS)
async def run_sql(request: Request, body: SqlRequest, session: DbSession) -> JSONResponse:
    """One read-only SELECT over the documented tables, answered with the caller's organization's rows only:
    `{"sql": "SELECT …", "params": {…}}` → `{"columns", "rows", "elapsed_ms", "rows_read", "bytes_read"}`.
    Writes, a second statement, `SETTINGS`, table functions that reach files or the network (`file()`,
    `url()`, `s3()`, `remote()`, …), system tables and tables of other kinds are refused before it runs; the
    query budgets stop it (400 naming the budget)."""
    settings: Settings = request.app.state.settings
    key = await optional_api_key(request)
    org_id = key.org_id if key is not None else _caller_org(request, session, settings)
    settle_spooled(settings)  # every event answered before the statement is in its answer
    connect = partial(own_client, settings.resolved_warehouse_url, settings.warehouse_database)
    try:
        answer = await run_in_threadpool(
            run_panel_sql, connect, settings.warehouse_database, org_id, body.sql, body.params
        )
    except SqlRefused as exc:
        refused = SqlError(
            error="Bad Request", detail=exc.message, position=exc.position, line=exc.line, col=exc.col
        )
        return JSONResponse(refused.model_dump(), status_code=400)
    except QueryTooCostly as exc:
        return JSONResponse(SqlError(error="Bad Request", detail=str(exc)).model_dump(), status_code=400)
    return JSONResponse(answer.as_json())
