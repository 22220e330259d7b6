"""A dashboard drawn with its variables, drill-down and the kinds drawn their own way (docs/explore.md,
"Variables", "Drill-down", "Widget kinds"): the variables' values to choose from (asked in the window, kept a
minute with the widgets' answers), every widget's question with them applied
(:func:`stacklens.explore.dashboard_variables.with_variables`), the widgets answered and drawn
(:func:`dashboards.dashboard_snapshot.widget_views`), then per widget:

- a widget that uses a variable with no values says "no values" instead of drawing an empty chart;
- a widget whose data has no field for a column variable says it is not filtered by it;
- a gauge's figure against its budget (:func:`stacklens.explore.widget_kinds.gauge_budget`), worded;
- with ``links``, each drawn point's drill-down link (:mod:`dashboards.widget_drill`)."""

from __future__ import annotations

from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy.orm import Session

from dashboards.dashboard_snapshot import widget_views
from dashboards.widget_drill import drill_links
from dashboards.widget_kind_figures import gauge_figure
from stacklens.explore import dashboard_variables as dv
from stacklens.explore.dashboards import Board
from stacklens.explore.widget_cache import widget_cache_for
from stacklens.explore.widget_kinds import gauge_budget
from stacklens.explore.widget_plot import widget_plot
from stacklens.settings import Settings
from stacklens.warehouse.client import analyst_client


def variable_choices(
    settings: Settings,
    db: Session,
    org_id: int,
    board: Board,
    filters: dict[str, str],
    chosen: dict[str, str],
    now: datetime,
) -> list[dict[str, Any]]:
    """Each variable as the page's bar offers it: name, column, the value chosen and the values to choose."""
    variables = dv.variables_of(board.variables)
    if not variables:
        return []
    widgets = dv.with_variables(db, org_id, board.widgets, variables, {v.name: "" for v in variables})
    with ExitStack() as opened:
        connection: list[Client] = []

        def analyst() -> Client:
            if not connection:
                connection.append(opened.enter_context(analyst_client(settings)))
            return connection[0]

        options = dv.variable_options(
            analyst, db, org_id, variables, widgets, filters, now, widget_cache_for(settings)
        )
    return [
        {
            "name": v.name,
            "label": v.label,
            "column": v.column,
            "value": chosen.get(v.name, ""),
            "options": options.get(v.name, []),
        }
        for v in variables
    ]


def board_views(
    settings: Settings,
    db: Session,
    org_id: int,
    org_slug: str,
    board: Board,
    filters: dict[str, str],
    chosen: dict[str, str],
    *,
    links: bool = True,
    now: datetime | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(views, variables)``: the widgets as :func:`widget_views` draws them with the variables applied, and
    the variables' bar (:func:`variable_choices`)."""
    now = now or datetime.now(UTC)
    choices = variable_choices(settings, db, org_id, board, filters, chosen, now)
    variables = dv.variables_of(board.variables)
    widgets = dv.with_variables(db, org_id, board.widgets, variables, chosen)
    views = widget_views(settings, db, org_id, org_slug, widgets, filters, links=links, now=now)
    empty = dv.empty_variables(variables, {c["name"]: c["options"] for c in choices})
    for view in views:
        answer = view["answer"]
        widget = answer.widget
        if lacking := dv.no_values(widget, empty):
            view["no_values"] = lacking
        unfiltered = widget.get("variables_unfiltered") or []
        view["unfiltered"] = (
            f"Not filtered by {', '.join('$' + n for n in unfiltered)}: its data has no such field."
            if unfiltered
            else ""
        )
        if widget["kind"] == "gauge":
            view.update(gauge_view(db, org_id, filters, answer, view))
        if links and view["figure"] is not None:
            view["figure"]["drill"] = drill_links(org_slug, answer, widget_plot(answer))
    return views, choices


def gauge_view(
    db: Session, org_id: int, filters: dict[str, str], answer: Any, view: dict[str, Any]
) -> dict[str, Any]:
    """A gauge's figure and words: its value against the budget, within or beyond it."""
    query, value = answer.query, answer.number
    if query is None or not query.aggregates or not view["columns"]:
        return {}
    column = view["columns"][0]
    budget = gauge_budget(db, org_id, filters.get("project", ""), query.aggregates[0])
    if budget is None:
        return {"gauge": {"budget": "", "verdict": f"No budget for {column.header}: shown as a number."}}
    words = {"budget": f"Budget {budget.text}, the {budget.source}", "value": column.format(value)}
    if value is None:
        return {"gauge": {**words, "verdict": "No value in this window to judge."}}
    within = budget.value >= value if budget.better == "lower" else value >= budget.value
    beyond = "over budget" if budget.better == "lower" else "under budget"
    rows = view["layout"]["h"]
    samples = int(answer.result.rows[0].get("samples") or 0) if answer.result and answer.result.rows else 0
    return {
        "figure": gauge_figure(float(value), column, budget, rows, samples),
        "gauge": {**words, "verdict": "within budget" if within else beyond, "within": within},
    }
