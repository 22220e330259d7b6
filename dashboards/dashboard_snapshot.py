"""A dashboard's widgets as the page draws them, and as a shared link's snapshot: every widget answered
under the filter bar, its figure built (with the window's release and annotation markers on time charts) —
then, for a snapshot, written out as plain JSON (texts and figures, no query objects, no links into
signed-in pages), so the shared page renders without a query."""

from __future__ import annotations

from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy.orm import Session

from dashboards.dashboard_figures import widget_figure
from dashboards.explore_links import download_url, explore_url
from dashboards.marker_figures import add_markers
from dashboards.sql_widget_views import sql_view
from stacklens.errors import NotFound
from stacklens.explore.columns import CHANGE, Column, columns_of, compared_columns_of
from stacklens.explore.scope import project_ids
from stacklens.explore.sql_widgets import is_sql
from stacklens.explore.widget_cache import WidgetCache, widget_cache_for
from stacklens.explore.widget_change import Change, change_of
from stacklens.explore.widget_plot import widget_plot
from stacklens.explore.widgets import WidgetAnswer, answer_widgets
from stacklens.ingest.front_door import settle_spooled
from stacklens.markers import Marker, MarkerGroup, ReleaseFinder, chart_markers, release_markers
from stacklens.settings import Settings
from stacklens.view_filters import RANGES
from stacklens.warehouse.client import analyst_client, get_warehouse


def _source(widget: dict[str, Any]) -> str:
    if "saved_query_id" in widget:
        return f"saved query {widget['saved_query_id']}"
    if "view" in widget:
        return f"view {widget['view']}"
    return "Explore query"


def widget_views(
    settings: Settings,
    db: Session,
    org_id: int,
    org_slug: str,
    widgets: list[dict[str, Any]],
    filters: dict[str, str],
    *,
    links: bool = True,
    now: datetime | None = None,
) -> list[dict[str, Any]]:
    """Each widget's answer, layout, columns, figure and (with ``links``) its Explore link. An answer of the
    same question from the last minute is reused (:mod:`stacklens.explore.widget_cache`);
    :func:`answers_as_of` says when the oldest shown was taken."""
    settle_spooled(settings)  # every event answered before the page is in its answer
    now = now or datetime.now(UTC)
    until = now.replace(second=0, microsecond=0)
    since = until - RANGES[filters["range"]]
    with ExitStack() as opened:
        connection: list[Client] = []

        def analyst() -> Client:
            # Opened for the first widget the cache cannot answer: a page of kept answers asks the engine
            # nothing.
            if not connection:
                connection.append(opened.enter_context(analyst_client(settings)))
            return connection[0]

        answers = answer_widgets(analyst, db, org_id, widgets, filters, now, widget_cache_for(settings))
    markers: list[MarkerGroup] = []
    if any(a.query is not None and a.query.interval and a.result is not None for a in answers):
        try:
            ids = project_ids(db, org_id, filters["project"])
            # A page's read, as the performance pages read their markers: on the shared client.
            markers = chart_markers(
                get_warehouse(settings),
                db,
                org_id,
                ids,
                since,
                until,
                filters["environment"],
                releases=kept_release_markers(widget_cache_for(settings)),
            )
        except NotFound:
            pass
    out = []
    for answer in answers:
        layout = answer.widget["layout"]
        if is_sql(answer):  # a SQL panel draws its own columns (dashboards.sql_widget_views)
            out.append(sql_view(answer, layout))
            continue
        columns = []
        if answer.query is not None:
            compared = answer.query.compare is not None and answer.widget["kind"] == "table"
            columns = compared_columns_of(answer.query) if compared else columns_of(answer.query)
        plot = widget_plot(answer)
        figure = widget_figure(answer, columns, layout["h"], plot) if answer.result is not None else None
        if figure is not None and answer.query is not None and answer.query.interval:
            add_markers(figure, markers, org_slug, links=links)
        out.append(
            {
                "answer": answer,
                "layout": layout,
                "columns": columns,
                "figure": figure,
                "explore": explore_url(org_slug, answer.body) if answer.body and links else "",
                "download": (
                    download_url(org_slug, answer.body, answer.widget["title"], filters["range"])
                    if answer.body and links
                    else ""
                ),
                "source": _source(answer.widget),
                "refusal": plot.refusal if plot is not None else "",
                "note": plot.note if plot is not None else "",
                "change": number_change(answer),
                "changes": table_changes(answer, columns),
            }
        )
    return out


def kept_release_markers(cache: WidgetCache) -> ReleaseFinder:
    """:func:`stacklens.markers.release_markers` kept in the widgets' cache (the warehouse's own) for its TTL,
    keyed by the organization, projects, environment and the window's length as the widgets' answers are: a
    kept view of the dashboard then asks the engine nothing (the markers' read, which grows with the data,
    was ~13 of the 36 ms of CPU of a warm render at 1 M page loads), and its markers are as fresh as its
    widgets. Annotations are read anew (the control store, cheap): one just posted shows on the next view."""

    def find(
        client: Client,
        org_id: int,
        projects: dict[int, str],
        since: datetime,
        until: datetime,
        environment: str,
    ) -> list[Marker]:
        key = ("release_markers", org_id, tuple(sorted(projects.items())), environment, until - since)
        return cache.kept(key, lambda: release_markers(client, org_id, projects, since, until, environment))

    return find


def number_change(answer: WidgetAnswer) -> Change | None:
    """A number widget's change against its compared window, worded and toned by its metric."""
    if answer.widget["kind"] != "number" or answer.query is None or not answer.query.aggregates:
        return None
    return change_of(answer.query.aggregates[0], answer.number, answer.previous_number)


def table_changes(answer: WidgetAnswer, columns: list[Column]) -> list[dict[str, Change | None]]:
    """A compared table's changes, per row and change column (``<column>_change_pct``), as the number's."""
    if answer.result is None or not any(c.kind == CHANGE for c in columns):
        return []
    out = []
    for row in answer.result.rows:
        cells: dict[str, Change | None] = {}
        for c in columns:
            if c.kind == CHANGE and c.aggregate is not None:
                value = c.key.removesuffix("_change_pct")
                cells[c.key] = change_of(c.aggregate, row.get(value), row.get(value + "_previous"))
        out.append(cells)
    return out


def answers_as_of(views: list[dict[str, Any]]) -> datetime | None:
    """When the oldest answer shown was taken (None when no widget was answered)."""
    taken = [v["answer"].taken_at for v in views if v["answer"].taken_at is not None]
    return min(taken) if taken else None


_NONE = Change(0.0, False, "")


def _cell(column: Column, row: dict[str, Any], changes: dict[str, Change | None]) -> str:
    """A table cell as the page writes it; a change as points or per cent, by its metric."""
    if column.key in changes:
        change = changes[column.key]
        return change.text if change is not None else column.format(None)
    return column.format(row.get(column.key))


def snapshot_of(
    name: str, description: str, filters: dict[str, str], views: list[dict[str, Any]], now: datetime
) -> dict[str, Any]:
    """The shared page's content as plain JSON: each widget's title, kind, size and what it shows as text (a
    number and its change, a table's cells) or a figure; an error as its message."""
    widgets = []
    for view in views:
        answer, columns = view["answer"], view["columns"]
        item: dict[str, Any] = {
            "title": answer.widget["title"],
            "kind": answer.widget["kind"],
            "w": view["layout"]["w"],
            "h": view["layout"]["h"],
            "error": answer.error,
            "empty": answer.result is not None and not answer.result.rows,
            "figure": view["figure"],
            "note": view.get("note", ""),
            # dashboards.dashboard_board: a variable without values, a gauge's budget, a variable not applied
            "no_values": view.get("no_values", ""),
            "gauge": view.get("gauge") or {},
            "unfiltered": view.get("unfiltered", ""),
        }
        if view.get("refusal"):
            item["error"] = view["refusal"]
        if answer.result is not None and answer.result.rows and columns:
            if answer.widget["kind"] == "number" and is_sql(answer):
                # No "change": a statement has no previous period, so the share says nothing about one.
                item["number"] = columns[0].format(answer.number)
                item["caption"] = f"{columns[0].header} · {view.get('took', '')}"
            elif answer.widget["kind"] == "number":
                column = columns[0]
                change = view.get("change")
                item["number"] = column.format(answer.number)
                cmp = answer.query.compare if answer.query is not None else None
                before = (
                    answer.result.compared_with
                    if cmp is not None and cmp.previous_release
                    else f"the previous {filters['range']}"
                )
                item["change"] = f"{change.arrow} {change.text}" if change is not None else ""
                item["against"] = (
                    f"vs {before} ({column.format(answer.previous_number)})" if change is not None else ""
                )
                item["tone"] = change.tone if change is not None else ""
                item["caption"] = f"{column.header} · {answer.result.rows[0]['samples']:,} samples"
            elif view["figure"] is None:
                item["headers"] = [c.header for c in columns]
                # A SQL table's columns of numbers are right-aligned as other tables' numbers are.
                item["numeric"] = [c.kind != "group" or (c.number and is_sql(answer)) for c in columns]
                item["rows"] = [
                    [_cell(c, row, changes) for c in columns]
                    for row, changes in zip(
                        answer.result.rows, view.get("changes") or [{}] * len(answer.result.rows), strict=True
                    )
                ]
                item["tones"] = [
                    [(changes.get(c.key) or _NONE).tone for c in columns]
                    for changes in view.get("changes") or []
                ]
        widgets.append(item)
    return {
        "name": name,
        "description": description,
        "filters": filters,
        # the oldest answer's time: a kept answer is up to a minute older than the snapshot
        "taken_at": (answers_as_of(views) or now).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "widgets": widgets,
    }
