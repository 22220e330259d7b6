"""A dashboard's SQL widget as the page and the shared snapshot draw it (docs/explore.md, "SQL panels"): its
columns as the statement names them, and for a line or bar the Plotly figure of
:func:`stacklens.explore.sql_widgets.sql_plot` (what the PDF draws too), with the time the engine took and
what it read in the figure's caption; the SQL editor's chart is the same figure."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from dashboards.dashboard_figures import figure_height
from dashboards.figure_json import figure_json
from stacklens.explore.run import Result
from stacklens.explore.sql_widgets import sql_columns, sql_plot
from stacklens.explore.widget_plot import WidgetPlot
from stacklens.explore.widgets import WidgetAnswer


def took(result: Result) -> str:
    """What an answer cost, in words: ``12.3 ms · 1,204 rows read``."""
    return f"{result.elapsed_ms:,.1f} ms · {result.rows_read:,} rows read"


def sql_figure(
    plot: WidgetPlot, kind: str, result: Result, rows: int, took_caption: bool = True
) -> dict[str, Any]:
    """The figure of a SQL line or bar (``rows``: the widget's height in grid rows); its caption says the time
    it took unless ``took_caption`` is False (the editor says it above the answer)."""
    figure = go.Figure()
    for line in plot.lines:
        common = {
            "x": plot.x,
            "y": line.values,
            "name": line.name,
            "customdata": line.texts,
            "hovertemplate": "%{x}<br>%{customdata}<extra>%{fullData.name}</extra>",
        }
        if kind == "bar":
            figure.add_trace(go.Bar(**common))
        else:
            figure.add_trace(go.Scatter(mode="lines+markers", connectgaps=False, **common))
    out = figure_json(figure)
    caption = " · ".join(part for part in (took(result) if took_caption else "", plot.note) if part)
    out["layout"].update(
        {
            "title": {"text": caption, "font": {"size": 11, "color": "#656d76"}, "x": 0, "xanchor": "left"},
            "height": figure_height(rows),
            "margin": {"l": 56, "r": 8, "t": 24, "b": 56},
            "plot_bgcolor": "#fff",
            "showlegend": len(plot.lines) > 1,
            "legend": {"orientation": "h", "y": -0.3},
            "barmode": "group",
            "yaxis": {"rangemode": "tozero", "title": {"text": plot.axes[0], "font": {"size": 11}}},
            "xaxis": {"type": "date"} if plot.time else {"type": "category", "automargin": True},
        }
    )
    return out


def sql_view(answer: WidgetAnswer, layout: dict[str, int]) -> dict[str, Any]:
    """The widget's view, with the keys :func:`dashboards.dashboard_snapshot.widget_views` gives every widget
    (no Explore or CSV link: the statement is its own question)."""
    plot = sql_plot(answer)
    figure = None
    if plot is not None and not plot.refusal and answer.result is not None:
        figure = sql_figure(plot, answer.widget["kind"], answer.result, layout["h"])
    return {
        "answer": answer,
        "layout": layout,
        "columns": sql_columns(answer.result),
        "figure": figure,
        "explore": "",
        "download": "",
        "source": "SQL",
        "refusal": plot.refusal if plot is not None else "",
        "note": plot.note if plot is not None else "",
        "change": None,
        "changes": [],
        "took": took(answer.result) if answer.result is not None else "",
    }
