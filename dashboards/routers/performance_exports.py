"""Downloads of the performance pages (session sign-in): each page's tables as CSV (one table per file,
streamed) or JSON (all of them), and the PDF report, for the page's filters. The download links of a page
are built here too, so every page offers the same set and keeps its filters.
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from dashboards.context import CurrentProject, Db
from stacklens.csv_cells import neutralise_frame
from stacklens.errors import InvalidInput, NotFound
from stacklens.json_values import plain
from stacklens.performance.exports import tabular
from stacklens.performance.exports.pdf import build_pdf
from stacklens.performance.exports.report_data import report_data
from stacklens.performance.exports.tables import PAGES, Target, page_data, table
from stacklens.performance.waterfall import waterfall
from stacklens.view_filters import ViewFilters, default_range

router = APIRouter(include_in_schema=False)
BASE = "/orgs/{org_slug}/projects/{project_slug}/performance"
# What each detail page is about, carried in its download links next to the filters.
TARGET_NAMES = ("sort", "page", "source", "method", "path", "include_old_releases")
FORMATS = ("csv", "json")


def target_of(request: Request) -> Target:
    query = request.query_params
    return Target(**{k: query.get(k, "") for k in TARGET_NAMES if query.get(k)})


def download_links(
    base: str, page: str, params: dict[str, str], target: dict[str, str]
) -> list[dict[str, str]]:
    """The page's download links: a CSV per table, the JSON of all tables, the PDF report of the filters."""
    from dashboards.rendering import query_url

    query = {**params, **{k: v for k, v in target.items() if v}}
    links = [
        {
            "label": f"CSV: {spec.title}",
            "href": query_url(f"{base}/export/{page}.csv", query, table=spec.name),
            "kind": "csv",
        }
        for spec in PAGES[page]
    ]
    links.append({"label": "JSON", "href": query_url(f"{base}/export/{page}.json", query), "kind": "json"})
    links.append({"label": "PDF report", "href": query_url(f"{base}/report.pdf", params), "kind": "pdf"})
    return links


def _attachment(name: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"}


@router.get(BASE + "/export/{page_name}.{fmt}")
def export_page(request: Request, view: CurrentProject, page_name: str, fmt: str) -> Response:
    if fmt not in FORMATS:
        raise InvalidInput("format: must be csv or json")
    if page_name not in PAGES:
        raise NotFound(f"no performance page {page_name!r}")
    filters = ViewFilters.from_query(request.query_params, default=default_range(page_name))
    target = target_of(request)
    spec = (
        table(page_name, request.query_params.get("table") or PAGES[page_name][0].name)
        if fmt == "csv"
        else None
    )
    data = page_data(page_name, view.warehouse, view.org_id, view.project_id, filters, target)
    slug = view.project.slug
    if spec is not None:
        frame = tabular.frame(spec, data)
        return StreamingResponse(
            tabular.csv_chunks(frame),
            media_type="text/csv; charset=utf-8",
            headers=_attachment(f"{slug}-performance-{page_name}-{spec.name}.csv"),
        )
    extra = {k: v for k, v in vars(target).items() if v and not (k == "sort" and v == "calls")}
    return JSONResponse(
        plain(tabular.document(page_name, data, filters, extra)),
        headers=_attachment(f"{slug}-performance-{page_name}.json"),
    )


@router.get(BASE + "/report.pdf")
def report_pdf(request: Request, view: CurrentProject, db: Db) -> Response:
    data = report_data(db, view.warehouse, view.project, ViewFilters.from_query(request.query_params))
    return Response(
        build_pdf(data),
        media_type="application/pdf",
        headers=_attachment(f"{view.project.slug}-performance-report.pdf"),
    )


# The waterfall page's table, column for column (the JSON holds the whole page load: phases, markers, spans).
WATERFALL_COLUMNS = (
    "type",
    "description",
    "start_ms",
    "duration_ms",
    "bytes",
    "render_blocking",
    "status_code",
)


def waterfall_links(base: str, event_id: str) -> list[dict[str, str]]:
    """The waterfall page's downloads: its spans as CSV and the page load as JSON."""
    href = f"{base}/waterfall/{quote(event_id, safe='')}/export"
    return [
        {"label": "CSV: Spans", "href": href + ".csv", "kind": "csv"},
        {"label": "JSON", "href": href + ".json", "kind": "json"},
    ]


@router.get(BASE + "/waterfall/{event_id}/export.{fmt}")
def export_waterfall(view: CurrentProject, event_id: str, fmt: str) -> Response:
    if fmt not in FORMATS:
        raise InvalidInput("format: must be csv or json")
    data = waterfall(view.warehouse, view.org_id, view.project_id, event_id)
    if data is None:
        raise NotFound(f"no page load {event_id!r} in this project")
    name = f"{view.project.slug}-waterfall-{data['event_id']}"
    if fmt == "json":
        return JSONResponse(plain(data), headers=_attachment(name + ".json"))
    rows = [
        {"position": i, **{k: dict(span)[k] for k in WATERFALL_COLUMNS}}
        for i, span in enumerate(data["spans"], 1)
    ]
    import polars as pl  # loaded by the first table download, not by the server's start (~35 MiB)

    frame = pl.DataFrame(rows, schema=["position", *WATERFALL_COLUMNS], orient="row") if rows else None
    body = (
        neutralise_frame(frame).write_csv()
        if frame is not None
        else ",".join(["position", *WATERFALL_COLUMNS]) + "\n"
    )
    return Response(body, media_type="text/csv; charset=utf-8", headers=_attachment(name + ".csv"))
