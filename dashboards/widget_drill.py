"""A dashboard widget's drill-down (docs/explore.md, "Drill-down"): a click on a point or bar opens that
slice — the widget's question as it ran (the dashboard's window, filters and variables already in it)
narrowed to the point's group (``field = value`` per group field) and, over time, to the point's bucket
(``since``/``until``). Where the slice is one page of page loads, the click opens that page's vitals (the
performance page's page detail, over the slice's window); where it is one issue's events, the issue;
otherwise Explore.

The links are one list per trace, one link per point, in the trace order of the figure
(:func:`dashboards.dashboard_figures.widget_figure`); the page's script (``static/dashboard.js``) opens the
clicked point's link. The shared snapshot and the PDF carry none (they link into no signed-in page)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, urlencode

from dashboards.explore_links import explore_url
from stacklens.explore.query import INTERVALS, Query
from stacklens.explore.widget_plot import MAX_LINES, WidgetPlot
from stacklens.explore.widgets import WidgetAnswer

PAGE_DETAIL = "/orgs/{org}/projects/{project}/performance/pages/detail"
ISSUE = "/orgs/{org}/projects/{project}/issues/{issue_id}"


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _parse(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def slice_link(
    org_slug: str, body: dict[str, Any], group: dict[str, Any] | None, bucket: tuple[str, str] | None
) -> str:
    """The link of one slice of the question ``body``: its group's values as filters, its bucket as window."""
    out = dict(body)
    filters = list(out.get("filters") or [])
    project = str(out.get("project") or "")
    for field, value in (group or {}).items():
        filters = [f for f in filters if f.get("field") != field]
        filters.append({"field": field, "op": "=", "value": str(value)})
    out["filters"] = filters
    if bucket is not None:
        out["since"], out["until"] = bucket
    values = {f["field"]: f["value"] for f in filters if f.get("op") == "=" and isinstance(f["value"], str)}
    if project and out.get("dataset") == "pageloads" and values.get("page"):
        window = {"since": out["since"], "until": out["until"]}
        kept = {k: values[k] for k in ("environment", "release", "browser") if values.get(k)}
        query = urlencode({"page": values["page"], **window, **kept})
        return PAGE_DETAIL.format(org=quote(org_slug), project=quote(project)) + "?" + query
    if project and out.get("dataset") == "errors" and str(values.get("issue_id", "")).isdigit():
        issue = ISSUE.format(org=quote(org_slug), project=quote(project), issue_id=values["issue_id"])
        return issue
    return explore_url(org_slug, out)


def _group_of(query: Query, row: dict[str, Any]) -> dict[str, Any]:
    return {g: row.get(g) for g in query.group_by}


def drill_links(org_slug: str, answer: WidgetAnswer, plot: WidgetPlot | None) -> list[list[str]]:
    """One list of links per drawn trace (one per point), in the figure's trace order; [] when the widget
    draws no plot."""
    query, result, body = answer.query, answer.result, answer.body
    if plot is None or plot.refusal or query is None or result is None or not body:
        return []
    kind = answer.widget["kind"]
    buckets: list[tuple[str, str] | None] = [None] * len(plot.x)
    if plot.time:
        step: timedelta = INTERVALS[query.interval]
        buckets = [(t, _iso(min(_parse(t) + step, query.window.until))) for t in plot.x]
    if kind == "heatmap":
        return [[slice_link(org_slug, body, None, b) for b in buckets]]
    if not plot.time:
        groups: list[dict[str, Any] | None] = [_group_of(query, r) for r in result.rows]
        groups += [None] * (len(plot.x) - len(groups))  # "others": the question without a group
        if kind == "scatter":
            return [[slice_link(org_slug, body, g, None) for g in groups]]
        return [[slice_link(org_slug, body, g, None) for g in groups] for _ in plot.lines]
    series = [s["group"] for s in result.series[:MAX_LINES]] or [{}]
    out = []
    for n, _line in enumerate(plot.lines):
        group = series[n % len(series)] if n < len(series) * len(query.aggregates) else None
        out.append([slice_link(org_slug, body, group, b) for b in buckets])
    return out
