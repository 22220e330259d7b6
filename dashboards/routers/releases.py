"""The release health pages of a project (docs/reference.md), after Sentry's Releases: the list of releases
with
first seen, adoption, crash-free sessions and users, sessions, errors per 1,000 page loads, new issues,
performance changes and the verdict, sortable and filterable by environment; and one release with its
charts since it was first seen, its issues, the comparison with the previous release, its source maps and
replays. The numbers come from stacklens.releases, the same as the releases API's."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from dashboards.context import CurrentProject
from dashboards.explore_links import release_health_link
from dashboards.marker_figures import mark_charts
from dashboards.release_figures import release_figures
from dashboards.rendering import render
from stacklens.control.db import session_scope
from stacklens.errors import NotFound
from stacklens.metrics import mart_progress
from stacklens.performance.page_load_reads import facets
from stacklens.releases import verdicts
from stacklens.releases.detail import release_detail
from stacklens.releases.health import Window, release_health
from stacklens.releases.release_list import SORTS, health_filters, sort_releases
from stacklens.releases.sessions import environments
from stacklens.view_filters import RANGES, BadFilter, ViewFilters

router = APIRouter(include_in_schema=False)
BASE = "/orgs/{org_slug}/projects/{project_slug}/releases"
FILTERS = ("range", "since", "until", "environment")


def releases_path(view: CurrentProject) -> str:
    return f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}/releases"


def release_link(view: CurrentProject, version: str) -> str:
    """The release page of ``version`` (a version may hold ``/``, ``+`` or spaces: one escaped path
    segment)."""
    return f"{releases_path(view)}/{quote(version, safe='')}"


def _context(request: Request, view: CurrentProject) -> dict[str, Any]:
    project_base = f"/orgs/{view.viewer.org.slug}/projects/{view.project.slug}"
    return {
        "viewer": view.viewer,
        "user": view.viewer.user,
        "project": view.project,
        "base_path": releases_path(view),
        "project_base": project_base,
        "ranges": list(RANGES),
        "rules": verdicts.RULES,
        "error": None,
        "environments": [],
    }


def _filters(request: Request) -> ViewFilters:
    query = request.query_params
    return health_filters(
        range=query.get("range", ""),
        since=query.get("since", ""),
        until=query.get("until", ""),
        environment=query.get("environment", ""),
        browser=query.get("browser", ""),
    )


def _environments(view: CurrentProject, filters: ViewFilters) -> list[str]:
    """The environments of the project's sessions and of the window's page loads."""
    client = view.warehouse
    found = environments(client, view.org_id, view.project_id)
    for name in facets(client, view.org_id, view.project_id, filters)["environment"]:
        if name not in found:
            found.append(name)
    return found


@router.get(BASE, response_class=HTMLResponse)
def release_list(
    request: Request, view: CurrentProject, sort: str = "first_seen", order: str = "desc"
) -> Response:
    context = _context(request, view)
    try:
        filters = _filters(request)
        rows = release_health(
            view.warehouse, view.org_id, view.project_id, Window.of(filters), filters.environment
        )
        shown = sort_releases(rows, sort, order)
    except BadFilter as exc:
        context.update(
            error=str(exc), filters=ViewFilters.parse(), params={}, rows=[], sort=sort, order=order
        )
        return render(request, "releases.html", {**context, "sorts": SORTS}, 400)
    context.update(
        filters=filters,
        params={k: v for k, v in filters.params().items() if k in FILTERS},
        rows=shown,
        links={r.version: release_link(view, r.version) for r in rows},
        explore_links={
            r.version: release_health_link(
                view.viewer.org.slug,
                view.project.slug,
                r.version,
                filters.environment,
                filters.since,
                filters.until,
            )
            for r in rows
        },
        sort=sort,
        order=order,
        sorts=SORTS,
        environments=_environments(view, filters),
        regressions=[r for r in rows if r.verdict.regression],
        building=mart_progress.building(view.warehouse, view.project_id, "releases"),
    )
    return render(request, "releases.html", context)


@router.get(BASE + "/{version:path}", response_class=HTMLResponse)
def release_page(request: Request, view: CurrentProject, version: str) -> Response:
    context = _context(request, view)
    try:
        filters = _filters(request)
    except BadFilter as exc:
        context.update(error=str(exc), filters=ViewFilters.parse(), params={}, version=version, detail=None)
        return render(request, "release_detail.html", context, 400)
    client = view.warehouse
    try:
        detail = release_detail(
            client, view.org_id, view.project_id, version, Window.of(filters), filters.environment
        )
    except NotFound as exc:
        raise HTTPException(status_code=404, detail=str(exc)) from exc
    previous = detail.previous
    figures = release_figures(detail.buckets, detail.since, detail.until, detail.bucket)
    # The project's releases (this one's first-seen among them) and annotations over the charts' span.
    with session_scope(view.settings) as db:
        mark_charts(
            figures.values(),
            client,
            db,
            view.org_id,
            view.viewer.org.slug,
            [view.project_id],
            detail.since,
            detail.until,
            filters.environment,
        )
    context.update(
        filters=filters,
        params={k: v for k, v in filters.params().items() if k in FILTERS},
        version=version,
        detail=detail,
        health=detail.health,
        previous=previous,
        previous_link=release_link(view, previous.version) if previous else "",
        figures=figures,
        environments=_environments(view, filters),
        replays_link=f"{context['project_base']}/replays?range=90d&release={quote(version, safe='')}",
        performance_link=f"{context['project_base']}/performance/releases",
        explore_link=release_health_link(
            view.viewer.org.slug,
            view.project.slug,
            version,
            filters.environment,
            filters.since,
            filters.until,
        ),
    )
    return render(request, "release_detail.html", context)
