"""The budget forms of the performance view: a new budget, editing and deleting one, and importing a
Lighthouse budget file; each answers the form again with the field's message when the input is refused. The
list, its exports and charts are :mod:`dashboards.routers.budgets`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.datastructures import UploadFile

from dashboards.budget_figures import budget_figure
from dashboards.context import CurrentProject, Db
from dashboards.rendering import render
from dashboards.routers.budgets import (
    BUDGETS,
    FIELDS,
    budgets_base,
    budgets_context,
    budgets_list_page,
    mark_releases,
)
from dashboards.security import check_csrf
from stacklens.control import budgets as store
from stacklens.control.db import session_scope
from stacklens.control.models import Budget
from stacklens.metrics.units import plain_number
from stacklens.performance import lighthouse_budgets as lighthouse
from stacklens.performance.budget_eval import BudgetSpec, failed_days, history
from stacklens.performance.budget_rules import (
    METRICS,
    BudgetError,
    validate_budget,
)
from stacklens.performance.budget_status import pages_seen

# Registered right after dashboards.routers.budgets (dashboards/web.py): the routes keep their order.
router = APIRouter(include_in_schema=False)


def _values(source: Any) -> dict[str, str]:
    return {k: str(source.get(k) or "").strip() for k in FIELDS}


def _owned(view: CurrentProject, db: Db, budget_id: int) -> Budget:
    found = store.budget_in_org(db, budget_id, view.org_id)
    if found is None or found[1].id != view.project_id:
        raise HTTPException(status_code=404, detail="Not Found")
    return found[0]


def _form_page(
    request: Request,
    view: CurrentProject,
    values: dict[str, str],
    budget: Budget | None,
    error: BudgetError | None = None,
    preview: bool = False,
) -> Response:
    """The add / edit form; with ``preview``, how often the draft would have failed over 30 days."""
    client = view.warehouse
    pages = pages_seen(client, view.project_id)
    summary, figure = None, None
    if preview and error is None:
        try:
            d = validate_budget(
                values["metric"],
                values["scope"],
                values["value"],
                values["statistic"],
                values["window"],
                values["min_samples"],
                pages,
            )
        except BudgetError as exc:
            error = exc
        else:
            spec = BudgetSpec(
                0, view.project_id, d.metric, d.statistic, d.scope, d.value, d.window_days, d.min_samples
            )
            points = history(client, spec)
            failed, judged = failed_days(spec, points)
            # 32 evaluations: each UTC midnight from 30 days ago to today's, and one now
            # (budget_eval.daily_points).
            summary = {
                "failed": failed,
                "judged": judged,
                "evaluations": len(points),
                "first": points[0][0] if points else None,
            }
            figure = budget_figure(
                spec, points, METRICS[d.metric].unit, "Would-be value per daily evaluation"
            )
            with session_scope(view.settings) as db:
                mark_releases(view, db, [figure], [points])
    context = budgets_context(
        request,
        view,
        values=values,
        budget=budget,
        pages=pages,
        error=str(error) if error else None,
        field=error.field if error else None,
        summary=summary,
        preview_figure=figure,
    )
    return render(request, "perf_budget_form.html", context, 400 if error else 200)


@router.get(BUDGETS + "/new", response_class=HTMLResponse)
def new_budget(request: Request, view: CurrentProject) -> Response:
    values = _values(request.query_params)
    defaults = {"metric": "lcp_ms", "statistic": "p75", "scope": "*", "window": "7", "min_samples": "20"}
    values = {k: values[k] or defaults.get(k, "") for k in FIELDS}
    return _form_page(request, view, values, None, preview="preview" in request.query_params)


@router.post(BUDGETS, response_class=HTMLResponse)
async def create(request: Request, view: CurrentProject, db: Db) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    values = _values(form)
    if form.get("preview"):  # "Preview 30 days": the form again with the draft's preview, nothing saved
        return _form_page(request, view, values, None, preview=True)
    try:
        store.create_budget(
            db,
            view.project,
            values["metric"],
            values["scope"],
            values["value"],  # type: ignore[arg-type]
            values["statistic"],
            values["window"],
            values["min_samples"],
            pages_seen(view.warehouse, view.project_id),
        )
    except BudgetError as exc:
        db.rollback()
        return _form_page(request, view, values, None, exc)
    return RedirectResponse(budgets_base(view), status_code=303)


@router.get(BUDGETS + "/{budget_id}/edit", response_class=HTMLResponse)
def edit_budget(request: Request, view: CurrentProject, db: Db, budget_id: int) -> Response:
    budget = _owned(view, db, budget_id)
    values = _values(request.query_params)
    saved = {
        "metric": budget.metric,
        "statistic": budget.statistic,
        "scope": budget.scope,
        "value": plain_number(budget.value),
        "window": str(budget.window_days),
        "min_samples": str(budget.min_samples),
    }
    values = {k: values[k] or saved[k] for k in FIELDS}
    # Opening the form shows the preview of the saved definition; "Preview 30 days" posts the draft.
    return _form_page(request, view, values, budget, preview=True)


@router.post(BUDGETS + "/{budget_id}/edit", response_class=HTMLResponse)
async def save_budget(request: Request, view: CurrentProject, db: Db, budget_id: int) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    budget = _owned(view, db, budget_id)
    values = _values(form)
    if form.get("preview"):
        return _form_page(request, view, values, budget, preview=True)
    try:
        store.update_budget(
            db,
            budget,
            view.project,
            values["metric"],
            values["scope"],
            values["value"],  # type: ignore[arg-type]
            values["statistic"],
            values["window"],
            values["min_samples"],
            pages_seen(view.warehouse, view.project_id)
            if values["scope"] not in ("", budget.scope)
            else None,
        )
    except BudgetError as exc:
        db.rollback()
        return _form_page(request, view, values, _owned(view, db, budget_id), exc)
    return RedirectResponse(budgets_base(view), status_code=303)


@router.post(BUDGETS + "/{budget_id}/delete", response_class=HTMLResponse)
async def delete(request: Request, view: CurrentProject, db: Db, budget_id: int) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    db.delete(_owned(view, db, budget_id))
    return RedirectResponse(budgets_base(view), status_code=303)


@router.post(BUDGETS + "/import", response_class=HTMLResponse)
async def import_file(request: Request, view: CurrentProject, db: Db) -> Response:
    """A Lighthouse CI budget.json (uploaded or pasted): all of it, or — when any entry is bad — none."""
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    upload = form.get("file")
    text: str | bytes = str(form.get("budget_json") or "")
    if isinstance(upload, UploadFile) and upload.filename:
        text = await upload.read()
    await form.close()  # the upload's spooled file
    try:
        if not text.strip():
            raise BudgetError("is empty: choose a file or paste its text", "budget.json")
        parsed = lighthouse.parse(text, pages_seen(view.warehouse, view.project_id))
        rows, created = store.import_budgets(db, view.project, parsed.budgets)
    except BudgetError as exc:
        db.rollback()
        return budgets_list_page(
            request, view, db, 400, import_error=str(exc), pasted=text if isinstance(text, str) else ""
        )
    db.flush()
    notice = f"Imported {len(rows)} budgets from budget.json ({created} new, {len(rows) - created} changed)."
    return budgets_list_page(request, view, db, notice=notice, not_mapped=parsed.not_mapped)
