"""The data of each performance view, shared by the dashboard pages, the JSON API and the exports so all
show the same numbers for the same filters: ``{"rows": [...], <extra parts>}``, one typed dictionary per
view (:class:`OverviewData`, :class:`PagesData`, …) whose rows are the reads' own (:mod:`.page_load_reads`,
:mod:`.resource_reads`, :mod:`.endpoint_reads`, :mod:`.recommendations`). :func:`build` picks a view by
name (the API's ``/performance/<view>``); the pages call the view's own function."""

from __future__ import annotations

from collections.abc import Callable

from clickhouse_connect.driver.client import Client
from typing_extensions import TypedDict

from stacklens.performance import endpoint_reads, page_load_reads, resource_reads
from stacklens.performance import recommendations as recommendation_reads
from stacklens.performance.endpoint_reads import EndpointRow
from stacklens.performance.page_load_rows import DayRow, PageRow, PageTotals, VitalSummaryRow, WeekRow
from stacklens.performance.recommendations import Recommendation
from stacklens.performance.resource_reads import ResourceRow, ResourceTypeRow
from stacklens.releases.impact import ReleaseRow
from stacklens.view_filters import ViewFilters

VIEWS = ("overview", "pages", "resources", "endpoints", "trends", "releases", "recommendations")


class OpportunityRow(TypedDict):
    """A page of the overview's "most to gain": its views, score and score opportunity."""

    page: str
    views: int
    score: float | None
    score_n: int
    opportunity: float


class OverviewData(TypedDict):
    """The score and web vitals (``rows``), the project's totals, the 10 pages with the most to gain, the
    days."""

    rows: list[VitalSummaryRow]
    total: PageTotals | None
    opportunities: list[OpportunityRow]
    daily: list[DayRow]


class PagesData(TypedDict):
    rows: list[PageRow]
    total: PageTotals | None


class ResourcesData(TypedDict):
    """Per resource type (``rows``) and each resource (``resources``)."""

    rows: list[ResourceTypeRow]
    resources: list[ResourceRow]


class EndpointsData(TypedDict):
    rows: list[EndpointRow]


class TrendsData(TypedDict):
    """The project's ISO weeks (``rows``) and each page's (``pages``)."""

    rows: list[WeekRow]
    pages: list[WeekRow]


class ReleasesData(TypedDict):
    rows: list[ReleaseRow]


class RecommendationsData(TypedDict):
    """The recommendations shown, and how many about resources only old releases served were left out."""

    rows: list[Recommendation]
    old_releases_hidden: int


ViewData = (
    OverviewData | PagesData | ResourcesData | EndpointsData | TrendsData | ReleasesData | RecommendationsData
)


def overview(client: Client, org_id: int, project_id: int, filters: ViewFilters) -> OverviewData:
    total, pages, days = page_load_reads.overview(client, org_id, project_id, filters)
    top = sorted(pages, key=lambda r: -r["opportunity"])[:10]
    return {
        "rows": page_load_reads.vitals_summary(total),
        "total": total,
        "opportunities": [
            {
                "page": r["page"],
                "views": r["views"],
                "score": r["score"],
                "score_n": r["score_n"],
                "opportunity": r["opportunity"],
            }
            for r in top
        ],
        "daily": days,
    }


def pages(client: Client, org_id: int, project_id: int, filters: ViewFilters) -> PagesData:
    total, rows = page_load_reads.pages(client, org_id, project_id, filters)
    return {"rows": rows, "total": total}


def resources(client: Client, org_id: int, project_id: int, filters: ViewFilters) -> ResourcesData:
    types, listing = resource_reads.resource_tables(client, org_id, project_id, filters)
    return {"rows": types, "resources": listing}


def endpoints(
    client: Client, org_id: int, project_id: int, filters: ViewFilters, sort: str = "calls"
) -> EndpointsData:
    """Sorted by ``sort`` (raises ValueError naming the allowed values)."""
    return {"rows": endpoint_reads.endpoints(client, org_id, project_id, filters, sort)}


def trends(client: Client, org_id: int, project_id: int, filters: ViewFilters) -> TrendsData:
    weeks, page_weeks = page_load_reads.trends(client, org_id, project_id, filters)
    return {"rows": weeks, "pages": page_weeks}


def releases(client: Client, org_id: int, project_id: int, filters: ViewFilters) -> ReleasesData:
    return {"rows": page_load_reads.releases(client, org_id, project_id, filters)}


def recommendations(
    client: Client, org_id: int, project_id: int, filters: ViewFilters, include_old: bool = False
) -> RecommendationsData:
    """Those about resources only old releases served left out unless ``include_old``, and counted in
    ``old_releases_hidden``."""
    every = recommendation_reads.recommendations(client, org_id, project_id, filters, include_old=True)
    shown = [r for r in every if include_old or not r["old_release"]]
    return {"rows": shown, "old_releases_hidden": len(every) - len(shown)}


# The views that take the filters alone (endpoints also take their sort, recommendations whether to include
# old releases').
_BY_FILTERS: dict[str, Callable[[Client, int, int, ViewFilters], ViewData]] = {
    "overview": overview,
    "pages": pages,
    "resources": resources,
    "trends": trends,
    "releases": releases,
}


def build(
    view: str,
    client: Client,
    org_id: int,
    project_id: int,
    filters: ViewFilters,
    sort: str = "calls",
    include_old: bool = False,
) -> ViewData:
    """The data of one view; ``sort`` applies to endpoints (raises ValueError naming the allowed values),
    ``include_old`` to recommendations (those about resources only old releases served; left out by
    default, and counted in ``old_releases_hidden``)."""
    if view == "endpoints":
        return endpoints(client, org_id, project_id, filters, sort)
    if view == "recommendations":
        return recommendations(client, org_id, project_id, filters, include_old)
    if view not in _BY_FILTERS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)}")
    return _BY_FILTERS[view](client, org_id, project_id, filters)
