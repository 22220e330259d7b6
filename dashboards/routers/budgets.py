"""The budgets page of a project (`…/performance/budgets`, docs/reference.md): every budget with its status
(pass /
fail / insufficient data), current value, margin, samples, failing-since and a 30-day chart; forms to add,
edit (with a 30-day "would have failed" preview) and delete budgets; Lighthouse CI budget.json import and
export; CSV and JSON downloads of the table. Members of the organization manage budgets, as API keys do.

Here: the list, its charts and downloads, and the Lighthouse export; the forms (add, edit, delete, import) are
:mod:`dashboards.routers.budget_forms`, registered right after this router.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from sqlalchemy.orm import Session

from dashboards.budget_figures import budget_figure
from dashboards.context import CurrentProject, Db
from dashboards.marker_figures import mark_charts
from dashboards.rendering import render
from dashboards.routers.performance import TABS, perf_path
from stacklens.alerts.rule_types import BUDGET_METRIC_MAP
from stacklens.control import budgets as store
from stacklens.csv_cells import to_csv
from stacklens.isolation import failure_text, is_shared_outage
from stacklens.json_values import plain
from stacklens.metrics.units import plain_number
from stacklens.performance import lighthouse_budgets as lighthouse
from stacklens.performance.budget_eval import ERROR, BudgetSpec, Point, histories, history
from stacklens.performance.budget_rules import (
    FIXED_STATISTIC,
    METRICS,
    MIN_SAMPLES,
    STATISTICS,
    WINDOW_DAYS,
)
from stacklens.performance.budget_status import BudgetStatusRow, pages_seen, with_status

router = APIRouter(include_in_schema=False)
BUDGETS = "/orgs/{org_slug}/projects/{project_slug}/performance/budgets"
FIELDS = ("metric", "statistic", "scope", "value", "window", "min_samples")


def budgets_base(view: CurrentProject) -> str:
    return perf_path(view) + "/budgets"


def budgets_context(request: Request, view: CurrentProject, **extra: Any) -> dict[str, Any]:
    base = perf_path(view)
    tabs = [(base + suffix, label, suffix == "/budgets") for suffix, label in TABS]
    return {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "tabs": tabs,
        "budgets_path": budgets_base(view),
        "metrics": METRICS,
        "statistics": STATISTICS,
        "fixed": FIXED_STATISTIC,
        "error": None,
        "field": None,
        "notice": None,
        **extra,
    }


def alert_link(view: CurrentProject, row: BudgetStatusRow) -> str | None:
    """New Rule prefilled to alert when this budget fails: every budget metric is a rule metric (the metric
    catalog's budget metrics); None only for a stored budget on a metric the catalog no longer has."""
    if row["metric"] not in BUDGET_METRIC_MAP:
        return None
    metric, statistic = BUDGET_METRIC_MAP[row["metric"]]
    query = {
        "type": "performance_budget",
        "metric": metric,
        "statistic": row["statistic"] if metric == row["metric"] else statistic,
        "scope": row["scope"],
        "project": view.project.slug,
        "threshold": plain_number(row["value"]),
        "window": f"{row['window_days']}d",
        "min_samples": row["min_samples"],
        "name": f"Budget: {row['metric']} on {row['scope']}",
    }
    return f"/orgs/{view.viewer.org.slug}/alerts/new?" + urlencode(query)


def _table(view: CurrentProject, db: Db) -> list[BudgetStatusRow]:
    return with_status(view.warehouse, store.list_budgets(db, view.project))


def _spec(view: CurrentProject, row: BudgetStatusRow) -> BudgetSpec:
    return BudgetSpec(
        row["id"],
        view.project_id,
        row["metric"],
        row["statistic"],
        row["scope"],
        row["value"],
        row["window_days"],
        row["min_samples"],
    )


def _all_histories(client: Any, view: CurrentProject, rows: list[BudgetStatusRow]) -> dict[int, list[Point]]:
    """Every chart's 30 days in one query per evaluation time (each ending on its row's status); none when
    that raises: each chart is then read on its own by :func:`_history`, so a broken budget is told apart."""
    out: dict[int, list[Point]] = {}
    times = {row["evaluated_at"] for row in rows if row["status"] != ERROR}
    for at in times:
        chosen = [r for r in rows if r["status"] != ERROR and r["evaluated_at"] == at]
        try:
            found = histories(
                client,
                [_spec(view, r) for r in chosen],
                at,
                [(r["current_value"], r["samples"]) for r in chosen],
            )
        except Exception as exc:
            if is_shared_outage(exc):
                raise
            continue
        out.update((r["id"], points) for r, points in zip(chosen, found, strict=True))
    return out


def _history(
    client: Any, spec: BudgetSpec, row: BudgetStatusRow, known: dict[int, list[Point]]
) -> list[Point]:
    """The budget's 30 days; none for a budget that cannot be evaluated (its row shows why), so one broken
    budget leaves the page and the other budgets' charts as they are."""
    if row["status"] == ERROR:
        return []
    if row["id"] in known:
        return known[row["id"]]
    try:
        # Ending on the evaluation the status is: the chart's last point is the status's value.
        return history(client, spec, row["evaluated_at"], (row["current_value"], row["samples"]))
    except Exception as exc:
        if is_shared_outage(exc):
            raise
        row["status"], row["error"] = ERROR, failure_text(exc, f"the history of budget {spec.id}")
        return []


def mark_releases(
    view: CurrentProject, db: Session, figures: Iterable[Any], drawn: list[list[Point]]
) -> None:
    """The project's releases and annotations on the budget charts, over the span of their evaluations (each
    chart's axis runs from its first evaluation to its last)."""
    times = [at for points in drawn for at, _, _ in points[:1] + points[-1:]]
    if times:
        since, until = min(times), max(times) + timedelta(seconds=1)
        mark_charts(
            figures, view.warehouse, db, view.org_id, view.viewer.org.slug, [view.project_id], since, until
        )


def budgets_list_page(
    request: Request, view: CurrentProject, db: Db, status_code: int = 200, **extra: Any
) -> Response:
    client = view.warehouse
    rows = _table(view, db)
    figures, links, drawn = {}, {}, []
    known = _all_histories(client, view, rows)
    for row in rows:
        spec = _spec(view, row)
        everything = "every uptime check" if row["metric"] == "uptime_pct" else "all pages"
        title = f"{METRICS[row['metric']].label} on {everything if row['scope'] == '*' else row['scope']}"
        points = _history(client, spec, row, known)
        drawn.append(points)
        figures[row["id"]] = budget_figure(spec, points, row["unit"], title + " · last 30 days")
        links[row["id"]] = alert_link(view, row)
    mark_releases(view, db, figures.values(), drawn)
    counts = {
        s: sum(1 for r in rows if r["status"] == s) for s in ("pass", "fail", "insufficient_data", "error")
    }
    context = budgets_context(
        request,
        view,
        rows=rows,
        figures=figures,
        alert_links=links,
        counts=counts,
        values=extra.pop(
            "values", {"statistic": "p75", "scope": "*", "window": WINDOW_DAYS, "min_samples": MIN_SAMPLES}
        ),
        pages=pages_seen(client, view.project_id),
        **extra,
    )
    return render(request, "perf_budgets.html", context, status_code)


@router.get(BUDGETS, response_class=HTMLResponse)
def budgets_page(request: Request, view: CurrentProject, db: Db) -> Response:
    return budgets_list_page(request, view, db)


@router.get(BUDGETS + "/export.{fmt}")
def download(view: CurrentProject, db: Db, fmt: str) -> Response:
    """The table as CSV or JSON: the rows and numbers of the page (and of `GET /api/…/budgets?format=`)."""
    name = f"{view.project.slug}-budgets"
    if fmt == "csv":
        return PlainTextResponse(
            to_csv(_table(view, db)),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}.csv"'},
        )
    if fmt == "json":
        return JSONResponse(
            {"budgets": plain(_table(view, db))},
            headers={"Content-Disposition": f'attachment; filename="{name}.json"'},
        )
    raise HTTPException(status_code=404, detail="Not Found")


@router.get(BUDGETS + "/budget.json")
def export_lighthouse(view: CurrentProject, db: Db) -> JSONResponse:
    entries, skipped = lighthouse.export(store.list_budgets(db, view.project))
    return JSONResponse(
        entries,
        headers={
            "Content-Disposition": f'attachment; filename="{view.project.slug}-budget.json"',
            "X-Budgets-Not-Exported": "; ".join(skipped),
        },
    )
