"""The budgets page's chart: a budget's windowed value at each daily evaluation of the last 30 days, each
point coloured by its verdict, with the budget as a line."""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go

from stacklens.performance.budget_eval import FAIL, PASS, BudgetSpec, Point, judge

COLOURS = {PASS: "#1a7f37", FAIL: "#b42318"}
GREY = "#98a2b3"


def _label(value: float, unit: str) -> str:
    number = f"{value:,.0f}" if value >= 100 else f"{value:.3g}"
    return f"{number} {unit}".strip()


def budget_figure(spec: BudgetSpec, points: list[Point], unit: str, title: str) -> dict[str, Any]:
    verdicts = [judge(v, n, spec.value, spec.min_samples) for _, v, n in points]
    # Byte budgets are drawn in KB, as the table shows them.
    scale, unit = (1024.0, "KB") if unit == "bytes" else (1.0, unit)
    points = [(at, None if v is None else v / scale, n) for at, v, n in points]
    threshold = spec.value / scale
    shown = [(p, v) for p, v in zip(points, verdicts, strict=True) if p[1] is not None]
    figure = go.Figure(
        go.Scatter(
            x=[p[0].isoformat() for p, _ in shown],
            y=[p[1] for p, _ in shown],
            mode="lines+markers",
            line={"color": "#0b5cad", "width": 1.5},
            marker={"color": [COLOURS.get(v, GREY) for _, v in shown], "size": 7},
            customdata=[[p[2], v.replace("_", " ")] for p, v in shown],
            hovertemplate="%{x|%Y-%m-%d}<br>%{y:,.4~r} "
            + unit
            + "<br>%{customdata[0]} samples · %{customdata[1]}<extra></extra>",
        )
    )
    figure.add_hline(
        y=threshold,
        line={"color": "#b42318", "dash": "dash", "width": 1},
        annotation_text=f"budget {_label(threshold, unit)}",
        annotation_position="top left",
    )
    values = [float(p[1]) for p, _ in shown if p[1] is not None]
    top = max([threshold, *values]) * 1.15 or 1.0
    figure.update_layout(
        title={"text": title, "font": {"size": 13}, "x": 0, "xanchor": "left"},
        height=230,
        margin={"l": 60, "r": 10, "t": 34, "b": 36},
        yaxis={"title": {"text": unit}, "range": [0, top]},
        xaxis={"type": "date", "range": [points[0][0].isoformat(), points[-1][0].isoformat()]}
        if points
        else {},
        plot_bgcolor="#fff",
        showlegend=False,
    )
    return json.loads(figure.to_json())  # plain JSON types
