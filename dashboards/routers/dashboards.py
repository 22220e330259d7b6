"""The analyst's dashboards (docs/explore.md): `/orgs/{org}/dashboards` lists them (new, import a JSON file)
and
`/orgs/{org}/dashboards/{id}` draws one — a filter bar (range, project, environment, release) kept in the URL
and applied to every widget, and a grid of widgets drawn as lines, bars, numbers (with their change) and
tables.

Every edit is a small form posted with the CSRF token (no script composes a request): move a widget earlier or
later, make it wider, narrower, taller or shorter, duplicate or delete it, keep the filter bar as the
dashboard's default, export the dashboard's JSON; Explore's "Add to dashboard" posts its query here."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.orm import Session
from starlette.datastructures import QueryParams

from dashboards.context import Db, OrgViewer, app_settings, org_projects
from dashboards.dashboard_page import board_page
from dashboards.dashboard_snapshot import answers_as_of, widget_views
from dashboards.rendering import render
from dashboards.routers.explore import body_from_params
from dashboards.routers.subscriptions import channel_names
from dashboards.security import check_csrf
from stacklens import annotations as notes
from stacklens.csv_cells import csv_text
from stacklens.errors import InvalidInput
from stacklens.explore import dashboard_variables as dv
from stacklens.explore import dashboards as boards
from stacklens.explore import subscriptions as subscription_rows
from stacklens.explore.columns import header
from stacklens.explore.dashboard_shares import active_shares
from stacklens.explore.download_names import slug
from stacklens.explore.query import BadQuery
from stacklens.explore.query_parser import parse_query
from stacklens.explore.subscriptions import schedule_of
from stacklens.explore.views import VIEWS
from stacklens.explore.widget_cache import TTL_SECONDS
from stacklens.ingest import jsondepth
from stacklens.view_filters import RANGES

router = APIRouter(include_in_schema=False)
LIST = "/orgs/{org_slug}/dashboards"
ONE = LIST + "/{dashboard_id}"
ACTIONS = ("earlier", "later", "wider", "narrower", "taller", "shorter", "duplicate", "delete")
WIDTHS = (3, 4, 6, 8, 12)  # the sizes "wider"/"narrower" step through: quarters, thirds, halves, full
MAX_IMPORT_BYTES = 1_000_000


def _page_filters(board: boards.Board, params: QueryParams) -> dict[str, str]:
    """The dashboard's saved filters, overridden by the URL's (the filter bar is a GET form)."""
    return {key: str(params.get(key, board.filters.get(key, ""))) for key in boards.FILTER_KEYS}


@router.get(LIST, response_class=HTMLResponse)
def list_page(request: Request, viewer: OrgViewer, db: Db) -> Response:
    rows = boards.list_dashboards(db, viewer.org.id)
    context = {
        "viewer": viewer,
        "user": viewer.user,
        "boards": rows,
        "notes": notes.list_annotations(db, viewer.org.id)[:100],
        "projects": org_projects(db, viewer.org.id),
    }
    return render(request, "dashboards.html", context)


async def _form(request: Request) -> Any:
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    return form


def _back(viewer: OrgViewer, dashboard_id: int, query: str = "") -> RedirectResponse:
    path = ONE.format(org_slug=viewer.org.slug, dashboard_id=dashboard_id)
    return RedirectResponse(path + (f"?{query}" if query else ""), status_code=303)


@router.post(LIST)
async def create(request: Request, viewer: OrgViewer, db: Db) -> Response:
    form = await _form(request)
    body = {"name": str(form.get("name") or ""), "description": str(form.get("description") or "")}
    created = boards.create_dashboard(db, viewer.org.id, body, owner_user_id=viewer.user.id)
    return _back(viewer, created.id)


@router.post(LIST + "/import")
async def import_json(request: Request, viewer: OrgViewer, db: Db) -> Response:
    """A dashboard from an exported JSON file (or its text pasted), validated as the API validates it."""
    form = await _form(request)
    upload = form.get("file")
    raw: bytes | str = str(form.get("json") or "")
    if upload is not None and not isinstance(upload, str):
        raw = await upload.read(MAX_IMPORT_BYTES + 1) or raw
    await form.close()  # the upload's temporary file, now read
    if len(raw) > MAX_IMPORT_BYTES:
        raise InvalidInput(f"file: at most {MAX_IMPORT_BYTES:,} bytes")
    try:
        body = jsondepth.loads(raw or b"null", where="the file")
    except (ValueError, UnicodeDecodeError):
        raise InvalidInput("file: not a dashboard's JSON (export one from a dashboard's page)") from None
    if isinstance(body, dict):  # an export of the API's answer carries its id and times: not part of the body
        body = {k: v for k, v in body.items() if k in boards.BODY_KEYS}
    created = boards.create_dashboard(db, viewer.org.id, body, owner_user_id=viewer.user.id)
    return _back(viewer, created.id)


@router.get(ONE, response_class=HTMLResponse)
def dashboard_page(request: Request, dashboard_id: int, viewer: OrgViewer, db: Db) -> Response:
    org_id = viewer.org.id
    board = boards.get_dashboard(db, org_id, dashboard_id)
    error = ""
    filters = _page_filters(board, request.query_params)
    try:
        filters = boards.parse_filters(db, org_id, filters)
    except BadQuery as exc:
        error = str(exc)
        filters = board.filters
    page = board_page(request, db, org_id, viewer.org.slug, board, filters)  # variables, refresh, TV
    widgets = page["widgets"]
    query = "&".join(
        q for q in (urlencode({k: v for k, v in filters.items() if v}), page["extra_query"]) if q
    )
    context = {
        "viewer": viewer,
        "user": viewer.user,
        "board": board,
        "filters": filters,
        "saved_filters": board.filters,
        "ranges": RANGES,
        "projects": org_projects(db, org_id),
        "widgets": widgets,
        "as_of": answers_as_of(widgets),
        "kept_seconds": int(TTL_SECONDS),
        "error": error,
        "query": query,
        "path": ONE.format(org_slug=viewer.org.slug, dashboard_id=board.id),
        "actions": ACTIONS,
        "views": VIEWS,
        "kinds": boards.KINDS,
        "subscriptions": [
            (s, schedule_of(s).as_json())
            for s in subscription_rows.list_subscriptions(db, org_id, dashboard_id=board.id)
        ],
        "channels": channel_names(db, org_id),
        # The form offers shared channels and the member's own, never another member's personal mail.
        "offered": subscription_rows.offered_channels(db, org_id, viewer.user.email),
        "weekdays": subscription_rows.WEEKDAYS,
        "shared": len(active_shares(db, org_id, board.id)),
        **page,
    }
    return render(request, "dashboard.html", context)


@router.get(ONE + "/export.json")
def export(dashboard_id: int, viewer: OrgViewer, db: Db) -> Response:
    """The dashboard's body as a file: what ``POST /api/dashboards`` and the import form take back."""
    board = boards.get_dashboard(db, viewer.org.id, dashboard_id)
    name = "".join(ch if ch.isalnum() else "-" for ch in board.name.lower()).strip("-")[:60] or "dashboard"
    return Response(
        json.dumps(board.as_body(), indent=2) + "\n",
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{name}.json"', "Cache-Control": "no-store"},
    )


def _replace(db: Session, viewer: OrgViewer, board: boards.Board, **changes: Any) -> boards.Board:
    body = {**board.as_body(), **changes}
    return boards.replace_dashboard(db, viewer.org.id, board.id, body)


def _step(value: int, sizes: tuple[int, ...], up: bool) -> int:
    if up:
        return next((s for s in sizes if s > value), sizes[-1])
    return next((s for s in reversed(sizes) if s < value), sizes[0])


@router.post(ONE + "/widgets/{index}/{action}")
async def widget_action(
    request: Request, dashboard_id: int, index: int, action: str, viewer: OrgViewer, db: Db
) -> Response:
    """Move, resize, duplicate or delete one widget; the grid is laid out anew in list order."""
    form = await _form(request)
    board = boards.get_dashboard(db, viewer.org.id, dashboard_id)
    widgets = [dict(w, layout=dict(w["layout"])) for w in board.widgets]
    if action not in ACTIONS:
        raise InvalidInput(f"action: use one of {', '.join(ACTIONS)}")
    if not 0 <= index < len(widgets):
        raise InvalidInput(f"widget: this dashboard has no widget {index + 1}")
    widget = widgets[index]
    if action == "earlier" and index > 0:
        widgets[index - 1], widgets[index] = widget, widgets[index - 1]
    elif action == "later" and index < len(widgets) - 1:
        widgets[index + 1], widgets[index] = widget, widgets[index + 1]
    elif action in ("wider", "narrower"):
        widget["layout"]["w"] = _step(widget["layout"]["w"], WIDTHS, action == "wider")
    elif action in ("taller", "shorter"):
        widget["layout"]["h"] = _step(widget["layout"]["h"], (1, 2, 3, 4), action == "taller")
    elif action == "duplicate":
        if len(widgets) >= boards.MAX_WIDGETS:
            raise InvalidInput(f"widgets: a dashboard holds at most {boards.MAX_WIDGETS} widgets")
        widgets.insert(index + 1, {**widget, "title": f"{widget['title']} (copy)"[: boards.MAX_TITLE]})
    elif action == "delete":
        widgets.pop(index)
    _replace(db, viewer, board, widgets=boards.flow(widgets))
    return _back(viewer, board.id, str(form.get("back") or ""))


@router.post(ONE + "/filters")
async def keep_filters(request: Request, dashboard_id: int, viewer: OrgViewer, db: Db) -> Response:
    """Keep the filter bar's values as the dashboard's own (what it opens with, and what its reports use):
    range, project, environment, release, each variable's value (``var-<name>``) as its default, and the
    refresh pace."""
    form = await _form(request)
    board = boards.get_dashboard(db, viewer.org.id, dashboard_id)
    filters = {key: str(form.get(key) or "") for key in boards.FILTER_KEYS}
    values = {str(k): str(v) for k, v in form.items()}
    chosen = dv.chosen_values(dv.variables_of(board.variables), values)  # a fixed list's value checked
    refresh = dv.parse_refresh(form.get("refresh")) if "refresh" in form else board.refresh
    variables = dv.with_defaults(board.variables, chosen)
    _replace(db, viewer, board, filters=filters, variables=variables, refresh=refresh)
    return _back(viewer, board.id)


@router.get(ONE + "/widgets/{index}/download.csv")
def sql_widget_csv(request: Request, dashboard_id: int, index: int, viewer: OrgViewer, db: Db) -> Response:
    """A SQL panel's answer as CSV, under the page's filters and variables (its URL's), as the page shows it
    (the same minute's kept answer): a file named after the widget and the window
    (``slowest-pages-sql-30d.csv``), every text cell neutralised against spreadsheet formulas. The statement
    is the dashboard's own, so a viewer downloads what the page shows them and runs no SQL of their own."""
    board = boards.get_dashboard(db, viewer.org.id, dashboard_id)
    if not 0 <= index < len(board.widgets) or "sql" not in board.widgets[index]:
        raise InvalidInput(f"widget: widget {index + 1} of this dashboard is not a SQL panel")
    filters = boards.parse_filters(db, viewer.org.id, _page_filters(board, request.query_params))
    variables = dv.variables_of(board.variables)
    chosen = dv.chosen_values(variables, request.query_params)
    widgets = dv.with_variables(db, viewer.org.id, [board.widgets[index]], variables, chosen)
    settings = app_settings(request)
    (view,) = widget_views(settings, db, viewer.org.id, viewer.org.slug, widgets, filters, links=False)
    answer = view["answer"]
    if answer.error or answer.result is None:
        raise InvalidInput(f"sql: {answer.error or 'not answered'}")
    name = f"{slug(str(answer.widget.get('title') or '')) or 'sql'}-{filters['range']}.csv"
    return Response(
        csv_text(answer.result.columns, answer.result.rows),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"', "Cache-Control": "no-store"},
    )


@router.post(ONE + "/delete")
async def delete(request: Request, dashboard_id: int, viewer: OrgViewer, db: Db) -> Response:
    await _form(request)
    boards.delete_dashboard(db, viewer.org.id, dashboard_id)
    return RedirectResponse(LIST.format(org_slug=viewer.org.slug), status_code=303)


@router.post(LIST + "/add-widget")
async def add_widget(request: Request, viewer: OrgViewer, db: Db) -> Response:
    """Explore's "Add to dashboard": the page's query (its query string) as a widget of a dashboard of the
    organization, or of a new one named in the form."""
    form = await _form(request)
    query = parse_query(body_from_params(QueryParams(str(form.get("query") or "")))).as_body()
    kind = str(form.get("kind") or "line")
    title = str(form.get("title") or "")
    target = str(form.get("dashboard_id") or "")
    if target.isdigit():
        board = boards.get_dashboard(db, viewer.org.id, int(target))
    else:
        name = str(form.get("new_name") or "").strip()
        if not name:
            raise InvalidInput("new_name: name the new dashboard, or pick one")
        board = boards.create_dashboard(db, viewer.org.id, {"name": name}, owner_user_id=viewer.user.id)
    if not title:
        parsed = parse_query(query)
        title = f"{header(parsed.aggregates[0])} · {parsed.dataset.label}"
    return _append(db, viewer, board, {"title": title, "kind": kind, "query": query})


@router.post(ONE + "/widgets")
async def add_view(request: Request, dashboard_id: int, viewer: OrgViewer, db: Db) -> Response:
    """A performance or release view as a new widget (the dashboard page's "Add a view")."""
    form = await _form(request)
    board = boards.get_dashboard(db, viewer.org.id, dashboard_id)
    widget = {"title": "", "kind": str(form.get("kind") or "line"), "view": str(form.get("view") or "")}
    return _append(db, viewer, board, widget)


def _append(db: Session, viewer: OrgViewer, board: boards.Board, widget: dict[str, Any]) -> Response:
    """The widget at the end of the grid, half its width (two rows high)."""
    widgets = [*board.widgets, {**widget, "layout": {"x": 0, "y": 0, "w": 6, "h": 2}}]
    if len(widgets) > boards.MAX_WIDGETS:
        raise InvalidInput(f"dashboard: a dashboard holds at most {boards.MAX_WIDGETS} widgets")
    _replace(db, viewer, board, widgets=boards.flow(widgets))
    return _back(viewer, board.id)
