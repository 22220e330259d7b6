"""Explore's time series as Plotly figures: one figure per aggregate, one line per group, only the buckets that
hold rows (a gap stays a gap: no line is drawn through a missing bucket, and it is never a 0)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import plotly.graph_objects as go

MAX_LINES = 10  # a legend of more lines is unreadable; the table holds every group


def _name(group: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in group.items()) or "all"


def _with_gaps(times: list[str], values: list[Any], step: float) -> tuple[list[Any], list[Any]]:
    """The points with a None between two that are more than one bucket apart, so the line breaks there."""
    xs: list[Any] = []
    ys: list[Any] = []
    previous: datetime | None = None
    for t, v in zip(times, values, strict=True):
        current = datetime.fromisoformat(t.replace("Z", "+00:00"))
        if previous is not None and (current - previous).total_seconds() > step * 1.5:
            xs.append(None)
            ys.append(None)
        xs.append(t)
        ys.append(v)
        previous = current
    return xs, ys


def explore_figures(
    series: list[dict[str, Any]], columns: list[str], step_seconds: float
) -> dict[str, dict[str, Any]]:
    """``{id: figure}`` for each aggregate column of the series, with its sample count in the title."""
    figures: dict[str, dict[str, Any]] = {}
    shown = series[:MAX_LINES]
    samples = sum(sum(s["samples"]) for s in shown)
    for index, column in enumerate(columns):
        figure = go.Figure()
        for entry in shown:
            figure.add_trace(
                go.Scatter(
                    x=_with_gaps(entry["t"], entry["values"][column], step_seconds)[0],
                    y=_with_gaps(entry["t"], entry["values"][column], step_seconds)[1],
                    customdata=_with_gaps(entry["t"], entry["samples"], step_seconds)[1],
                    mode="lines+markers",
                    connectgaps=False,
                    name=_name(entry["group"]),
                    hovertemplate="%{x}<br>%{y}<br>%{customdata} samples<extra>%{fullData.name}</extra>",
                )
            )
        figure.update_layout(
            title={
                "text": f"{column} · {samples:,} samples",
                "font": {"size": 13},
                "x": 0,
                "xanchor": "left",
            },
            height=300,
            margin={"l": 56, "r": 10, "t": 34, "b": 46},
            xaxis={"type": "date"},
            yaxis={"rangemode": "tozero"},
            legend={"orientation": "h", "y": -0.2},
            plot_bgcolor="#fff",
        )
        figures[f"explore-{index}"] = json.loads(figure.to_json())
    return figures
