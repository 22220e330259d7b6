"""Performance budgets of a project: `GET/POST /api/projects/{slug}/budgets`, `PUT/DELETE /api/budgets/{id}`,
and Lighthouse CI's `budget.json` at `GET/POST /api/projects/{slug}/budgets/lighthouse`.

Budgets live in the control store; each answer carries the budget's status (pass / fail / insufficient_data),
current value, samples, margin and failing-since, from the `budget_status` mart when fresh, else evaluated on
read with the same code. `GET …/budgets?format=csv|json` downloads the rows the budgets page shows. Another
organization's project or budget answers 404 exactly like one that does not exist.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, Field

from api.deps import ApiAuth, DbSession, OrgProject, Warehouse
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control import budgets as budget_store
from stacklens.control.models import Budget, Project
from stacklens.csv_cells import to_csv
from stacklens.json_values import plain
from stacklens.performance import lighthouse_budgets as lighthouse
from stacklens.performance.budget_rules import BUDGET_METRICS, MIN_SAMPLES, STATISTICS, WINDOW_DAYS
from stacklens.performance.budget_status import pages_seen, with_status

router = APIRouter(prefix="/api", tags=["budgets"])
ERRORS = {
    **AUTH_ERRORS,
    400: {
        "model": ErrorBody,
        "description": "Invalid metric, statistic, scope, value, window or min_samples.",
    },
    404: {"model": ErrorBody, "description": "No such project or budget in this organization."},
    409: {"model": ErrorBody, "description": "The metric already has a budget on that scope."},
}
METRICS_TEXT = ", ".join(f"`{m}` ({d})" for m, (d, _) in BUDGET_METRICS.items())
# Ids are 32-bit in the control store: a larger one is an unknown budget, refused by the schema as 400.
BudgetId = Annotated[int, Path(ge=1, le=2_147_483_647)]


class BudgetIn(BaseModel):
    metric: str = Field(
        description=f"One of {METRICS_TEXT}.", json_schema_extra={"enum": list(BUDGET_METRICS)}
    )
    scope: str = Field(
        default="*",
        description="`*` for every page, a page route such as `/checkout`, or a pattern such as `/products/*`"
        " (it must match a page the project has data for).",
    )
    value: float = Field(
        description="The budget: the metric passes while its current value is at most this, or at least this "
        "for a metric where higher is better (`uptime_pct`: `better` of GET /api/metrics)."
    )
    statistic: str | None = Field(
        default=None,
        description=f"One of {', '.join(STATISTICS)}; p75 by default (LCP, INP and CLS keep p75 only; API p95,"
        " the byte budgets and error % have their own).",
    )
    window: int | str = Field(
        default=WINDOW_DAYS, description="Days the value is taken over (1–30), e.g. 7 or `7d`."
    )
    min_samples: int = Field(
        default=MIN_SAMPLES, description="Fewer samples in the window than this is `insufficient_data`."
    )


class BudgetUpdate(BaseModel):
    metric: str | None = None
    scope: str | None = None
    value: float
    statistic: str | None = None
    window: int | str | None = None
    min_samples: int | None = None


class BudgetOut(BaseModel):
    """A budget with its status."""

    id: int
    project: str
    metric: str
    description: str
    statistic: str
    scope: str
    value: float
    unit: str
    window_days: int
    min_samples: int
    current_value: float | None = Field(description="The statistic over the window; null without data.")
    samples: int
    status: Literal["pass", "fail", "insufficient_data", "error"] = Field(
        description="`insufficient_data`: fewer samples than min_samples, or none; `error`: the budget could not"
        " be evaluated (see `error`; it is evaluated again after a backoff)."
    )
    margin: float | None = Field(
        description="value − current_value (current_value − value where higher is better): negative when "
        "the budget fails."
    )
    failing_since: datetime | None = Field(description="First daily evaluation of the current failing run.")
    evaluated_at: datetime
    created_at: str
    error: str = Field(default="", description="Why the budget could not be evaluated (status `error`).")


class BudgetList(BaseModel):
    budgets: list[BudgetOut]


class ImportResult(BaseModel):
    budgets: list[BudgetOut]
    created: int
    updated: int
    not_mapped: list[str] = Field(
        description="Entries of the file with no budget here (lab-only metrics, counts)."
    )


def _out(rows: list[budget_store.BudgetRow], warehouse: Warehouse) -> list[BudgetOut]:
    return [BudgetOut(**row) for row in with_status(warehouse, rows)]


@router.get("/projects/{slug}/budgets", response_model=BudgetList, responses=ERRORS)
def list_budgets(
    project: OrgProject,
    session: DbSession,
    warehouse: Warehouse,
    format: Annotated[Literal["", "json", "csv"], Query(description="`csv` or `json`: a download.")] = "",
) -> Any:
    """The project's budgets with their status; `?format=csv|json` downloads the rows of the budgets page."""
    rows = with_status(warehouse, budget_store.list_budgets(session, project))
    name = f"{project.slug}-budgets"
    if format == "csv":
        return PlainTextResponse(
            to_csv(rows),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}.csv"'},
        )
    if format == "json":
        return JSONResponse(
            {"budgets": plain(rows)}, headers={"Content-Disposition": f'attachment; filename="{name}.json"'}
        )
    return BudgetList(budgets=[BudgetOut(**row) for row in rows])


@router.post("/projects/{slug}/budgets", response_model=BudgetOut, status_code=201, responses=ERRORS)
def create_budget(project: OrgProject, body: BudgetIn, session: DbSession, warehouse: Warehouse) -> BudgetOut:
    """Add a budget; its status is in the answer, and the budgets run (every 5 minutes) keeps it current."""
    row = budget_store.create_budget(
        session,
        project,
        body.metric,
        body.scope,
        body.value,
        body.statistic,
        body.window,
        body.min_samples,
        pages_seen(warehouse, project.id) if body.scope.strip() not in ("", "*") else None,
    )
    return _out([row], warehouse)[0]


def _owned(session: DbSession, budget_id: int, org_id: int) -> tuple[Budget, Project]:
    found = budget_store.budget_in_org(session, budget_id, org_id)
    if found is None:
        raise ApiError(404, "Not Found", f"no budget {budget_id} in this organization")
    return found


@router.put("/budgets/{budget_id}", response_model=BudgetOut, responses=ERRORS)
def update_budget(
    budget_id: BudgetId, body: BudgetUpdate, identity: ApiAuth, session: DbSession, warehouse: Warehouse
) -> BudgetOut:
    """Change a budget's value (and optionally its metric, scope, statistic, window or minimum samples)."""
    budget, project = _owned(session, budget_id, identity.org_id)
    scope_changes = body.scope is not None and body.scope.strip() != budget.scope
    row = budget_store.update_budget(
        session,
        budget,
        project,
        body.metric,
        body.scope,
        body.value,
        body.statistic,
        body.window,
        body.min_samples,
        pages_seen(warehouse, project.id) if scope_changes else None,
    )
    return _out([row], warehouse)[0]


@router.delete("/budgets/{budget_id}", status_code=204, responses=ERRORS)
def delete_budget(budget_id: BudgetId, identity: ApiAuth, session: DbSession) -> Response:
    """Delete a budget; it leaves the `budget_status` mart on the next budgets run."""
    budget, _ = _owned(session, budget_id, identity.org_id)
    session.delete(budget)
    return Response(status_code=204)


class LighthouseTiming(BaseModel):
    metric: str = Field(
        description="A Lighthouse timing: first-contentful-paint, largest-contentful-paint, …"
    )
    budget: float = Field(description="Milliseconds (cumulative-layout-shift: unitless).")


class LighthouseResourceSize(BaseModel):
    resourceType: str = Field(description="script, stylesheet, image, font, document, total, …")  # noqa: N815
    budget: float = Field(description="KiB, as Lighthouse counts transfer sizes.")


class LighthouseBudget(BaseModel):
    """One entry of Lighthouse CI's `budget.json`: the budgets of one path."""

    path: str
    timings: list[LighthouseTiming] | None = None
    resourceSizes: list[LighthouseResourceSize] | None = None  # noqa: N815


@router.get("/projects/{slug}/budgets/lighthouse", response_model=list[LighthouseBudget], responses=ERRORS)
def export_lighthouse(project: OrgProject, session: DbSession) -> JSONResponse:
    """The budgets as Lighthouse CI's `budget.json`; the header `X-Budgets-Not-Exported` lists those it
    cannot express (INP, load time, API p95, error %, statistics other than p75)."""
    entries, skipped = lighthouse.export(budget_store.list_budgets(session, project))
    return JSONResponse(
        entries,
        headers={
            "Content-Disposition": f'attachment; filename="{project.slug}-budget.json"',
            "X-Budgets-Not-Exported": "; ".join(skipped),
        },
    )


@router.post("/projects/{slug}/budgets/lighthouse", response_model=ImportResult, responses=ERRORS)
async def import_lighthouse(
    project: OrgProject, request: Request, session: DbSession, warehouse: Warehouse
) -> ImportResult:
    """Import a Lighthouse CI `budget.json` (the request body): every mapped budget is created or changed,
    or — when any entry is bad — none is; what has no budget here is listed in `not_mapped`."""
    parsed = lighthouse.parse(await request.body(), pages_seen(warehouse, project.id))
    rows, created = budget_store.import_budgets(session, project, parsed.budgets)
    return ImportResult(
        budgets=_out(rows, warehouse),
        created=created,
        updated=len(rows) - created,
        not_mapped=parsed.not_mapped,
    )
