"""A dashboard widget's Plotly figure, drawn from :func:`stacklens.explore.widget_plot.widget_plot` (what the
shared snapshot keeps and the PDF draws too): a line per aggregate and group over the whole window (a gap a
gap), or bars — over time without a group-by, one bar per group with one; a second unit on a right-hand y
axis. Numbers and tables are HTML; a figure's height follows the widget's rows (``layout.h``)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from dashboards.explore_figures import explore_figures
from dashboards.figure_json import figure_json
from dashboards.widget_kind_figures import heatmap_figure, scatter_figure
from stacklens.explore.columns import AGGREGATE, Column
from stacklens.explore.query import INTERVALS
from stacklens.explore.widget_plot import WidgetPlot
from stacklens.explore.widgets import WidgetAnswer

ROW_PX = 150  # one grid row; the card's title and links take the rest


def figure_height(rows: int) -> int:
    return rows * ROW_PX - 50


def _overlay(answer: WidgetAnswer, columns: list[Column], axis_of: dict[str, int]) -> list[dict[str, Any]]:
    """The compared window's lines of a line widget with ``compare`` (dotted, shifted onto the window), as
    Explore draws them, each on its aggregate's axis."""
    query, result = answer.query, answer.result
    if answer.previous is None or query is None or result is None or query.compare is None:
        return []
    aggregates = [c for c in columns if c.kind == AGGREGATE]
    label = result.compared_with if query.compare.previous_release else ""
    figures = explore_figures(
        result.series,
        aggregates,
        INTERVALS[query.interval].total_seconds(),
        (query.window.since, query.window.until),
        (answer.previous.series, query.window.since - query.compare.since),
        label or "previous period",
    )
    out = []
    for column, figure in zip(aggregates, figures.values(), strict=True):
        for trace in figure["data"]:
            if (trace.get("line") or {}).get("dash") == "dot":
                trace["yaxis"] = "y2" if axis_of.get(column.key) == 2 else "y"
                out.append(trace)
    return out


def widget_figure(
    answer: WidgetAnswer, columns: list[Column], rows: int, plot: WidgetPlot | None
) -> dict[str, Any] | None:
    """The figure of a line or bar widget (None for a number, a table or a plot refused)."""
    kind = answer.widget["kind"]
    query, result = answer.query, answer.result
    if plot is None or plot.refusal or query is None or result is None:
        return None
    samples = sum(int(r.get("samples") or 0) for r in result.rows)
    if kind == "scatter":
        return scatter_figure(plot, rows, samples)
    if kind == "heatmap":
        ends = [t.isoformat().replace("+00:00", "Z") for t in (query.window.since, query.window.until)]
        return heatmap_figure(plot, rows, samples, (ends[0], ends[1]))
    figure = go.Figure()
    for line in plot.lines:
        common = {
            "x": plot.x,
            "y": line.values,
            "name": line.name,
            "customdata": line.texts,
            "yaxis": "y2" if line.axis == 2 else "y",
            "hovertemplate": "%{x}<br>%{customdata}<extra>%{fullData.name}</extra>",
        }
        if kind in ("bar", "stacked_bar"):
            figure.add_trace(go.Bar(**common))
        elif kind == "area":  # filled to zero, never stacked: a p75 does not add up
            figure.add_trace(go.Scatter(mode="lines", connectgaps=False, fill="tozeroy", **common))
        else:
            figure.add_trace(go.Scatter(mode="lines+markers", connectgaps=False, **common))
    out = figure_json(figure)
    axis_of = {line.column: line.axis for line in plot.lines}
    if kind == "line":
        out["data"] += _overlay(answer, columns, axis_of)
    layout = out["layout"]
    layout.update(
        {
            "title": {
                "text": f"{samples:,} samples" + (f" · {plot.note}" if plot.note else ""),
                "font": {"size": 11, "color": "#656d76"},
                "x": 0,
                "xanchor": "left",
            },
            "height": figure_height(rows),
            "margin": {"l": 56, "r": 56 if len(plot.axes) > 1 else 8, "t": 24, "b": 56},
            "plot_bgcolor": "#fff",
            "showlegend": len(out["data"]) > 1,
            "legend": {"orientation": "h", "y": -0.3},
            "barmode": "stack" if kind == "stacked_bar" else "group",
            "yaxis": {"rangemode": "tozero", "title": {"text": plot.axes[0], "font": {"size": 11}}},
        }
    )
    if plot.time:
        window = (query.window.since, query.window.until)
        layout["xaxis"] = {"type": "date", "range": [t.isoformat().replace("+00:00", "Z") for t in window]}
    else:
        layout["xaxis"] = {"type": "category", "automargin": True}
    if len(plot.axes) > 1:
        layout["yaxis2"] = {
            "rangemode": "tozero",
            "overlaying": "y",
            "side": "right",
            "showgrid": False,
            "title": {"text": plot.axes[1], "font": {"size": 11}},
        }
    return out
