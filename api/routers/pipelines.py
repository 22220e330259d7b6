"""`POST /api/pipelines/run`, `GET /api/pipelines/status` and `GET /api/pipelines/budgets`: the local operator's door to the pipelines.

Only for the process that owns the embedded warehouse: `stacklens pipelines run|status` calls these with
the token `stacklens serve` wrote to ``<data_dir>/pipelines_token`` (header ``X-StackLens-Pipelines-Token``).
Organization API keys are not accepted: the marts span every organization. Requests from other hosts are
refused even with the token.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from api.deps import DbSession, Warehouse
from api.errors import ApiError
from stacklens.control import accounts
from stacklens.control import budgets as budget_store
from stacklens.json_values import plain
from stacklens.performance.budget_status import pages_seen, with_status
from stacklens.server_link import TOKEN_HEADER, token_matches

router = APIRouter(prefix="/api/pipelines", tags=["pipelines"], include_in_schema=False)


class RunRequestBody(BaseModel):
    select: list[str] | None = Field(default=None, description="Only jobs holding these asset keys.")


def _runner(request: Request) -> Any:
    """The server's embedded runner after checking the caller is local and holds the token.

    The composition root puts it on ``app.state`` (``stacklens.cli.serve``); it answers ``asset_keys()``,
    ``run_now(select)`` and ``status()``, so this router needs nothing from the pipelines package.
    """
    runner = getattr(request.app.state, "pipelines_runner", None)
    expected = getattr(request.app.state, "pipelines_token", None)
    if runner is None or not expected:
        raise ApiError(404, "Not Found", "this server does not run the pipelines")
    host = request.client.host if request.client else ""
    try:
        local = ipaddress.ip_address(host).is_loopback
    except ValueError:
        local = host in ("testclient", "localhost")
    if not local:
        raise ApiError(403, "Forbidden", "the pipelines endpoint answers local requests only")
    if not token_matches(expected, request.headers.get(TOKEN_HEADER)):
        raise ApiError(401, "Unauthorized", f"send the token of <data_dir>/pipelines_token as {TOKEN_HEADER}")
    return runner


@router.post("/run")
def run(body: RunRequestBody, request: Request) -> dict[str, Any]:
    """Materialize now in this process; per run: job, success, error, rows per asset, check results."""
    runner = _runner(request)
    unknown = sorted(set(body.select or []) - runner.asset_keys())
    if unknown:
        raise ApiError(400, "Bad Request", f"unknown asset {', '.join(unknown)}")
    return {"outcomes": [o.as_dict() for o in runner.run_now(body.select)]}


@router.get("/status")
def status(request: Request) -> dict[str, Any]:
    """Recent runs, failed runs and the row count of every mart."""
    runner = _runner(request)
    return runner.status()


@router.get("/budgets")
def budgets(request: Request, project: str, session: DbSession, warehouse: Warehouse) -> dict[str, Any]:
    """A project's budgets with their status and the pages it has data for: `stacklens budgets` while this
    server owns the embedded warehouse (the same rows as `GET /api/projects/{slug}/budgets`)."""
    _runner(request)
    found = accounts.project_by_slug(session, project)
    rows = with_status(warehouse, budget_store.list_budgets(session, found))
    return {"budgets": plain(rows), "pages": pages_seen(warehouse, found.id)}
