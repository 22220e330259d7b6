"""Plotly figures of the INP page (docs/performance.md, "INP causes"): the p75 of each INP part per page as
stacked bars, and the scripts' time by part. A page or part without samples keeps its place with no bar, never
a bar of 0 ms."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from dashboards.figure_json import figure_json
from stacklens.performance.inp.reads import PART_LABELS, PARTS, PartRow, ScriptRow

PART_COLOURS = {"input_delay": "#c2410c", "processing": "#0b5cad", "presentation": "#7b3fb5"}


def _layout(figure: go.Figure, title: str, height: int) -> dict[str, Any]:
    figure.update_layout(
        barmode="stack",
        margin={"l": 10, "r": 10, "t": 34, "b": 40},
        title={"text": title, "font": {"size": 13}, "x": 0, "xanchor": "left"},
        height=height,
        xaxis={"ticksuffix": " ms", "rangemode": "tozero"},
        yaxis={"automargin": True, "autorange": "reversed"},
        plot_bgcolor="#fff",
        showlegend=True,
        legend={"orientation": "h", "y": -0.25},
    )
    return figure_json(figure)


def parts_figure(rows: Sequence[PartRow]) -> dict[str, Any]:
    """Per page (its row without a target), the p75 of input delay, processing and presentation delay,
    stacked; the hover gives the interactions with attribution behind them."""
    pages = [r for r in rows if not r.target]
    labels = [r.page or "(no page)" for r in pages]
    figure = go.Figure()
    for part in PARTS:
        figure.add_trace(
            go.Bar(
                name=PART_LABELS[part],
                y=labels,
                x=[getattr(r, f"{part}_p75") for r in pages],
                orientation="h",
                marker_color=PART_COLOURS[part],
                customdata=[r.attributed for r in pages],
                hovertemplate="%{y}<br>"
                + PART_LABELS[part]
                + " p75 %{x:.4~r} ms<br>%{customdata} interactions"
                "<extra></extra>",
            )
        )
    return _layout(figure, "INP parts per page (p75 of each part)", 120 + 32 * len(labels))


def scripts_figure(scripts: Sequence[ScriptRow], top: int = 8) -> dict[str, Any]:
    """The scripts with the most time, their time split by the part of the interaction they ran in."""
    chosen = list(scripts[:top])
    labels = [
        f"{'3rd' if s.third_party else '1st'} · {s.url.rsplit('/', 1)[-1] or s.host or '(browser)'}"
        + (f" {s.function}" if s.function else "")
        for s in chosen
    ]
    figure = go.Figure()
    for part in PARTS:
        figure.add_trace(
            go.Bar(
                name=PART_LABELS[part],
                y=labels,
                x=[getattr(s, f"{part}_ms") for s in chosen],
                orientation="h",
                marker_color=PART_COLOURS[part],
                hovertemplate="%{y}<br>" + PART_LABELS[part] + " %{x:,.0f} ms<extra></extra>",
            )
        )
    return _layout(figure, "Script time in slow interactions, by part", 120 + 32 * len(labels))
