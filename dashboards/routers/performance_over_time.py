"""The performance pages that look across weeks and releases (docs/reference.md): weekly trends, release
impact
and the recommendations, with the same filters as every performance page
(:mod:`dashboards.routers.performance`). On a router of their own, registered right after the performance
router so the routes keep their order."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from dashboards import performance_figures as figs
from dashboards.context import CurrentProject
from dashboards.explore_links import release_links
from dashboards.routers.performance import BASE, performance_page
from stacklens.performance import view_data
from stacklens.performance.calendar import week_slots
from stacklens.performance.recommendations import evidence_text
from stacklens.view_filters import (
    TRUE,
    ViewFilters,
    flag,
)

router = APIRouter(include_in_schema=False)


@router.get(BASE + "/trends", response_class=HTMLResponse)
def trends(request: Request, view: CurrentProject) -> Response:
    def fill(client: Any, filters: ViewFilters) -> dict[str, Any]:
        data = view_data.trends(client, view.org_id, view.project_id, filters)
        figures = {}
        if data["rows"]:
            # Both charts over every week of the window, the same x axis side by side (a week without page
            # loads is a gap in the line and a slot without a bar, never a shift of the weeks after it).
            slots = week_slots(filters.since, filters.until)
            by_week = {str(r["iso_week"]): r for r in data["rows"]}
            views: list[float | None] = [float(by_week[w]["views"]) if w in by_week else None for w in slots]
            figures = {
                "weekly-load": figs.series_figure(
                    data["rows"], "iso_week", "load_p75", "views", "Load time p75 per ISO week", "ms", slots
                ),
                "weekly-views": figs.bars_figure(
                    slots, views, [int(v or 0) for v in views], "Page loads per ISO week", "page loads"
                ),
            }
        return {"data": data, "figures": figures}

    return performance_page(request, view, "/trends", "perf_trends.html", fill, "trends")


@router.get(BASE + "/releases", response_class=HTMLResponse)
def releases(request: Request, view: CurrentProject) -> Response:
    def fill(client: Any, filters: ViewFilters) -> dict[str, Any]:
        data = view_data.releases(client, view.org_id, view.project_id, filters)
        org, slug = view.viewer.org.slug, view.project.slug
        return {
            "data": data,
            "release_explore": {
                r["release"]: release_links(org, slug, r["release"], filters) for r in data["rows"]
            },
            "figures": {"releases": figs.releases_figure(data["rows"])} if data["rows"] else {},
        }

    return performance_page(request, view, "/releases", "perf_releases.html", fill, "releases")


@router.get(BASE + "/recommendations", response_class=HTMLResponse)
def recommendations(request: Request, view: CurrentProject, include_old_releases: str = "") -> Response:
    def fill(client: Any, filters: ViewFilters) -> dict[str, Any]:
        include_old = flag("include_old_releases", include_old_releases)
        data = view_data.recommendations(client, view.org_id, view.project_id, filters, include_old)
        return {
            "data": data,
            "include_old": include_old,
            "evidence": [evidence_text(r["evidence"]) for r in data["rows"]],
        }

    target = {"include_old_releases": "1"} if include_old_releases.strip().lower() in TRUE else {}
    return performance_page(
        request, view, "/recommendations", "perf_recommendations.html", fill, "recommendations", target
    )
