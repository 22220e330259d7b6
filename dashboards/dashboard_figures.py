"""A dashboard widget's Plotly figure: a line (Explore's own figure of the first aggregate, one line per
group, a gap a gap), or bars — over time without a group-by, one bar per group with one. Numbers and tables
are HTML; a figure's height follows the widget's rows (``layout.h``)."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from dashboards.explore_figures import explore_figures
from dashboards.figure_json import figure_json
from stacklens.explore.columns import AGGREGATE, Column
from stacklens.explore.query import INTERVALS
from stacklens.explore.widgets import WidgetAnswer

ROW_PX = 150  # one grid row; the card's title and links take the rest


def figure_height(rows: int) -> int:
    return rows * ROW_PX - 50


def widget_figure(answer: WidgetAnswer, columns: list[Column], rows: int) -> dict[str, Any] | None:
    """The figure of a line or bar widget (None for a number or a table)."""
    kind = answer.widget["kind"]
    query, result = answer.query, answer.result
    if kind not in ("line", "bar") or query is None or result is None:
        return None
    aggregate = next(c for c in columns if c.kind == AGGREGATE)
    window = (query.window.since, query.window.until)
    if query.interval:
        step = INTERVALS[query.interval].total_seconds()
        overlay = None
        if answer.previous is not None and query.compare is not None and kind == "line":
            overlay = (answer.previous.series, query.window.since - query.compare.since)
        label = result.compared_with if query.compare is not None and query.compare.previous_release else ""
        figure = explore_figures(
            result.series, [aggregate], step, window, overlay, label or "previous period"
        )["explore-0"]
        if kind == "bar":
            for trace in figure["data"]:
                # Explore's line breaks a gap with a None point; a bar chart shows a gap as no bar.
                kept = [i for i, x in enumerate(trace["x"]) if x is not None]
                for key in ("x", "y", "customdata"):
                    trace[key] = [trace[key][i] for i in kept]
                trace["type"] = "bar"
                trace.pop("mode", None)
                trace.pop("connectgaps", None)
            figure["layout"]["barmode"] = "group"
    else:
        names = [", ".join(str(row[g]) for g in query.group_by) or "all" for row in result.rows]
        values = [row.get(aggregate.key) for row in result.rows]
        bars = go.Bar(
            x=names,
            y=values,
            customdata=[aggregate.format(v) for v in values],
            marker_color="#2563eb",
            hovertemplate="%{x}<br>%{customdata}<extra></extra>",
        )
        figure = figure_json(go.Figure(bars))
        figure["layout"].update(
            {
                "yaxis": {"rangemode": "tozero", "title": {"text": aggregate.header, "font": {"size": 11}}},
                "xaxis": {"type": "category", "automargin": True},
                "plot_bgcolor": "#fff",
            }
        )
    layout = figure["layout"]
    # The card's heading names the widget; the figure keeps its sample count as a small subtitle.
    title = layout.get("title", {}).get("text", "")
    samples = title.split(" · ", 1)[1] if " · " in title else ""
    layout["title"] = {"text": samples, "font": {"size": 11, "color": "#656d76"}, "x": 0, "xanchor": "left"}
    layout["height"] = figure_height(rows)
    layout["margin"] = {"l": 56, "r": 8, "t": 24 if samples else 8, "b": 56}
    if "legend" in layout:
        layout["legend"]["y"] = -0.3
    layout["showlegend"] = len(figure["data"]) > 1
    return figure
