"""A dashboard widget's Plotly figure, drawn from :func:`stacklens.explore.widget_plot.widget_plot` (what the
shared snapshot keeps and the PDF draws too): a line per aggregate and group over the whole window (a gap a
gap), or bars — over time without a group-by, one bar per group with one; a second unit on a right-hand y
axis. Numbers and tables are HTML; a figure's height follows the widget's rows (``layout.h``)."""

from __future__ import annotations

from typing import Any

from dashboards.figure_json import plain_figure, plain_numbers, plain_trace
from dashboards.widget_kind_figures import heatmap_figure, scatter_figure
from stacklens.explore.columns import Column
from stacklens.explore.widget_plot import PlotLine, WidgetPlot
from stacklens.explore.widgets import WidgetAnswer

ROW_PX = 150  # one grid row; the card's title and links take the rest
HOVER = "%{x}<br>%{customdata}<extra>%{fullData.name}</extra>"


def figure_height(rows: int) -> int:
    return rows * ROW_PX - 50


def _overlay(plot: WidgetPlot) -> list[dict[str, Any]]:
    """The compared window's lines of a line widget with ``compare`` (:attr:`WidgetPlot.previous`: dotted,
    shifted onto the window, each on its line's axis), as the PDF draws them."""
    return [
        plain_trace(
            "scatter",
            {
                "x": list(plot.x),
                "y": plain_numbers(line.values),
                "name": line.name,
                "customdata": line.texts,
                "yaxis": "y2" if line.axis == 2 else "y",
                "mode": "lines",
                "connectgaps": False,
                "line": {"dash": "dot", "width": 1.5},
                "opacity": 0.7,
                "hovertemplate": HOVER,
            },
        )
        for line in plot.previous
    ]


def _trace(kind: str, line: PlotLine, x: list[str]) -> dict[str, Any]:
    """One line's trace as the widget's kind draws it: bars, an area filled to zero, or a line with its
    points."""
    common = {
        "x": list(x),  # each trace its own list, as plotly writes them: a change to one changes no other
        "y": plain_numbers(line.values),
        "name": line.name,
        "customdata": line.texts,
        "yaxis": "y2" if line.axis == 2 else "y",
        "hovertemplate": HOVER,
    }
    if kind in ("bar", "stacked_bar"):
        return plain_trace("bar", common)
    if kind == "area":  # filled to zero, never stacked: a p75 does not add up
        return plain_trace("scatter", {"mode": "lines", "connectgaps": False, "fill": "tozeroy", **common})
    return plain_trace("scatter", {"mode": "lines+markers", "connectgaps": False, **common})


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
    out = plain_figure([_trace(kind, line, plot.x) for line in plot.lines])
    if kind == "line":
        out["data"] += _overlay(plot)
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
