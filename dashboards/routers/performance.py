"""The performance pages of a project (docs/reference.md): overview, pages and one page, resources, API
endpoints
and one endpoint, one page load's waterfall, weekly trends, release impact and recommendations. Every page
takes the same filters, kept in the URL; the numbers come from stacklens.performance.view_data, the same as
the JSON API's.

Weekly trends, release impact and recommendations are :mod:`dashboards.routers.performance_over_time`, on a
router registered right after this one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from dashboards import performance_figures as figs
from dashboards.context import CurrentProject, app_settings
from dashboards.explore_links import performance_link
from dashboards.marker_figures import is_time_chart, mark_charts
from dashboards.rendering import render
from dashboards.routers.performance_exports import download_links, waterfall_links
from stacklens.control.db import session_scope
from stacklens.control.keys.dsn import primary_masked_dsn
from stacklens.metrics import mart_progress
from stacklens.performance import endpoint_reads, page_load_reads, view_data
from stacklens.performance.calendar import day_slots, week_slots
from stacklens.performance.exports.tables import blocking_resources, largest_resources, unknown_blocking
from stacklens.performance.score import MIN_SAMPLES, THRESHOLDS, VITAL_LABELS
from stacklens.performance.waterfall import waterfall
from stacklens.view_filters import (
    DEFAULT_RANGE,
    RANGES,
    BadFilter,
    ViewFilters,
    default_range,
)

router = APIRouter(include_in_schema=False)
BASE = "/orgs/{org_slug}/projects/{project_slug}/performance"
TABS = [
    ("", "Overview"),
    ("/pages", "Pages"),
    ("/resources", "Resources"),
    ("/api", "API endpoints"),
    ("/trends", "Trends"),
    ("/releases", "Releases"),
    ("/recommendations", "Recommendations"),
    ("/inp", "INP causes"),  # dashboards.routers.performance_inp
    ("/budgets", "Budgets"),  # dashboards.routers.budgets
]
COMPARABLE = ("overview", "page_detail", "endpoint_detail")
PAGE_METRICS = [
    ("load_p75", "load_avg", "views", "Load time p75", "ms"),
    ("ttfb_p75", None, "ttfb_n", "TTFB p75", "ms"),
    ("dom_p75", None, "dom_n", "DOM ready p75", "ms"),
    ("lcp_p75", None, "lcp_n", "LCP p75", "ms"),
    ("inp_p75", None, "inp_n", "INP p75", "ms"),
    ("cls_p75", None, "cls_n", "CLS p75", ""),
    ("fcp_p75", None, "fcp_n", "FCP p75", "ms"),
    ("score", None, "score_n", "Performance score", "0-100"),
]


def perf_path(view: CurrentProject) -> str:
    return f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/performance"


def _project_dsn(view: CurrentProject) -> str | None:
    with session_scope(view.settings) as db:
        return primary_masked_dsn(db, view.project_id, view.settings)


def performance_page(
    request: Request,
    view: CurrentProject,
    tab: str,
    template: str,
    fill: Any,
    export: str = "",
    target: dict[str, str] | None = None,
) -> Response:
    """Parse the filters, run ``fill(client, filters) -> dict`` and render; a bad filter answers 400 on the
    page. ``export`` names the page's tables for the download links (``target``: its detail parameters)."""
    base = perf_path(view)
    context: dict[str, Any] = {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "base_path": base,
        "tabs": [(base + suffix, label, suffix == tab) for suffix, label in TABS],
        "ranges": list(RANGES),
        "min_samples": MIN_SAMPLES,
        "thresholds": THRESHOLDS,
        "vital_labels": VITAL_LABELS,
        "facets": {"environment": [], "release": [], "browser": []},
        "error": None,
        "figures": {},
        "downloads": download_links(base, export, {}, target or {}) if export else [],
        # Called by the empty state only (the setup snippet): the DSN as the project's settings page shows it.
        "project_dsn": lambda: _project_dsn(view),
    }
    client = view.warehouse
    # The release views open on a month (stated on the page); the others on a week.
    opening = default_range(export)
    context["default_range"] = opening if opening != DEFAULT_RANGE else ""
    # The views whose daily charts can draw the previous period beneath the window.
    context["comparable"] = export in COMPARABLE
    try:
        filters = ViewFilters.from_query(request.query_params, default=opening)
    except BadFilter as exc:
        context.update(error=str(exc), filters=ViewFilters.parse(), params={})
        return render(request, template, {**context, "data": None}, 400)
    context.update(filters=filters, params=filters.params())
    # "Open in Explore": the page's main figure as an Explore query over the same window and filters.
    context["explore_link"] = performance_link(
        view.viewer.org.slug, view.project.slug, export, filters, target or {}
    )
    if export:
        context["downloads"] = download_links(base, export, filters.params(), target or {})
    context["facets"] = page_load_reads.facets(client, view.org_id, view.project_id, filters)
    # History the marts have not taken yet (a first start): the page says so instead of drawing a gap.
    context["building"] = mart_progress.building(client, view.project_id, "performance")
    try:
        context.update(fill(client, filters))
    except ValueError as exc:
        context["error"] = str(exc)
        return render(request, template, {**context, "data": None}, 400)
    _mark_releases(request, view, client, filters, context["figures"])
    return render(request, template, context)


def _previous(
    filters: ViewFilters, daily: Callable[[ViewFilters], Sequence[Mapping[str, Any]]]
) -> tuple[Sequence[Mapping[str, Any]] | None, list[str] | None]:
    """With "compare with the previous period": that period's daily rows, by the view's own read (the metrics
    layer, as for the window itself), and its days; else nothing to draw."""
    if filters.compare != "previous":
        return None, None
    before = filters.previous()
    return daily(before), day_slots(before.since, before.until)


def _mark_releases(
    request: Request, view: CurrentProject, client: Any, filters: ViewFilters, figures: dict[str, Any]
) -> None:
    """The releases first seen in the window and the project's annotations on every time chart of the page."""
    if not any(is_time_chart(f) for f in figures.values()):
        return
    with session_scope(app_settings(request)) as session:
        mark_charts(
            figures.values(),
            client,
            session,
            view.org_id,
            view.viewer.org.slug,
            [view.project_id],
            filters.since,
            filters.until,
            filters.environment,
        )


@router.get(BASE, response_class=HTMLResponse)
def overview(request: Request, view: CurrentProject) -> Response:
    def fill(client: Any, filters: ViewFilters) -> dict[str, Any]:
        data = view_data.overview(client, view.org_id, view.project_id, filters)
        days = data["daily"]
        slots = day_slots(filters.since, filters.until)
        before = _previous(
            filters, lambda f: view_data.overview(client, view.org_id, view.project_id, f)["daily"]
        )
        figures = {
            f"trend-{name}": figs.series_figure(days, "day", key, n, title, unit, slots, *before)
            for name, key, n, title, unit in (
                ("score", "score", "score_n", "Performance score per day", "score"),
                ("lcp", "lcp_p75", "lcp_n", "LCP p75 per day", "ms"),
                ("inp", "inp_p75", "inp_n", "INP p75 per day", "ms"),
                ("load", "load_p75", "views", "Load time p75 per day", "ms"),
            )
        }
        return {"data": data, "figures": figures if days else {}}

    return performance_page(request, view, "", "perf_overview.html", fill, "overview")


@router.get(BASE + "/pages", response_class=HTMLResponse)
def pages(request: Request, view: CurrentProject) -> Response:
    def fill(client: Any, filters: ViewFilters) -> dict[str, Any]:
        data = view_data.pages(client, view.org_id, view.project_id, filters)
        rows = data["rows"][:20]
        figure = figs.bars_figure(
            [r["page"] for r in rows],
            [r["load_p75"] for r in rows],
            [r["views"] for r in rows],
            "Load time p75 per page",
            "ms",
        )
        return {
            "data": data,
            "spark": page_load_reads.sparklines(client, view.org_id, view.project_id, filters),
            "figures": {"pages": figure} if rows else {},
        }

    return performance_page(request, view, "/pages", "perf_pages.html", fill, "pages")


@router.get(BASE + "/pages/detail", response_class=HTMLResponse)
def page_detail(request: Request, view: CurrentProject, page: str = "") -> Response:
    def fill(client: Any, filters: ViewFilters) -> dict[str, Any]:
        if not page:
            raise ValueError("page: choose a page (route) from the Pages table")
        org, project = view.org_id, view.project_id
        days, weeks, dist, samples = page_load_reads.page_detail(client, org, project, filters, page)
        slots = day_slots(filters.since, filters.until)
        before = _previous(filters, lambda f: page_load_reads.page_detail(client, org, project, f, page)[0])
        # Every metric's chart, an empty one saying "no data for these filters" (Safari sends no LCP or INP).
        figures = {
            f"day-{key}": figs.series_figure(days, "day", key, n, f"{label} per day", unit, slots, *before)
            for key, _, n, label, unit in PAGE_METRICS
        }
        figures["week-load"] = figs.series_figure(
            weeks,
            "iso_week",
            "load_p75",
            "views",
            "Load time p75 per ISO week",
            "ms",
            week_slots(filters.since, filters.until),
        )
        for metric, label, unit in (
            ("load", "Load time", "ms"),
            ("lcp", "LCP", "ms"),
            ("inp", "INP", "ms"),
            ("cls", "CLS", ""),
        ):
            if dist.get(metric):
                figures[f"dist-{metric}"] = figs.distribution_figure(
                    dist[metric], f"{label} distribution", unit
                )
        return {
            "page": page,
            "data": {"rows": days},
            "weeks": weeks,
            "samples": samples,
            "figures": figures,
        }

    return performance_page(
        request, view, "/pages", "perf_page_detail.html", fill, "page_detail", {"page": page}
    )


@router.get(BASE + "/resources", response_class=HTMLResponse)
def resources(request: Request, view: CurrentProject) -> Response:
    def fill(client: Any, filters: ViewFilters) -> dict[str, Any]:
        data = view_data.resources(client, view.org_id, view.project_id, filters)
        listing = data["resources"]
        return {
            "data": data,
            "largest": largest_resources(listing),
            "blocking": blocking_resources(listing),
            "unknown": unknown_blocking(listing),
            "figures": {"types": figs.types_figure(data["rows"])} if data["rows"] else {},
        }

    return performance_page(request, view, "/resources", "perf_resources.html", fill, "resources")


@router.get(BASE + "/api", response_class=HTMLResponse)
def endpoints(request: Request, view: CurrentProject, sort: str = "calls") -> Response:
    def fill(client: Any, filters: ViewFilters) -> dict[str, Any]:
        data = view_data.endpoints(client, view.org_id, view.project_id, filters, sort)
        top = data["rows"][:15]
        figure = figs.bars_figure(
            [f"{r['method']} {r['path']} ({r['source']})" for r in top],  # the table says what each means
            [r["p95_ms"] for r in top],
            [r["calls"] for r in top],
            "p95 of the busiest endpoints",
            "ms",
        )
        return {
            "data": data,
            "sort": sort,
            "sorts": endpoint_reads.ENDPOINT_SORTS,
            "figures": {"endpoints": figure} if top else {},
        }

    return performance_page(request, view, "/api", "perf_endpoints.html", fill, "endpoints", {"sort": sort})


@router.get(BASE + "/api/detail", response_class=HTMLResponse)
def endpoint_detail(
    request: Request, view: CurrentProject, source: str = "", method: str = "", path: str = ""
) -> Response:
    def fill(client: Any, filters: ViewFilters) -> dict[str, Any]:
        if source not in ("client", "server"):
            raise ValueError("source: must be client or server")
        if not method or not path:
            raise ValueError("method and path: choose an endpoint from the API endpoints table")
        days, slowest = endpoint_reads.endpoint_detail(
            client, view.org_id, view.project_id, filters, source, method, path
        )
        figures = {}
        if days:
            slots = day_slots(filters.since, filters.until)
            before = _previous(
                filters,
                lambda f: endpoint_reads.endpoint_detail(
                    client, view.org_id, view.project_id, f, source, method, path
                )[0],
            )
            figures = {
                name: figs.series_figure(days, "day", key, "calls", title, unit, slots, *before)
                for name, key, title, unit in (
                    ("latency", "p95_ms", "p95 per day", "ms"),
                    ("average", "avg_ms", "Average per day", "ms"),
                    ("errors", "error_pct", "Errors (4xx + 5xx) per day", "%"),
                )
            }
        return {
            "endpoint": {"source": source, "method": method, "path": path},
            "data": {"rows": days},
            "slowest": slowest,
            "figures": figures,
        }

    return performance_page(
        request,
        view,
        "/api",
        "perf_endpoint_detail.html",
        fill,
        "endpoint_detail",
        {"source": source, "method": method, "path": path},
    )


@router.get(BASE + "/waterfall/{event_id}", response_class=HTMLResponse)
def waterfall_page(request: Request, view: CurrentProject, event_id: str) -> Response:
    def fill(client: Any, filters: ViewFilters) -> dict[str, Any]:
        data = waterfall(client, view.org_id, view.project_id, event_id)
        if data is None:
            raise ValueError(f"event_id: no page load {event_id!r} in this project")
        return {
            "data": data,
            "figures": {"waterfall": figs.waterfall_figure(data)},
            "downloads": waterfall_links(perf_path(view), event_id),
        }

    return performance_page(request, view, "/pages", "perf_waterfall.html", fill)
