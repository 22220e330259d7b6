"""Performance budgets of a project: `GET/POST /api/projects/{slug}/budgets`, `PUT/DELETE /api/budgets/{id}`.

Budgets live in the control store; the `budget_status` mart evaluates them (every 5 minutes) and the
answers carry its latest current value and pass/fail. Another organization's project or budget answers
404 exactly like one that does not exist.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, get_type_hints

from fastapi import APIRouter, Path, Response
from pydantic import BaseModel, Field, create_model

from api.deps import ApiAuth, AppSettings, DbSession
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control import accounts
from stacklens.control import budgets as budget_store
from stacklens.control.models import Budget, Project
from stacklens.performance.budget_rules import BUDGET_METRICS
from stacklens.settings import Settings

router = APIRouter(prefix="/api", tags=["budgets"])
ERRORS = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "Invalid metric, scope or value."},
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
        default="*", description="`*` for the whole project, or a page route such as `/checkout`."
    )
    value: float = Field(description="The budget: the metric passes while its current value is at most this.")


class BudgetUpdate(BaseModel):
    metric: str | None = None
    scope: str | None = None
    value: float


# The answer lists a budget as the core's BudgetRow has it (one definition of the fields), minus the
# internal ids: the project is named by its slug.
INTERNAL_FIELDS = frozenset({"org_id", "project_id"})
_ROW_TYPES = get_type_hints(budget_store.BudgetRow)
BudgetFields = create_model(  # type: ignore[call-overload]
    "BudgetFields", **{name: (kind, ...) for name, kind in _ROW_TYPES.items() if name not in INTERNAL_FIELDS}
)


class BudgetOut(BudgetFields):  # type: ignore[misc, valid-type]
    """A budget with its latest evaluation."""

    current_value: float | None = Field(description="Latest evaluation (last 7 days); null before the first.")
    passed: bool | None = Field(
        description="Whether the current value is within the budget; null before the first evaluation."
    )
    evaluated_at: str | None


class BudgetList(BaseModel):
    budgets: list[BudgetOut]


def _evaluations(
    settings: Settings, org_id: int, ids: list[int]
) -> dict[int, tuple[float | None, bool, str]]:
    """The latest `budget_status` row of each budget (the organization's rows only)."""
    if not ids:
        return {}
    from stacklens.warehouse.client import get_warehouse

    rows = (
        get_warehouse(settings)
        .query(
            "SELECT budget_id, argMax(current_value, evaluated_at), argMax(passed, evaluated_at), max(evaluated_at)"
            " FROM budget_status WHERE org_id = {org:UInt64} AND budget_id IN {ids:Array(UInt64)} GROUP BY budget_id",
            parameters={"org": org_id, "ids": ids},
        )
        .result_rows
    )
    return {
        int(b): (None if c is None else float(c), bool(p), at.isoformat().replace("+00:00", "Z"))
        for b, c, p, at in rows
    }


def _out(rows: list[budget_store.BudgetRow], settings: Settings, org_id: int) -> list[BudgetOut]:
    evaluated = _evaluations(settings, org_id, [r.id for r in rows])
    out = []
    for row in rows:
        current, passed, at = evaluated.get(row.id, (None, None, None))
        public = {k: v for k, v in asdict(row).items() if k not in INTERNAL_FIELDS}
        out.append(BudgetOut(**public, current_value=current, passed=passed, evaluated_at=at))
    return out


@router.get("/projects/{slug}/budgets", response_model=BudgetList, responses=ERRORS)
def list_budgets(slug: str, identity: ApiAuth, session: DbSession, settings: AppSettings) -> BudgetList:
    """The project's budgets with their latest evaluation."""
    project = accounts.project_by_slug(session, slug, org_id=identity.org_id)
    return BudgetList(budgets=_out(budget_store.list_budgets(session, project), settings, identity.org_id))


@router.post("/projects/{slug}/budgets", response_model=BudgetOut, status_code=201, responses=ERRORS)
def create_budget(
    slug: str, body: BudgetIn, identity: ApiAuth, session: DbSession, settings: AppSettings
) -> BudgetOut:
    """Add a budget; it is evaluated on the next budgets run (every 5 minutes)."""
    project = accounts.project_by_slug(session, slug, org_id=identity.org_id)
    row = budget_store.create_budget(session, project, body.metric, body.scope, body.value)
    return _out([row], settings, identity.org_id)[0]


def _owned(session: DbSession, budget_id: int, org_id: int) -> tuple[Budget, Project]:
    found = budget_store.budget_in_org(session, budget_id, org_id)
    if found is None:
        raise ApiError(404, "Not Found", f"no budget {budget_id} in this organization")
    return found


@router.put("/budgets/{budget_id}", response_model=BudgetOut, responses=ERRORS)
def update_budget(
    budget_id: BudgetId, body: BudgetUpdate, identity: ApiAuth, session: DbSession, settings: AppSettings
) -> BudgetOut:
    """Change a budget's value (and optionally its metric or scope)."""
    budget, project = _owned(session, budget_id, identity.org_id)
    row = budget_store.update_budget(session, budget, project, body.metric, body.scope, body.value)
    return _out([row], settings, identity.org_id)[0]


@router.delete("/budgets/{budget_id}", status_code=204, responses=ERRORS)
def delete_budget(budget_id: BudgetId, identity: ApiAuth, session: DbSession) -> Response:
    """Delete a budget; it leaves the `budget_status` mart on the next budgets run."""
    budget, _ = _owned(session, budget_id, identity.org_id)
    session.delete(budget)
    return Response(status_code=204)
