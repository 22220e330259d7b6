"""What a line or bar widget draws, decided once for the dashboard's Plotly figure, the shared snapshot (which
keeps that figure) and the scheduled PDF (docs/explore.md, "What a widget draws"):

- every aggregate of the widget, not only its first: one line (or bar set) per aggregate and group;
- aggregates in two units on two y axes (left and right); more than two units cannot share a chart, and the
  widget says so (:attr:`WidgetPlot.refusal`) instead of drawing some of them;
- the whole window: a time chart's x holds every bucket from the window's start to its end, a bucket without
  rows a gap (None), never a 0, so "the last 30d" spans 30 days even when the data starts a week ago;
- every series the answer holds, and when the answer was cut at the widget's line limit, the others named in
  :attr:`WidgetPlot.note` (the chart draws the top N by the query's order).

The module is pure data (no Plotly, no PDF): each face draws the same :class:`WidgetPlot`, so a test can
compare them line by line."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.explore.answer import ExploreRow
from stacklens.explore.columns import AGGREGATE, Column, columns_of
from stacklens.explore.query import INTERVALS, Aggregate, Query
from stacklens.explore.run import Result
from stacklens.explore.widget_kinds import PLOTTED, refusal
from stacklens.explore.widget_others import OTHERS
from stacklens.explore.widgets import WidgetAnswer
from stacklens.metrics.catalog import get

MAX_AXES = 2
MAX_LINES = 10  # lines (or bar sets) of one aggregate: the widget's own limit (explore.widgets)


@dataclass(frozen=True)
class PlotLine:
    name: str  # the legend's name: the group ("release=1.4.0"), with the aggregate when there are several
    column: str  # the answer's column (lcp_p75_ms)
    axis: int  # 1: the left y axis, 2: the right one
    values: list[float | None]  # one per x; None where the bucket (or group) has no value
    texts: list[str]  # the values as the catalog writes them


@dataclass
class WidgetPlot:
    time: bool  # x is the window's buckets (ISO 8601 starts), else group names
    x: list[str]
    lines: list[PlotLine] = field(default_factory=list)
    axes: list[str] = field(default_factory=list)  # each axis's title (its columns' headers), left first
    refusal: str = ""  # why the widget draws nothing (more units than axes)
    note: str = ""  # what the chart leaves out, named (the groups beyond the top N)
    # A line widget with ``compare``: each drawn line's compared window, shifted onto this window's buckets
    # (drawn dotted), named "<line> (previous period)" or after the release compared with.
    previous: list[PlotLine] = field(default_factory=list)


def aggregate_unit(aggregate: Aggregate) -> str:
    """The unit an aggregate's values are in (what decides whether two share an axis)."""
    if aggregate.fn in ("count", "unique_users"):
        return "count"
    if aggregate.fn == "rate_per_1k":
        return "rate_per_1k"
    return get(aggregate.metric).unit.key


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _parse(value: str) -> datetime:
    return _aware(datetime.fromisoformat(value.replace("Z", "+00:00")))


def window_buckets(since: datetime, until: datetime, step: timedelta, anchor: str | None) -> list[str]:
    """Every bucket start of ``[since, until)``, aligned on ``anchor`` (a bucket the engine answered; the
    engine's buckets of a week start on Mondays, of a day at midnight)."""
    since, until = _aware(since), _aware(until)
    start = _parse(anchor) if anchor else since
    while start > since:
        start -= step
    while start + step <= since:
        start += step
    out = []
    while start < until:
        out.append(_iso(start))
        start += step
    return out


def _group_name(group: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in group.items()) or "all"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def widget_plot(answer: WidgetAnswer) -> WidgetPlot | None:
    """What a line, bar, area, stacked bar, scatter or heat map widget draws (None for a number, a gauge, a
    table or an unanswered widget)."""
    query, result = answer.query, answer.result
    kind = answer.widget["kind"]
    if kind not in PLOTTED or query is None or result is None:
        return None
    aggregates = [c for c in columns_of(query) if c.kind == AGGREGATE and c.aggregate is not None]
    units: list[str] = []
    for column in aggregates:
        assert column.aggregate is not None
        if (unit := aggregate_unit(column.aggregate)) not in units:
            units.append(unit)
    aggregates_of = [c.aggregate for c in aggregates if c.aggregate is not None]
    if refused := refusal(kind, aggregates_of, len(units)):
        return WidgetPlot(bool(query.interval), [], refusal=refused)
    if len(units) > MAX_AXES:
        headers = ", ".join(c.header for c in aggregates)
        return WidgetPlot(
            bool(query.interval),
            [],
            refusal=f"Not drawn: {headers} are in {len(units)} units, and a chart has two y axes. "
            "Split the widget, one per unit (or show it as a table).",
        )
    axis_of = {
        c.key: units.index(aggregate_unit(c.aggregate)) + 1 for c in aggregates if c.aggregate is not None
    }
    axes = [" / ".join(c.header for c in aggregates if axis_of[c.key] == i + 1) for i in range(len(units))]
    several = len(aggregates) > 1
    if query.interval:
        plot = _over_time(query, result, aggregates, axis_of, several)
    else:
        plot = _per_group(query, result.rows, aggregates, axis_of)
    plot.axes = axes
    if kind == "line" and query.interval and query.compare is not None and answer.previous is not None:
        label = (result.compared_with if query.compare.previous_release else "") or "previous period"
        shift = query.window.since - query.compare.since
        plot.previous = _previous(plot, query, answer.previous, aggregates, shift, label)
    if result.truncated and query.group_by:
        groups = " and ".join(query.group_by)
        order = ("-" if query.descending else "") + (query.order_by or "the first column")
        top = f"The top {len(result.rows)} {groups} values by {order}"
        if answer.others is not None and answer.others.rows:
            _add_others(plot, query, answer.others, aggregates, axis_of, several)
            plot.note = f"{top}; the rest drawn as one, named {OTHERS!r}."
        else:
            plot.note = f"{top}; the others are not drawn (every row in Explore or the CSV)."
    return plot


def _add_others(
    plot: WidgetPlot,
    query: Query,
    others: Result,
    aggregates: list[Column],
    axis_of: dict[str, int],
    several: bool,
) -> None:
    """The rest of a cut answer as one more line per aggregate (over time), or one more bar (per group)."""
    if not plot.time:
        plot.x.append(OTHERS)
        for line in plot.lines:
            column = next(c for c in aggregates if c.key == line.column)
            value = _number(others.rows[0].get(column.key))
            line.values.append(value)
            line.texts.append(column.format(value))
        return
    entry = others.series[0] if others.series else None
    index = {_parse(t): i for i, t in enumerate(plot.x)}
    for column in aggregates:
        values: list[float | None] = [None] * len(plot.x)
        if entry is not None:
            for t, value in zip(entry["t"], entry["values"][column.key], strict=True):
                if (at := _parse(t)) in index:
                    values[index[at]] = _number(value)
        name = f"{column.header} · {OTHERS}" if several else OTHERS
        texts = [column.format(v) for v in values]
        plot.lines.append(PlotLine(name, column.key, axis_of[column.key], values, texts))


def _previous(
    plot: WidgetPlot, query: Query, previous: Result, aggregates: list[Column], shift: timedelta, label: str
) -> list[PlotLine]:
    """The compared window's line of each drawn line (same group, same aggregate), its buckets moved by
    ``shift`` into the window's (the bucket holding the moved start: a release's window need not start on a
    bucket's edge); a value's text says the bucket it was taken in."""
    step = INTERVALS[query.interval]
    first = _parse(plot.x[0]) if plot.x else query.window.since
    by_group = {_group_name(e["group"]): e for e in previous.series}
    out = []
    for line in plot.lines:
        column = next(c for c in aggregates if c.key == line.column)
        group = line.name.split(" · ", 1)[1] if len(aggregates) > 1 and query.group_by else line.name
        entry = by_group.get(group if query.group_by else "all")
        if entry is None:
            continue
        values: list[float | None] = [None] * len(plot.x)
        texts = [column.format(None)] * len(plot.x)
        for t, value in zip(entry["t"], entry["values"][column.key], strict=True):
            i = (_parse(t) + shift - first) // step
            if 0 <= i < len(plot.x) and _number(value) is not None:
                values[i] = _number(value)
                texts[i] = f"{column.format(value)} (at {t[:16].replace('T', ' ')})"
        out.append(PlotLine(f"{line.name} ({label})", column.key, line.axis, values, texts))
    return out


def _over_time(
    query: Query, result: Result, aggregates: list[Column], axis_of: dict[str, int], several: bool
) -> WidgetPlot:
    series = result.series[:MAX_LINES]
    anchor = next((s["t"][0] for s in series if s["t"]), None)
    x = window_buckets(query.window.since, query.window.until, INTERVALS[query.interval], anchor)
    # By time, not text: the engine writes a bucket with or without its "Z".
    index = {_parse(t): i for i, t in enumerate(x)}
    plot = WidgetPlot(True, x)
    for column in aggregates:
        for entry in series:
            values: list[float | None] = [None] * len(x)
            for t, value in zip(entry["t"], entry["values"][column.key], strict=True):
                if (at := _parse(t)) in index:
                    values[index[at]] = _number(value)
            group = _group_name(entry["group"])
            # A line is named by its group, and by its aggregate too when there are several (never "all").
            name = f"{column.header} · {group}" if several and query.group_by else group
            if not query.group_by:
                name = column.header
            texts = [column.format(v) for v in values]
            plot.lines.append(PlotLine(name, column.key, axis_of[column.key], values, texts))
    return plot


def _per_group(
    query: Query, rows: list[ExploreRow], aggregates: list[Column], axis_of: dict[str, int]
) -> WidgetPlot:
    x = [", ".join(str(row[g]) for g in query.group_by) or "all" for row in rows]
    plot = WidgetPlot(False, x)
    for column in aggregates:
        values = [_number(row.get(column.key)) for row in rows]
        texts = [column.format(v) for v in values]
        plot.lines.append(PlotLine(column.header, column.key, axis_of[column.key], values, texts))
    return plot
