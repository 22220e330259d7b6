"""A dashboard's widgets answered: each widget's question (inline, saved or a view) under the dashboard's
filter bar, run through Explore (:func:`stacklens.explore.run.run_explore`: the analysts' lane, the per-query
limits and the organization's concurrency cap apply to every widget as to any Explore query).

The filter bar wins over a widget's own window and filters: its ``range`` replaces the widget's window, its
``project`` the widget's project (when set), its ``environment`` and ``release`` replace the widget's
filters on those fields. A line (or a bar without a group-by: bars over time) gets an interval that suits
the range when its own does not; a number is the first aggregate over the whole window, beside its value in
the previous window of the same length (or the widget's own ``compare``); a table with ``compare`` has the
previous value and the change beside each column, a line overlays the compared window."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy.orm import Session

from stacklens.errors import InvalidInput, NotFound
from stacklens.explore import saved
from stacklens.explore.compare import change_pct, run_compared
from stacklens.explore.query import INTERVALS, MAX_BUCKETS, Query
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import Result, TooManyQueries, run_explore
from stacklens.explore.scope import project_ids
from stacklens.explore.sql_panel import answer_panel, sql_widget_statement
from stacklens.explore.views import VIEWS
from stacklens.explore.widget_cache import KeptAnswer, WidgetCache, answer_key
from stacklens.explore.widget_kinds import asked_as, shaped
from stacklens.explore.widget_others import others_query
from stacklens.view_filters import RANGES

# The interval a time chart gets for a range when its own is too fine (more than MAX_BUCKETS) or missing.
RANGE_INTERVALS = {"24h": "1h", "7d": "6h", "14d": "1d", "30d": "1d", "90d": "1w"}


@dataclass
class WidgetAnswer:
    index: int
    widget: dict[str, Any]
    query: Query | None = None
    result: Result | None = None
    previous: Result | None = None  # the compared window's own answer (a number's, or a query's "compare")
    error: str = ""
    body: dict[str, Any] = field(default_factory=dict)  # the question as run (for "open in Explore")
    taken_at: datetime | None = (
        None  # when the engine answered (earlier than the page when kept: widget_cache)
    )
    others: Result | None = None  # a cut line's other groups as one (stacklens.explore.widget_others)

    @property
    def number(self) -> Any:
        """A number widget's value: the first aggregate of the (single) row; None when there is none."""
        if self.result is not None and self.result.rows and "sql" in self.widget:
            return next(iter(self.result.rows[0].values()), None)  # a SQL widget's number: its first cell
        if self.result is None or self.query is None or not self.result.rows:
            return None
        return self.result.rows[0].get(self.query.aggregates[0].column)

    @property
    def previous_number(self) -> Any:
        if self.previous is None or self.query is None or not self.previous.rows:
            return None
        return self.previous.rows[0].get(self.query.aggregates[0].column)

    @property
    def change_pct(self) -> float | None:
        return change_pct(self.number, self.previous_number)


def question(session: Session, org_id: int, widget: dict[str, Any]) -> dict[str, Any]:
    """The widget's own Explore body: inline, its saved query's (NotFound when deleted) or its view's."""
    if "query" in widget:
        return dict(widget["query"])
    if "saved_query_id" in widget:
        return dict(saved.get_saved(session, org_id, int(widget["saved_query_id"])).query)
    return dict(VIEWS[widget["view"]].query)


def under_filters(
    body: dict[str, Any], kind: str, filters: dict[str, str], now: datetime | None = None
) -> dict[str, Any]:
    """The widget's body with the dashboard's filter bar applied (see the module's docstring). The range is
    resolved to ``since``/``until`` at ``now`` (the page's time): every widget of one page view reads the same
    window, and "Open in Explore" reads it too."""
    out = dict(body)
    window = filters.get("range") or "30d"
    until = (now or datetime.now(UTC)).astimezone(UTC).replace(second=0, microsecond=0)
    out.pop("range", None)
    out["since"] = _iso(until - RANGES[window])
    out["until"] = _iso(until)
    if filters.get("project"):
        out["project"] = filters["project"]
    replaced = {key for key in ("environment", "release") if filters.get(key)}
    kept = [f for f in out.get("filters") or [] if f.get("field") not in replaced]
    out["filters"] = kept + [{"field": key, "op": "=", "value": filters[key]} for key in sorted(replaced)]
    if kind == "line" or (kind == "bar" and not out.get("group_by")):
        own = out.get("interval") or ""
        fits = own in INTERVALS and RANGES[window] / INTERVALS[own] <= MAX_BUCKETS
        out["interval"] = own if fits else RANGE_INTERVALS[window]
        out["limit"] = min(int(out.get("limit") or 10), 10)  # lines drawn: the figure's legend limit
    else:
        out["interval"] = ""
        # A card shows a readable number of rows; Explore (its link) shows them all.
        out["limit"] = min(int(out.get("limit") or 100), 20 if kind == "bar" else 50)
    if kind == "number":
        # A number is read beside its value before: the previous window unless the widget chose another.
        out.setdefault("compare", {"previous_period": True})
        out["group_by"] = []
        out["aggregates"] = (out.get("aggregates") or [{"fn": "count"}])[:1]
        out["order_by"] = ""
        out["limit"] = 1
    return out


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def answer_widget(
    client: Client | Callable[[], Client],
    session: Session,
    org_id: int,
    index: int,
    widget: dict[str, Any],
    filters: dict[str, str],
    now: datetime | None = None,
    cache: WidgetCache | None = None,
) -> WidgetAnswer:
    """One widget answered, or its error as a plain message (a deleted saved query, a limit, a busy org); with
    ``cache``, the answer of the same question kept from a view less than its TTL ago when there is one."""
    answer = WidgetAnswer(index, widget)
    now = now or datetime.now(UTC)
    if "sql" in widget:  # a SQL panel: its statement over the window (stacklens.explore.sql_panel)
        return _answer_sql(answer, client, org_id, filters, now, cache)
    try:
        # A kind beyond the four is asked as one of them (stacklens.explore.widget_kinds).
        asked = shaped(question(session, org_id, widget), widget["kind"])
        answer.body = body = under_filters(asked, asked_as(widget["kind"], asked), filters, now)
        answer.query = query = parse_query(body)
        ids = project_ids(session, org_id, query.project)

        def compute() -> KeptAnswer:
            engine = client() if callable(client) else client  # a page opens its connection when needed
            result, previous = run_compared(engine, query, org_id, ids)
            others = None
            if (
                widget["kind"] in ("line", "bar", "area", "stacked_bar")
                and (rest := others_query(query, result)) is not None
            ):
                others = run_explore(engine, rest, org_id, ids, series=bool(rest.interval))
            return KeptAnswer(body, query, result, previous, now, others)

        key = answer_key(org_id, ids, widget["kind"], body)
        kept = compute() if cache is None else cache.answer(key, compute)
        answer.body, answer.query, answer.taken_at = kept.body, kept.query, kept.taken_at
        answer.result, answer.previous, answer.others = kept.result, kept.previous, kept.others
    except (InvalidInput, NotFound, TooManyQueries) as exc:
        answer.error = str(exc)
    return answer


def _answer_sql(
    answer: WidgetAnswer,
    client: Client | Callable[[], Client],
    org_id: int,
    filters: dict[str, str],
    now: datetime,
    cache: WidgetCache | None,
) -> WidgetAnswer:
    """A SQL widget's answer, kept a minute as the other widgets' are: keyed by its statement, its parameters
    (variables, environment, release) and its window's length, so auto-refresh and TV mode ask the engine at
    most once a minute per statement."""
    sql, params = sql_widget_statement(answer.widget, filters, now)
    window = {k: params[k] for k in ("since", "until")}
    body = {"sql": sql, "params": {k: v for k, v in params.items() if k not in window}, **window}

    def compute() -> KeptAnswer:
        engine = client() if callable(client) else client
        panel = answer_panel(engine, str(engine.database or ""), org_id, sql, params)
        rows = [dict(zip(panel.columns, row, strict=True)) for row in panel.rows]
        result = Result(panel.columns, rows, [], panel.rows_read, panel.elapsed_ms, panel.truncated)
        return KeptAnswer(body, None, result, None, now)

    try:
        key = answer_key(org_id, [], "sql", body)
        kept = compute() if cache is None else cache.answer(key, compute)
        answer.result, answer.taken_at = kept.result, kept.taken_at
    except (InvalidInput, TooManyQueries) as exc:  # never kept: the next view asks again
        answer.error = str(exc)
    return answer


def answer_widgets(
    client: Client | Callable[[], Client],
    session: Session,
    org_id: int,
    widgets: list[dict[str, Any]],
    filters: dict[str, str],
    now: datetime | None = None,
    cache: WidgetCache | None = None,
) -> list[WidgetAnswer]:
    """Every widget in reading order, one after the other on the one analyst connection (a page view holds one
    of the organization's Explore slots at a time, so a dashboard never crowds out its analysts); with
    ``cache``, the answers kept from the last minute are reused (:mod:`stacklens.explore.widget_cache`)."""
    now = now or datetime.now(UTC)
    return [answer_widget(client, session, org_id, i, w, filters, now, cache) for i, w in enumerate(widgets)]
