"""The performance view as JSON for scripts and analysts (docs/reference.md): overview, pages, resources,
endpoints,
trends, releases, recommendations and one page load's waterfall, with the same filters and numbers as the
dashboard pages. Bearer API key; a project of another organization answers 404 like one that does not exist.
``?format=csv`` gives the same rows as CSV: the page's CSV download of the view's table, byte for byte
(columns named with their units, lcp_p75_ms). Served by the process that owns the warehouse, so an embedded
install can be queried from outside while it runs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.datastructures import QueryParams

from api.deps import ApiAuth, DbSession, ViewedProject, Warehouse
from api.errors import ApiError
from api.routers.auth import AUTH_ERRORS, ErrorBody
from stacklens.control.models import Project
from stacklens.json_values import plain
from stacklens.performance import view_data
from stacklens.performance.exports import tabular
from stacklens.performance.exports.pdf import build_pdf
from stacklens.performance.exports.report_data import report_data
from stacklens.performance.exports.tables import view_table
from stacklens.performance.waterfall import Waterfall, waterfall
from stacklens.view_filters import ViewFilters, default_range, flag

router = APIRouter(prefix="/api/projects", tags=["performance"])
ERRORS: dict[int | str, dict[str, Any]] = {
    **AUTH_ERRORS,
    400: {"model": ErrorBody, "description": "A filter value cannot be used; `detail` names the field."},
    404: {"model": ErrorBody, "description": "No such project (or page load) in this organization."},
}
FILTER_DOC = (
    " Filters: `range` (24h, 7d, 14d, 30d, 90d; default 7d) or `since`/`until` (ISO 8601), `environment`, "
    "`release`, `browser`. `format=csv` answers the rows as CSV, the same bytes as the page's download of the "
    "table; a metric column's name ends with its unit (`lcp_p75_ms`, `js_per_view_bytes`)."
)


def _filter_query(
    request: Request,
    range: Annotated[str, Query(description="24h, 7d, 14d, 30d or 90d (default 7d)")] = "",
    since: Annotated[str, Query(description="ISO 8601 start (instead of range)")] = "",
    until: Annotated[str, Query(description="ISO 8601 end (default now)")] = "",
    environment: str = "",
    release: str = "",
    browser: str = "",
) -> QueryParams:
    """The filters of every route here, declared once for the OpenAPI page. The query string is handed on
    unparsed: the handler parses it with the core's one parser (ViewFilters.from_query) once the project is
    found, so an unknown project answers 404 whatever its filters; a BadFilter answers 400 through the
    domain-error handler."""
    return request.query_params


def _view_query(
    request: Request,
    format: Annotated[str, Query(description="json or csv")] = "json",
    sort: Annotated[
        str, Query(description="endpoints only: calls, avg_ms, p95_ms, error_pct, s5xx, s4xx")
    ] = "calls",
    include_old_releases: Annotated[
        bool,
        Query(
            description="recommendations only: also those about resources only old releases served "
            "(not requested by the newest release nor in the window's last two days)"
        ),
    ] = False,
) -> QueryParams:
    """The options of the views beside the filters, declared for the OpenAPI page; handed on unparsed too."""
    return request.query_params


FilterQuery = Annotated[QueryParams, Depends(_filter_query)]
ViewQuery = Annotated[QueryParams, Depends(_view_query)]


def _answer(
    view: str, query: QueryParams, auth: ApiAuth, project: Project, warehouse: Warehouse, slug: str
) -> Response:
    filters = ViewFilters.from_query(query, default=default_range(view))
    fmt = query.get("format", "json")
    if fmt not in ("json", "csv"):
        raise ApiError(400, "Bad Request", "format: must be json or csv")
    sort = query.get("sort", "calls")
    try:
        include_old = flag("include_old_releases", query.get("include_old_releases", ""))
        data = view_data.build(view, warehouse, auth.org_id, project.id, filters, sort, include_old)
    except ValueError as exc:
        raise ApiError(400, "Bad Request", str(exc)) from exc
    if fmt == "csv":
        # The page's CSV download of the same table, written by the same code: the same columns and bytes.
        filename = f"{slug}-performance-{view}.csv"
        return StreamingResponse(
            tabular.csv_chunks(tabular.frame(view_table(view), data)),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )
    return JSONResponse(plain({**data, "filters": filters.describe()}))


class OverviewAnswer(view_data.OverviewData):
    filters: dict[str, Any]


class PagesAnswer(view_data.PagesData):
    filters: dict[str, Any]


class ResourcesAnswer(view_data.ResourcesData):
    filters: dict[str, Any]


class EndpointsAnswer(view_data.EndpointsData):
    filters: dict[str, Any]


class TrendsAnswer(view_data.TrendsData):
    filters: dict[str, Any]


class ReleasesAnswer(view_data.ReleasesData):
    filters: dict[str, Any]


class RecommendationsAnswer(view_data.RecommendationsData):
    filters: dict[str, Any]


# Each view's JSON answer: its typed data and the filters it was read with (the schema the OpenAPI page
# shows; the handler answers the same dictionary, serialised once).
ANSWERS: dict[str, type] = {
    "overview": OverviewAnswer,
    "pages": PagesAnswer,
    "resources": ResourcesAnswer,
    "endpoints": EndpointsAnswer,
    "trends": TrendsAnswer,
    "releases": ReleasesAnswer,
    "recommendations": RecommendationsAnswer,
}


def _route(view: str, summary: str) -> None:
    # The filters are a dependency of the route, not of the handler: FastAPI lists the route's dependencies'
    # parameters first, so the OpenAPI page shows the filters before the view's options.
    def handler(
        slug: str, auth: ApiAuth, project: ViewedProject, warehouse: Warehouse, query: ViewQuery
    ) -> Response:
        return _answer(view, query, auth, project, warehouse, slug)

    handler.__name__ = f"performance_{view}"
    handler.__doc__ = summary + FILTER_DOC
    router.add_api_route(
        f"/{{slug}}/performance/{view}",
        handler,
        methods=["GET"],
        response_model=ANSWERS[view],
        responses={
            **ERRORS,
            200: {
                "content": {"text/csv": {}},
                "description": "The view as JSON, or as CSV with `format=csv`.",
            },
        },
        summary=summary,
        dependencies=[Depends(_filter_query)],
    )


_route("overview", "Performance score and the p75 of each web vital, with ratings and sample counts.")
_route(
    "pages", "Per page: views, load time, TTFB, DOM ready, resources, API calls, vitals, score, opportunity."
)
_route(
    "resources", "Per resource type: sizes, load time, cache hits, compression; `resources` lists each file."
)
_route(
    "endpoints",
    "API endpoints per method and parameterised path, client and server apart (`sort`: calls, avg_ms, p95_ms, error_pct, s5xx, s4xx).",
)
_route("trends", "Per ISO week: load time and its change against the previous week, with sample counts.")
_route(
    "releases",
    "Per release: load time, JavaScript size, API time, errors, each against the previous release.",
)
_route(
    "recommendations", "Deterministic recommendations, one per subject and rule, with evidence and saving."
)


@router.get(
    "/{slug}/performance/report.pdf",
    responses={**ERRORS, 200: {"content": {"application/pdf": {}}, "description": "The PDF report."}},
    response_class=Response,
)
def performance_report(
    slug: str, project: ViewedProject, db: DbSession, warehouse: Warehouse, filter_query: FilterQuery
) -> Response:
    """The PDF report for the filters: summary (score, web vitals, budgets with status), pages, resources,
    API endpoints, trends, release impact and recommendations, with charts, the filters and page numbers."""
    data = report_data(db, warehouse, project, ViewFilters.from_query(filter_query))
    return Response(
        build_pdf(data),
        media_type="application/pdf",
        headers={"Content-Disposition": f'attachment; filename="{slug}-performance-report.pdf"'},
    )


@router.get("/{slug}/performance/waterfall/{event_id}", response_model=Waterfall, responses=ERRORS)
def performance_waterfall(
    # `slug` is read by ViewedProject; declared here too so the OpenAPI page lists it before `event_id`, as
    # the path reads (a dependency's parameters come after the route's own).
    slug: str,
    project: ViewedProject,
    event_id: str,
    auth: ApiAuth,
    warehouse: Warehouse,
) -> Response:
    """One page load (or transaction): navigation phases, spans with offsets, FCP and LCP markers."""
    data = waterfall(warehouse, auth.org_id, project.id, event_id)
    if data is None:
        raise ApiError(404, "Not Found", f"no page load {event_id!r} in this project")
    return JSONResponse(plain(data))
