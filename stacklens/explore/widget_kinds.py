"""The widget kinds beyond line, bar, number and table (docs/explore.md, "Widget kinds"), each asked as one of
those four and drawn its own way, so the query budgets, the cache and the limits of the four apply:

- ``area``: a line filled to zero (never stacked: a p75 does not add up), asked as a line;
- ``stacked_bar``: bars stacked — over time each bucket's groups (asked as a line), else each group's
  aggregates (asked as a bar); only values that add up (counts and sums) are stacked, the
  others are refused with the reason;
- ``scatter``: one point per group, the first aggregate across, the second up (asked as a table);
- ``heatmap``: a latency distribution over time — the window's buckets across, the metric's percentiles
  (p50 … p99) up, each cell the metric's value there (asked as a line of those five percentiles, the views'
  percentiles of the metrics layer);
- ``gauge``: one value against a budget — the organization's budget of that metric and statistic when there
  is one (the dashboard's project's, else the strictest), else the catalog's good threshold — asked as a
  number (its previous window too)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import Budget, Project
from stacklens.explore.columns import format_aggregate, header
from stacklens.explore.query import PERCENTILES, Aggregate
from stacklens.metrics.catalog import find

# The kind each is asked as (stacklens.explore.widgets.under_filters).
ASKED_AS = {"area": "line", "heatmap": "line", "stacked_bar": "bar", "scatter": "table", "gauge": "number"}
PLOTTED = ("line", "bar", "area", "stacked_bar", "scatter", "heatmap")  # drawn from a WidgetPlot
ADDS_UP = ("count", "sum")
HEAT_LEVELS = tuple(PERCENTILES)  # p50, p75, p90, p95, p99: the heat map's rows, bottom up


def asked_as(kind: str, body: dict[str, Any] | None = None) -> str:
    """The kind of the four a widget is asked as; a stacked bar over time asks as a line (its groups stacked
    in each bucket), without an interval as bars per group."""
    if kind == "stacked_bar" and (body or {}).get("interval"):
        return "line"
    return ASKED_AS.get(kind, kind)


def shaped(body: dict[str, Any], kind: str) -> dict[str, Any]:
    """The widget's question as its kind asks it: a heat map asks its metric's five percentiles over time
    (the first aggregate's metric), without groups; the others ask their own question."""
    if kind != "heatmap":
        return body
    metric = next((a.get("metric") for a in body.get("aggregates") or [] if a.get("metric")), "")
    if not metric:
        return body  # refused when drawn (refusal): a distribution needs a metric's values
    out = dict(body)
    out["aggregates"] = [{"fn": level, "metric": metric} for level in HEAT_LEVELS]
    out["group_by"] = []
    out["order_by"] = ""
    return out


def refusal(kind: str, aggregates: list[Aggregate], units: int) -> str:
    """Why a widget of ``kind`` cannot draw these aggregates ('' when it can)."""
    if kind == "stacked_bar":
        loose = [header(a) for a in aggregates if a.fn not in ADDS_UP]
        if loose:
            return (
                f"Not stacked: {', '.join(loose)} values do not add up (only counts and sums stack). "
                "Show it as bars side by side."
            )
        if units > 1:
            return "Not stacked: its aggregates are in two units; a stack has one. Split the widget."
    if kind == "scatter" and len(aggregates) < 2:
        return "A scatter plots one aggregate against another: give the widget two (across, then up)."
    if kind == "heatmap" and not all(a.fn in PERCENTILES and a.metric for a in aggregates):
        return (
            "A heat map shows a timing's distribution: give the widget a metric (LCP, load time, API time…)."
        )
    return ""


@dataclass(frozen=True)
class GaugeBudget:
    value: float
    text: str  # the budget as the catalog writes it
    source: str  # "budget of project shop (every page)" or "good threshold (web.dev)"
    better: str  # "lower" or "higher": which side of the budget is within it


def gauge_budget(session: Session, org_id: int, project: str, aggregate: Aggregate) -> GaugeBudget | None:
    """The budget a gauge of ``aggregate`` is read against (None when its metric has neither a budget nor
    thresholds: the gauge then says so)."""
    metric = find(aggregate.metric) if aggregate.metric else None
    if metric is None:
        return None
    query = (
        select(Budget.value, Project.slug)
        .join(Project, Project.id == Budget.project_id)
        .where(
            Budget.org_id == org_id,
            Project.org_id == org_id,
            Budget.metric == metric.key,
            Budget.statistic == aggregate.fn,
            Budget.scope == "*",
        )
    )
    if project:
        query = query.where(Project.slug == project)
    rows = list(session.execute(query))
    if rows:
        value, slug = (min if metric.better == "lower" else max)(rows, key=lambda r: float(r[0]))
        text = format_aggregate(aggregate, float(value))
        return GaugeBudget(float(value), text, f"budget of project {slug} (every page)", metric.better)
    if metric.thresholds is None:
        return None
    good = metric.thresholds.good
    text = format_aggregate(aggregate, good)
    return GaugeBudget(good, text, f"good threshold ({metric.thresholds.source})", metric.better)


def gauge_budgets(session: Session, org_id: int, project: str, answers: list[Any]) -> dict[int, GaugeBudget]:
    """Each answered gauge's budget by its widget index (what the PDF draws it against)."""
    out = {}
    for answer in answers:
        query = answer.query
        if answer.widget["kind"] == "gauge" and query is not None and query.aggregates:
            budget = gauge_budget(session, org_id, project, query.aggregates[0])
            if budget is not None:
                out[answer.index] = budget
    return out
