"""The Explore page (`/orgs/{org}/explore`): a dataset, filter rows, up to three group-by fields, aggregates
of the metric catalog and an interval, answered as a table and Plotly time series beside it; the whole query
lives in the URL (shareable), and the organization's saved queries are listed with a form to save the current
one.

Query string: ``project``, ``dataset``, ``range`` or ``since``/``until``, ``f=field|op|value`` (repeated;
``in`` takes comma-separated values; the form sends ``ff``/``fo``/``fv`` per row), ``g=field`` (repeated),
``a=fn:metric`` (repeated), ``interval``, ``order``, ``limit``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from sqlalchemy import select
from starlette.datastructures import QueryParams

from dashboards.context import Db, OrgViewer, app_settings, org_projects
from dashboards.explore_figures import explore_figures
from dashboards.explore_links import EXPLORE, params_from_body
from dashboards.marker_figures import add_markers
from dashboards.rendering import render
from dashboards.security import check_csrf
from stacklens.control.models import User
from stacklens.errors import InvalidInput, NotFound
from stacklens.explore import dashboards, saved
from stacklens.explore.columns import AGGREGATE, Column, columns_of, compared_columns_of
from stacklens.explore.compare import run_compared
from stacklens.explore.datasets import DATASETS
from stacklens.explore.download import FORMATS, open_download
from stacklens.explore.download_names import download_name
from stacklens.explore.query import FNS, INTERVALS, OPS, Query
from stacklens.explore.query_parser import offered_aggregates, parse_query
from stacklens.explore.run import Result, TooManyQueries
from stacklens.explore.scope import project_ids
from stacklens.ingest.front_door import settle_spooled
from stacklens.markers import MarkerGroup, chart_markers
from stacklens.warehouse.client import analyst_client, own_client

router = APIRouter(include_in_schema=False)
FILTER_ROWS = 3  # empty filter rows the form offers beside the query's own


def body_from_params(params: Any) -> dict[str, Any]:
    """The query body of the page's query string (the API's JSON body in URL form)."""
    rows = [(*str(raw).split("|", 2), "", "") for raw in params.getlist("f")]
    # The form sends each filter row as ff / fo / fv (no script composes them); a link sends f=field|op|value.
    rows += list(zip(params.getlist("ff"), params.getlist("fo"), params.getlist("fv"), strict=False))
    filters = []
    for field, op, value, *_ in rows:
        if not field:
            continue
        filters.append({"field": field, "op": op or "=", "value": value.split(",") if op == "in" else value})
    aggregates = []
    for raw in params.getlist("a"):
        fn, _, metric = str(raw).partition(":")
        if fn:
            aggregates.append({"fn": fn, "metric": metric})
    body: dict[str, Any] = {
        "dataset": params.get("dataset") or "pageloads",
        "project": params.get("project") or "",
        "filters": filters,
        "group_by": [g for g in params.getlist("g") if g],
        "aggregates": aggregates,
        "interval": params.get("interval", "1d"),
        "range": params.get("range") or "",
        # A range chosen on the form wins over the window a link brought (both would be refused).
        "since": "" if params.get("range") else params.get("since") or "",
        "until": "" if params.get("range") else params.get("until") or "",
        "order_by": params.get("order") or "",
    }
    chosen = params.getlist("compare")
    if "release" in chosen:  # both boxes ticked: the query names the conflict (one comparison at a time)
        body["compare"] = {
            "previous_release": True,
            **({"previous_period": True} if "previous" in chosen else {}),
        }
    elif "previous" in chosen:
        body["compare"] = {"previous_period": True}
    elif params.get("compare_since") or params.get("compare_until"):
        body["compare"] = {"since": params.get("compare_since", ""), "until": params.get("compare_until", "")}
    if params.get("limit"):
        limit = str(params.get("limit"))
        body["limit"] = int(limit) if limit.isdigit() else limit
    return body


@router.get(EXPLORE, response_class=HTMLResponse)
def explore_page(request: Request, viewer: OrgViewer, db: Db) -> Response:
    org_id = viewer.org.id
    body = body_from_params(request.query_params)
    error = ""
    query: Query | None = None
    result: Result | None = None
    previous: Result | None = None
    markers: list[MarkerGroup] = []
    try:
        query = parse_query(body)
        ids = project_ids(db, org_id, query.project)
        settle_spooled(app_settings(request))  # every event answered before the page is in the answer
        with analyst_client(app_settings(request)) as client:
            result, previous = run_compared(client, query, org_id, ids)
            if query.interval:  # the charts' release and annotation markers
                markers = chart_markers(client, db, org_id, ids, query.window.since, query.window.until)
    except (InvalidInput, NotFound, TooManyQueries) as exc:
        error = str(exc)
    figures: dict[str, dict[str, Any]] = {}
    columns: list[Column] = columns_of(query) if query is not None else []
    if query is not None and result is not None and query.interval:
        step = INTERVALS[query.interval].total_seconds()
        window = (query.window.since, query.window.until)
        charted = [c for c in columns if c.kind == AGGREGATE]
        overlay = None
        if previous is not None and query.compare is not None:
            overlay = (previous.series, query.window.since - query.compare.since)
        label = result.compared_with if query.compare is not None and query.compare.previous_release else ""
        figures = explore_figures(result.series, charted, step, window, overlay, label or "previous period")
        for figure in figures.values():
            add_markers(figure, markers, viewer.org.slug)
    if query is not None and query.compare is not None:
        columns = compared_columns_of(query)
    dataset = DATASETS.get(body["dataset"]) or DATASETS["pageloads"]
    saved_rows = saved.list_saved(db, org_id)
    owner_ids = {s.owner_user_id for s in saved_rows if s.owner_user_id}
    owners = (
        {u.id: u.email for u in db.scalars(select(User).where(User.id.in_(owner_ids)))} if owner_ids else {}
    )
    filters = list(body["filters"]) + [{"field": "", "op": "=", "value": ""}] * FILTER_ROWS
    aggregates = list(body["aggregates"]) or [{"fn": "count", "metric": ""}]
    context = {
        "viewer": viewer,
        "user": viewer.user,
        "explore_path": EXPLORE.format(org_slug=viewer.org.slug),
        "projects": org_projects(db, org_id),
        "datasets": DATASETS,
        "dataset": dataset,
        "body": body,
        "filters": filters,
        "group_slots": (body["group_by"] + ["", "", ""])[:3],
        "aggregates": [*aggregates, {"fn": "", "metric": ""}],
        "ops": OPS,
        "fns": FNS,
        # Only what the query parser accepts for this dataset (the server refuses the rest).
        "offered_aggregates": offered_aggregates(dataset),
        "intervals": INTERVALS,
        "metrics": sorted({*dataset.metrics, dataset.counted}),
        "error": error,
        "result": result,
        "figures": figures,
        "samples": sum(r["samples"] for r in result.rows) if result else 0,
        "columns": columns,
        "cells": _cells(columns, result) if result else [],
        "saved": [
            (s, "?" + urlencode(params_from_body(s.query)), owners.get(s.owner_user_id or 0, "API key"))
            for s in saved_rows
        ],
        "share_query": urlencode(params_from_body(query.as_body())) if query else "",
        "formats": FORMATS if result is not None else (),
        "dashboards": dashboards.list_dashboards(db, org_id),
        "widget_kinds": dashboards.KINDS,
    }
    return render(request, "explore.html", context)


def _cells(columns: list[Column], result: Result) -> list[list[dict[str, Any]]]:
    """Each row's cells: the value as the catalog writes it, the raw value and, beside an aggregate over a
    metric, the values it summarises (``n``)."""
    out = []
    for row, counts in zip(result.rows, result.value_samples or [{}] * len(result.rows), strict=True):
        out.append(
            [
                {"text": c.format(row[c.key]), "value": row[c.key], "n": counts.get(c.key), "kind": c.kind}
                for c in columns
            ]
        )
    return out


@router.get(EXPLORE + "/download.{fmt}")
def download(request: Request, fmt: str, viewer: OrgViewer, db: Db) -> Response:
    """The page's query as a file (CSV, Parquet or JSON: the API's download, up to 1,000,000 rows,
    streamed)."""
    if fmt not in FORMATS:
        raise InvalidInput(f"format: must be one of {', '.join(FORMATS)}")
    body = body_from_params(request.query_params)
    title = str(request.query_params.get("name") or "")  # a widget's title, when its card links here
    body.pop("limit", None)  # the page's table limit; a download holds every row (up to the download limit)
    query = parse_query(body, download=True)
    ids = project_ids(db, viewer.org.id, query.project)
    settings = app_settings(request)
    stream = open_download(
        lambda: own_client(settings.resolved_warehouse_url, settings.warehouse_database),
        query,
        viewer.org.id,
        ids,
        fmt,
    )
    headers = {
        "X-Explore-Truncated": "1" if stream.truncated else "0",
        "Content-Disposition": f'attachment; filename="{download_name(query, fmt, title)}"',
        "Cache-Control": "no-store",
    }
    return StreamingResponse(stream.chunks(), media_type=stream.media_type, headers=headers)


@router.post(EXPLORE + "/queries")
async def save_query(request: Request, viewer: OrgViewer, db: Db) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    path = EXPLORE.format(org_slug=viewer.org.slug)
    query_string = str(form.get("query") or "")
    body = body_from_params(QueryParams(query_string))
    created = saved.create_saved(
        db,
        viewer.org.id,
        {
            "name": str(form.get("name") or ""),
            "description": str(form.get("description") or ""),
            "query": body,
        },
        owner_user_id=viewer.user.id,
    )
    return RedirectResponse(f"{path}?{urlencode(params_from_body(created.query))}", status_code=303)


@router.post(EXPLORE + "/queries/{query_id}/delete")
async def delete_query(request: Request, query_id: int, viewer: OrgViewer, db: Db) -> Response:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    saved.delete_saved(db, viewer.org.id, query_id)
    return RedirectResponse(EXPLORE.format(org_slug=viewer.org.slug), status_code=303)
