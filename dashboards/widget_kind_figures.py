"""The Plotly figures of the widget kinds drawn their own way (:mod:`stacklens.explore.widget_kinds`): a
scatter (one point per group, the first aggregate across, the second up, each on its unit's axis title), a
heat map (the window's buckets across, the metric's percentiles up, a cell's colour its value, a bucket
without rows blank) and a gauge (one value against its budget, the budget marked, the bar green within it
and red beyond). Every value's text is the catalog's, with its unit."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from dashboards.figure_json import figure_json
from stacklens.explore.columns import Column
from stacklens.explore.widget_kinds import GaugeBudget
from stacklens.explore.widget_plot import WidgetPlot

ROW_PX = 150
GOOD, POOR = "#1a7f37", "#cf222e"


def _height(rows: int) -> int:
    return rows * ROW_PX - 50


def _title(text: str) -> dict[str, Any]:
    return {"text": text, "font": {"size": 11, "color": "#656d76"}, "x": 0, "xanchor": "left"}


def scatter_figure(plot: WidgetPlot, rows: int, samples: int) -> dict[str, Any]:
    across, up = plot.lines[0], plot.lines[1]
    texts = [f"{name}<br>{a} · {b}" for name, a, b in zip(plot.x, across.texts, up.texts, strict=True)]
    figure = go.Figure(
        go.Scatter(
            x=across.values,
            y=up.values,
            mode="markers+text",
            name="groups",
            text=plot.x,
            textposition="top center",
            cliponaxis=False,  # a point's name near the top stays readable
            textfont={"size": 10, "color": "#656d76"},
            customdata=texts,
            hovertemplate="%{customdata}<extra></extra>",
            marker={"size": 10, "color": "#636efa", "opacity": 0.8},
        )
    )
    out = figure_json(figure)
    out["layout"].update(
        {
            "title": _title(
                f"{samples:,} samples · {len(plot.x)} group{'' if len(plot.x) == 1 else 's'}"
                + (f" · {plot.note}" if plot.note else "")
            ),
            "height": _height(rows),
            "margin": {"l": 56, "r": 8, "t": 24, "b": 48},
            "plot_bgcolor": "#fff",
            "showlegend": False,
            "xaxis": {"rangemode": "tozero", "title": {"text": across.name, "font": {"size": 11}}},
            "yaxis": {"rangemode": "tozero", "title": {"text": up.name, "font": {"size": 11}}},
        }
    )
    return out


def heat_unit(plot: WidgetPlot) -> str:
    """The heat map's colour scale title: its metric and unit, without the percentile (``LCP (ms)``)."""
    first = plot.lines[0].name if plot.lines else ""
    return first.replace(" p50 ", " ").replace(" p50", "")


def heatmap_figure(plot: WidgetPlot, rows: int, samples: int, window: tuple[str, str]) -> dict[str, Any]:
    levels = [line.name for line in plot.lines]
    figure = go.Figure(
        go.Heatmap(
            x=plot.x,
            y=levels,
            z=[line.values for line in plot.lines],
            customdata=[line.texts for line in plot.lines],
            hovertemplate="%{x}<br>%{y}: %{customdata}<extra></extra>",
            colorscale="YlOrRd",
            hoverongaps=False,
            colorbar={"title": {"text": heat_unit(plot), "side": "right"}, "thickness": 10},
        )
    )
    out = figure_json(figure)
    out["layout"].update(
        {
            "title": _title(f"{samples:,} samples · the distribution by percentile, per bucket"),
            "height": _height(rows),
            "margin": {"l": 96, "r": 8, "t": 24, "b": 40},
            "plot_bgcolor": "#fff",
            "xaxis": {"type": "date", "range": list(window)},
            "yaxis": {"type": "category"},
        }
    )
    return out


def _unit(header: str) -> str:
    """The unit of a column's header (``LCP p75 (ms)`` → `` ms``) for a gauge's ticks."""
    if header.endswith(")") and "(" in header:
        return " " + header.rsplit("(", 1)[1][:-1]
    return ""


def gauge_figure(
    value: float, column: Column, budget: GaugeBudget, rows: int, samples: int
) -> dict[str, Any]:
    within = value <= budget.value if budget.better == "lower" else value >= budget.value
    top = max(value, budget.value) * 1.5 or 1.0
    figure = go.Figure(
        go.Indicator(
            mode="gauge",
            value=value,
            gauge={
                "axis": {"range": [0, top], "ticksuffix": _unit(column.header)},
                "bar": {"color": GOOD if within else POOR},
                "threshold": {
                    "line": {"color": "#24292f", "width": 3},
                    "thickness": 0.9,
                    "value": budget.value,
                },
            },
        )
    )
    out = figure_json(figure)
    out["layout"].update(
        {
            "height": _height(rows) - 40,
            "margin": {"l": 48, "r": 48, "t": 16, "b": 8},  # room for the end ticks and their unit
            "annotations": [
                {
                    "text": f"<b>{column.format(value)}</b>",
                    "x": 0.5,
                    "y": 0.12,
                    "xref": "paper",
                    "yref": "paper",
                    "showarrow": False,
                    "font": {"size": 22},
                }
            ],
        }
    )
    return out
