"""The SQL editor (`/orgs/{org}/sql`, docs/explore.md "SQL panels"): one read-only SELECT over the documented
tables (listed beside the editor with their columns), run with the organization's rows only under the query
budgets (:func:`stacklens.explore.sql_panel.answer_panel`), its answer a table or a chart with the time it
took and what it read, or the engine's message with where the parser stopped; "Save as widget" puts the
statement on a dashboard as a SQL widget.

Every run and save is a form posted with the CSRF token (the page's script, ``static/sql_editor.js``, only
adds Ctrl+Enter and inserts a table's name at the cursor). Viewers read the page; the organization refuses
their posts before a handler runs (``dashboards.context.org_viewer``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dashboards.context import Db, OrgViewer, app_settings
from dashboards.rendering import render
from dashboards.security import check_csrf
from dashboards.sql_widget_views import sql_figure
from stacklens.control import roles
from stacklens.errors import InvalidInput
from stacklens.explore import dashboards as boards
from stacklens.explore.run import QueryTooCostly, Result, TooManyQueries
from stacklens.explore.sql_panel import (
    MAX_ROWS,
    SQL_KINDS,
    TABLES,
    SqlRefused,
    answer_panel,
    budget_words,
    check_sql_text,
    documented_columns,
    window_params,
)
from stacklens.explore.sql_widgets import sql_columns, sql_plot
from stacklens.explore.widgets import WidgetAnswer
from stacklens.ingest.front_door import settle_spooled
from stacklens.metrics.units import BYTES, format_in
from stacklens.view_filters import RANGES
from stacklens.warehouse.client import analyst_client

router = APIRouter(include_in_schema=False)
PAGE = "/orgs/{org_slug}/sql"
EXAMPLE = (
    "SELECT release, count() AS page_loads, round(quantile(0.75)(lcp)) AS lcp_p75_ms\n"
    "FROM pageload_facts\nWHERE ts >= {since:DateTime} AND ts < {until:DateTime}\n"
    "GROUP BY release\nORDER BY page_loads DESC\nLIMIT 20"
)


def _tables(request: Request) -> dict[str, list[tuple[str, str]]]:
    with analyst_client(app_settings(request)) as client:
        return documented_columns(client)


def _page(request: Request, viewer: OrgViewer, db: Db, status: int = 200, **extra: Any) -> Response:
    context = {
        "viewer": viewer,
        "user": viewer.user,
        "tables": TABLES,
        "budgets": budget_words(),  # the budgets answer_panel applies, never written twice
        "max_rows": MAX_ROWS,
        "columns": _tables(request),
        "kinds": SQL_KINDS,
        "ranges": list(RANGES),
        "boards": boards.list_dashboards(db, viewer.org.id),
        "runs": roles.writes(viewer.role),
        "sql": EXAMPLE,
        "kind": "table",
        "range": "30d",
        **extra,
    }
    return render(request, "sql_editor.html", context, status)


@router.get(PAGE, response_class=HTMLResponse)
def editor(request: Request, viewer: OrgViewer, db: Db) -> Response:
    return _page(request, viewer, db)


def _run(request: Request, org_id: int, sql: str, window: str) -> tuple[Result, str]:
    """The statement's answer, and what the engine read in words (``1.2 MiB``)."""
    settings = app_settings(request)
    settle_spooled(settings)
    with analyst_client(settings) as client:
        params = window_params({"range": window}, datetime.now(UTC))
        panel = answer_panel(client, settings.warehouse_database, org_id, sql, params)
    rows = [dict(zip(panel.columns, row, strict=True)) for row in panel.rows]
    result = Result(panel.columns, rows, [], panel.rows_read, panel.elapsed_ms, panel.truncated)
    return result, format_in(BYTES, panel.bytes_read)


@router.post(PAGE, response_class=HTMLResponse)
async def run(request: Request, viewer: OrgViewer, db: Db) -> Response:
    """Run the form's statement: the answer drawn as chosen, or the reason it did not run (400)."""
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    sql = str(form.get("sql") or "")
    kind = str(form.get("kind") or "table")
    window = str(form.get("range") or "30d")
    state: dict[str, Any] = {"sql": sql, "kind": kind if kind in SQL_KINDS else "table"}
    state["range"] = window if window in RANGES else "30d"
    try:
        result, read = _run(request, viewer.org.id, sql, state["range"])
    except SqlRefused as exc:
        return _page(request, viewer, db, **state, error=exc.message, at=exc, status=400)
    except (InvalidInput, QueryTooCostly, TooManyQueries) as exc:
        return _page(request, viewer, db, **state, error=str(exc), at=None, status=400)
    answer = WidgetAnswer(0, {"title": "", "kind": state["kind"], "sql": sql}, result=result)
    plot = sql_plot(answer)
    chart = None
    if plot is not None and not plot.refusal:  # the time it took is said once, above it (#sql-took)
        chart = sql_figure(plot, state["kind"], result, 3, took_caption=False)
    return _page(
        request,
        viewer,
        db,
        **state,
        result=result,
        read=read,
        answer=answer,
        result_columns=sql_columns(result),
        chart=chart,
        refusal=plot.refusal if plot is not None else "",
    )


@router.post(PAGE + "/widget")
async def save_widget(request: Request, viewer: OrgViewer, db: Db) -> Response:
    """ "Save as widget": the statement as a SQL widget at the end of a dashboard, or of a new one."""
    form = await request.form()
    check_csrf(request, str(form.get("csrf_token") or ""))
    sql = check_sql_text(form.get("sql"))
    kind = str(form.get("kind") or "table")
    title = str(form.get("title") or "").strip() or "SQL panel"
    target = str(form.get("dashboard_id") or "")
    if target.isdigit():
        board = boards.get_dashboard(db, viewer.org.id, int(target))
    else:
        name = str(form.get("new_name") or "").strip()
        if not name:
            raise InvalidInput("new_name: name the new dashboard, or pick one")
        board = boards.create_dashboard(db, viewer.org.id, {"name": name}, owner_user_id=viewer.user.id)
    rows = 3 if kind in ("bar", "line") else 1 if kind == "number" else 2  # a chart's height, a number's
    widget = {"title": title, "kind": kind, "sql": sql, "layout": {"x": 0, "y": 0, "w": 12, "h": rows}}
    widgets = [*board.widgets, widget]
    if len(widgets) > boards.MAX_WIDGETS:
        raise InvalidInput(f"dashboard: a dashboard holds at most {boards.MAX_WIDGETS} widgets")
    body = {**board.as_body(), "widgets": boards.flow(widgets)}
    boards.replace_dashboard(db, viewer.org.id, board.id, body)
    path = f"/orgs/{viewer.org.slug}/dashboards/{board.id}"
    return RedirectResponse(path, status_code=303)
