"""`POST /api/pipelines/run`, `POST /api/pipelines/backfill`, `GET /api/pipelines/status` and
`GET /api/pipelines/budgets`: the local operator's door to the pipelines.

Only for the process that owns the embedded warehouse: `stacklens pipelines run|status` calls these with
the token `stacklens serve` wrote to ``<data_dir>/pipelines_token`` (header ``X-StackLens-Pipelines-Token``).
Organization API keys are not accepted: the marts span every organization. Requests from other hosts are
refused even with the token.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from api.deps import DbSession, Warehouse, require_local_operator
from api.errors import ApiError
from api.routers.budgets import BudgetOut
from stacklens.control import budgets as budget_store
from stacklens.control.projects import project_by_slug
from stacklens.performance.budget_status import pages_seen, with_status

router = APIRouter(prefix="/api/pipelines", tags=["pipelines"], include_in_schema=False)


class RunRequestBody(BaseModel):
    select: list[str] | None = Field(default=None, description="Only jobs holding these asset keys.")


class BackfillBody(BaseModel):
    first: str = Field(alias="from", description="First day (YYYY-MM-DD), included.")
    last: str = Field(alias="to", description="Last day (YYYY-MM-DD), included.")
    select: list[str] | None = Field(default=None, description="Only jobs holding these asset keys.")


class RunOutcomeOut(BaseModel):
    """One executed run: per asset the rows it wrote, per check whether it passed."""

    job: str
    run_id: str
    success: bool
    error: str = ""
    assets: dict[str, int | None] = Field(description="Asset key → rows written (null when not counted).")
    checks: dict[str, bool] = Field(description="`asset:check` → passed.")


class RunAnswer(BaseModel):
    outcomes: list[RunOutcomeOut]


class RecentRun(BaseModel):
    run_id: str
    job: str
    jobs: list[str] = Field(description="The scheduled jobs a merged tick run stood for.")
    status: str
    schedule: str
    started_at: str | None
    ended_at: str | None


class FailedRun(BaseModel):
    run_id: str
    job: str
    ended_at: str | None


class StatusAnswer(BaseModel):
    runs: list[RecentRun]
    failures: list[FailedRun]
    marts: dict[str, int] = Field(description="Mart → rows.")


class BudgetsAnswer(BaseModel):
    budgets: list[BudgetOut]
    pages: list[str] = Field(description="The page routes the project has data for.")


def _runner(request: Request) -> Any:
    """The server's embedded runner after checking the caller is local and holds the token.

    The composition root puts it on ``app.state`` (``stacklens.cli.serve``); it answers ``asset_keys()``,
    ``run_now(select)`` and ``status()``, so this router needs nothing from the pipelines package.
    """
    runner = getattr(request.app.state, "pipelines_runner", None)
    if runner is None or not getattr(request.app.state, "pipelines_token", None):
        raise ApiError(404, "Not Found", "this server does not run the pipelines")
    require_local_operator(request, "the pipelines endpoint")
    return runner


# Any: the runner's type lives in the pipelines package, which this adapter does not import.
Runner = Annotated[Any, Depends(_runner)]


@router.post("/run", response_model=RunAnswer)
def run(body: RunRequestBody, runner: Runner) -> dict[str, Any]:
    """Materialize now in this process; per run: job, success, error, rows per asset, check results."""
    unknown = sorted(set(body.select or []) - runner.asset_keys())
    if unknown:
        raise ApiError(400, "Bad Request", f"unknown asset {', '.join(unknown)}")
    return {"outcomes": [o.as_dict() for o in runner.run_now(body.select)]}


@router.post("/backfill", response_model=RunAnswer)
def backfill(body: BackfillBody, runner: Runner) -> dict[str, Any]:
    """Rebuild the daily-partitioned marts for a range of days in this process (`stacklens pipelines
    backfill`): one run per partitioned job; a bad day or selection answers 400 naming the option."""
    try:
        outcomes = runner.backfill(body.first, body.last, body.select)
    except ValueError as exc:  # BackfillError: the message names --from, --to or --select
        raise ApiError(400, "Bad Request", str(exc)) from exc
    return {"outcomes": [o.as_dict() for o in outcomes]}


@router.get("/status", response_model=StatusAnswer)
def status(runner: Runner) -> dict[str, Any]:
    """Recent runs, failed runs and the row count of every mart."""
    answer: dict[str, Any] = runner.status()
    return answer


@router.get("/budgets", response_model=BudgetsAnswer, dependencies=[Depends(_runner)])
def budgets(project: str, session: DbSession, warehouse: Warehouse) -> BudgetsAnswer:
    """A project's budgets with their status and the pages it has data for: `stacklens budgets` while this
    server owns the embedded warehouse (the same rows as `GET /api/projects/{slug}/budgets`)."""
    found = project_by_slug(session, project)
    rows = with_status(warehouse, budget_store.list_budgets(session, found))
    return BudgetsAnswer(budgets=[BudgetOut(**row) for row in rows], pages=pages_seen(warehouse, found.id))
