"""An organization's dashboards (docs/explore.md): a name, a filter bar (``range``, ``environment``,
``release``,
``project``) and a grid of widgets, each an Explore question drawn as a line, bar, number or table.

A widget asks its question one of three ways: an inline Explore ``query`` (the body of ``POST
/api/explore/query``), a ``saved_query_id`` of the organization (so the dashboard follows the saved query when
it changes) or a ``view`` of the performance and release pages (:mod:`stacklens.explore.views`). Its
``layout`` ``{"x", "y", "w", "h"}`` places it on a 12-column grid; the page reads widgets in ``(y, x)`` order.

Bodies are validated here, once, for the API, the page and an imported JSON file alike: a bad one raises
:class:`~stacklens.explore.query.BadQuery` naming the field (``widgets[2].layout.w``). Every read and write is
within the organization (another organization's id answers as a missing one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from stacklens.control.models import Dashboard, Project, SavedQuery, utcnow
from stacklens.errors import NotFound
from stacklens.explore import dashboard_variables as variables_
from stacklens.explore.query import BadQuery
from stacklens.explore.query_parser import parse_query
from stacklens.explore.sql_panel import SQL_KINDS, check_sql_text
from stacklens.explore.views import VIEWS
from stacklens.view_filters import RANGES

# The four first kinds, then area, stacked bar, scatter, heat map and gauge (stacklens.explore.widget_kinds).
KINDS = ("line", "bar", "number", "table", "area", "stacked_bar", "scatter", "heatmap", "gauge")
SOURCES = ("query", "saved_query_id", "view", "sql")
COLUMNS = 12  # the grid's width in columns
MAX_HEIGHT = 4  # rows of the grid a widget may span (a row is about 150 px)
MAX_WIDGETS = 24  # a page of more is a report nobody reads, and 24 questions cost a page view
MAX_DASHBOARDS_PER_ORG = 200
MAX_NAME = 200
MAX_TITLE = 200
MAX_DESCRIPTION = 2_000
MAX_FILTER_VALUE = 256
DEFAULT_RANGE = "30d"
FILTER_KEYS = ("range", "environment", "release", "project")
BODY_KEYS = ("name", "description", "filters", "widgets", "variables", "refresh")
WIDGET_KEYS = ("title", "kind", *SOURCES, "layout")


@dataclass(frozen=True)
class Board:
    """One dashboard as the API answers it and a JSON export holds it."""

    id: int
    name: str
    description: str
    filters: dict[str, str]
    widgets: list[dict[str, Any]]
    owner_user_id: int | None
    created_at: datetime
    updated_at: datetime
    variables: list[dict[str, Any]] = field(default_factory=list)  # stacklens.explore.dashboard_variables
    refresh: str | None = None  # how often the page asks again: 30s, 1m, 5m, 15m

    def as_body(self) -> dict[str, Any]:
        """The body a ``POST``/``PUT`` takes: what an export writes and an import reads."""
        return {
            "name": self.name,
            "description": self.description,
            "filters": dict(self.filters),
            "widgets": [dict(w) for w in self.widgets],
            "variables": [dict(v) for v in self.variables],
            "refresh": self.refresh,
        }

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            **self.as_body(),
            "owner_user_id": self.owner_user_id,
            "created_at": self.created_at.isoformat().replace("+00:00", "Z"),
            "updated_at": self.updated_at.isoformat().replace("+00:00", "Z"),
        }


def _out(row: Dashboard) -> Board:
    return Board(
        row.id,
        row.name,
        row.description,
        dict(row.filters or {}),
        list(row.widgets or []),
        row.owner_user_id,
        row.created_at,
        row.updated_at,
        list(row.variables or []),
        row.refresh,
    )


def _string(name: str, value: object, most: int, *, required: bool = False) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise BadQuery(name, "must be a string")
    value = value.strip()
    if required and not value:
        raise BadQuery(name, "must not be empty")
    if len(value) > most:
        raise BadQuery(name, f"at most {most:,} characters")
    if any(ord(ch) < 32 and ch not in "\n\t" for ch in value):
        raise BadQuery(name, "control characters are not allowed")
    return value


def _whole(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadQuery(name, f"must be a whole number from {low} to {high}")
    return value


def parse_filters(session: Session, org_id: int, raw: object) -> dict[str, str]:
    """The dashboard's filter bar: ``range`` one of 24h, 7d, 14d, 30d, 90d (30d when not given); ``project`` a
    project slug of the organization or '' (every project); ``environment``, ``release`` exact values or
    ''."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise BadQuery("filters", 'must be an object {"range", "environment", "release", "project"}')
    unknown = [k for k in raw if k not in FILTER_KEYS]
    if unknown:
        raise BadQuery(f"filters.{str(unknown[0])[:64]}", f"unknown filter; use {', '.join(FILTER_KEYS)}")
    out = {key: _string(f"filters.{key}", raw.get(key), MAX_FILTER_VALUE) for key in FILTER_KEYS}
    out["range"] = out["range"] or DEFAULT_RANGE
    if out["range"] not in RANGES:
        raise BadQuery("filters.range", f"{out['range']!r} is not one of {', '.join(RANGES)}")
    if out["project"]:
        out["project"] = out["project"].lower()
        found = session.scalar(
            select(Project.id).where(Project.org_id == org_id, Project.slug == out["project"])
        )
        if found is None:
            raise BadQuery("filters.project", f"no project {out['project']!r} in this organization")
    return out


def _layout(where: str, raw: object, index: int) -> dict[str, int]:
    if raw is None:  # placed after the widget before it, half the grid wide
        return {"x": (index % 2) * 6, "y": (index // 2) * 2, "w": 6, "h": 2}
    if not isinstance(raw, dict):
        raise BadQuery(where, 'must be an object {"x", "y", "w", "h"}')
    unknown = [k for k in raw if k not in ("x", "y", "w", "h")]
    if unknown:
        raise BadQuery(f"{where}.{str(unknown[0])[:64]}", "unknown key; a layout takes x, y, w, h")
    w = _whole(f"{where}.w", raw.get("w", 6), 1, COLUMNS)
    h = _whole(f"{where}.h", raw.get("h", 2), 1, MAX_HEIGHT)
    x = _whole(f"{where}.x", raw.get("x", 0), 0, COLUMNS - w)
    y = _whole(f"{where}.y", raw.get("y", index * 2), 0, 10_000)
    return {"x": x, "y": y, "w": w, "h": h}


def parse_widget(session: Session, org_id: int, index: int, raw: object) -> dict[str, Any]:
    """One widget, normalised: its title, kind, one source (an inline query as Explore normalises it, a saved
    query of the organization or a view) and its layout."""
    where = f"widgets[{index}]"
    if not isinstance(raw, dict):
        raise BadQuery(
            where, 'must be an object {"title", "kind", "query" | "saved_query_id" | "view", "layout"}'
        )
    unknown = [k for k in raw if k not in WIDGET_KEYS]
    if unknown:
        raise BadQuery(
            f"{where}.{str(unknown[0])[:64]}", f"unknown key; a widget takes {', '.join(WIDGET_KEYS)}"
        )
    kind = raw.get("kind")
    if kind not in KINDS:
        raise BadQuery(f"{where}.kind", f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    given = [key for key in SOURCES if raw.get(key) not in (None, "")]
    if len(given) != 1:
        raise BadQuery(where, "give exactly one of query, saved_query_id, view, sql")
    widget: dict[str, Any] = {"title": _string(f"{where}.title", raw.get("title"), MAX_TITLE), "kind": kind}
    source = given[0]
    if source == "query":
        try:
            widget["query"] = parse_query(raw["query"]).as_body()
        except BadQuery as exc:
            raise BadQuery(f"{where}.query.{exc.field}", str(exc).split(": ", 1)[1]) from None
    elif source == "saved_query_id":
        saved_id = _whole(f"{where}.saved_query_id", raw["saved_query_id"], 1, 2**31 - 1)
        owner = session.scalar(select(SavedQuery.org_id).where(SavedQuery.id == saved_id))
        if owner != org_id:
            raise BadQuery(f"{where}.saved_query_id", f"no saved query {saved_id} in this organization")
        widget["saved_query_id"] = saved_id
    elif source == "sql":  # one read-only SELECT (stacklens.explore.sql_panel), judged whenever it runs
        if kind not in SQL_KINDS:
            raise BadQuery(f"{where}.kind", f"a SQL widget draws as {', '.join(SQL_KINDS)}")
        widget["sql"] = check_sql_text(raw["sql"], f"{where}.sql")
    else:
        view = raw["view"]
        if view not in VIEWS:
            raise BadQuery(f"{where}.view", f"unknown view {str(view)[:64]!r}; use one of {', '.join(VIEWS)}")
        widget["view"] = view
    if not widget["title"]:
        widget["title"] = VIEWS[widget["view"]].title if source == "view" else f"Widget {index + 1}"
    widget["layout"] = _layout(f"{where}.layout", raw.get("layout"), index)
    return widget


def parse_body(
    session: Session, org_id: int, body: object
) -> tuple[str, str, dict[str, str], list[dict[str, Any]]]:
    """A dashboard body (API, page or imported file): name, description, filters and widgets, normalised; the
    widgets sorted into reading order (by row, then column). Its variables and refresh:
    :func:`parse_extras`."""
    if not isinstance(body, dict):
        raise BadQuery("body", 'must be a JSON object {"name", "description", "filters", "widgets"}')
    unknown = [k for k in body if k not in BODY_KEYS]
    if unknown:
        raise BadQuery(str(unknown[0])[:64], f"unknown field; a dashboard takes {', '.join(BODY_KEYS)}")
    name = _string("name", body.get("name"), MAX_NAME, required=True)
    description = _string("description", body.get("description"), MAX_DESCRIPTION)
    filters = parse_filters(session, org_id, body.get("filters"))
    raw_widgets = body.get("widgets")
    raw_widgets = [] if raw_widgets is None else raw_widgets
    if not isinstance(raw_widgets, list):
        raise BadQuery("widgets", "must be a list")
    if len(raw_widgets) > MAX_WIDGETS:
        raise BadQuery("widgets", f"a dashboard holds at most {MAX_WIDGETS} widgets")
    widgets = [parse_widget(session, org_id, i, w) for i, w in enumerate(raw_widgets)]
    widgets.sort(key=lambda w: (w["layout"]["y"], w["layout"]["x"]))
    return name, description, filters, widgets


def parse_extras(body: object, widgets: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str | None]:
    """A body's ``variables`` (each ``$name`` its widgets use defined) and ``refresh``."""
    raw = body if isinstance(body, dict) else {}
    variables = variables_.parse_variables(raw.get("variables"))
    variables_.check_references(widgets, variables)
    return variables, variables_.parse_refresh(raw.get("refresh"))


def flow(widgets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The widgets placed anew in their list order, left to right in rows of :data:`COLUMNS` (each keeps its
    width and height): what the page does after a move, a resize, a copy or a removal, so the grid has no
    holes and reading order is list order."""
    x = y = row_height = 0
    placed = []
    for widget in widgets:
        layout = dict(widget["layout"])
        if x + layout["w"] > COLUMNS:
            x, y, row_height = 0, y + row_height, 0
        layout["x"], layout["y"] = x, y
        x += layout["w"]
        row_height = max(row_height, layout["h"])
        placed.append({**widget, "layout": layout})
    return placed


def _get(session: Session, org_id: int, dashboard_id: int) -> Dashboard:
    row = session.get(Dashboard, dashboard_id)
    if row is None or row.org_id != org_id:
        raise NotFound(f"no dashboard {dashboard_id} in this organization")
    return row


def list_dashboards(session: Session, org_id: int) -> list[Board]:
    rows = session.scalars(select(Dashboard).where(Dashboard.org_id == org_id).order_by(Dashboard.name))
    return [_out(r) for r in rows]


def create_dashboard(session: Session, org_id: int, body: object, owner_user_id: int | None = None) -> Board:
    name, description, filters, widgets = parse_body(session, org_id, body)
    variables, refresh = parse_extras(body, widgets)
    count = session.scalar(select(func.count()).select_from(Dashboard).where(Dashboard.org_id == org_id)) or 0
    if count >= MAX_DASHBOARDS_PER_ORG:
        raise BadQuery("name", f"an organization keeps at most {MAX_DASHBOARDS_PER_ORG} dashboards")
    row = Dashboard(
        org_id=org_id,
        owner_user_id=owner_user_id,
        name=name,
        description=description,
        filters=filters,
        widgets=widgets,
        variables=variables,
        refresh=refresh,
    )
    session.add(row)
    session.flush()
    return _out(row)


def get_dashboard(session: Session, org_id: int, dashboard_id: int) -> Board:
    return _out(_get(session, org_id, dashboard_id))


def replace_dashboard(session: Session, org_id: int, dashboard_id: int, body: object) -> Board:
    row = _get(session, org_id, dashboard_id)
    row.name, row.description, row.filters, row.widgets = parse_body(session, org_id, body)
    row.variables, row.refresh = parse_extras(body, row.widgets)
    row.updated_at = utcnow()
    session.flush()
    return _out(row)


def delete_dashboard(session: Session, org_id: int, dashboard_id: int) -> None:
    session.delete(_get(session, org_id, dashboard_id))
    session.flush()
