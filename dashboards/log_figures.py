"""The logs view's chart: records per time bucket, stacked by severity (Plotly JSON, drawn by app.js)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import plotly.graph_objects as go

from dashboards.figure_json import figure_json
from stacklens.logs.search import Volume

# Severity → colour, quietest first (the stacking order, bottom up).
SEVERITY_COLOURS = {
    "trace": "#94a3b8",
    "debug": "#64748b",
    "info": "#2563eb",
    "warn": "#d97706",
    "error": "#dc2626",
    "fatal": "#7f1d1d",
    "": "#a3a3a3",
}
_STEP_NAMES = {
    60: "minute",
    300: "5 minutes",
    900: "15 minutes",
    1800: "30 minutes",
    3600: "hour",
    10800: "3 hours",
    21600: "6 hours",
    43200: "12 hours",
    86400: "day",
}


def volume_figure(volume: Volume, since: datetime, until: datetime) -> dict[str, Any]:
    """Stacked bars per bucket and severity. A bucket without records has no bar (a gap, not a zero)."""
    per = _STEP_NAMES.get(volume.step_seconds, f"{volume.step_seconds} s")
    figure = go.Figure()
    for severity, colour in SEVERITY_COLOURS.items():
        bars = [bar for bar in volume.bars if bar.severity == severity]
        if not bars:
            continue
        figure.add_trace(
            go.Bar(
                x=[bar.bucket.isoformat() for bar in bars],
                y=[bar.records for bar in bars],
                width=[volume.step_seconds * 1000 * 0.85] * len(bars),
                offset=0,
                name=severity or "unspecified",
                marker_color=colour,
                hovertemplate=f"%{{x}}<br>%{{y}} {severity or 'unspecified'} records<extra></extra>",
            )
        )
    figure.update_layout(
        barmode="stack",
        title={
            "text": f"Log records per {per}, by severity",
            "font": {"size": 13},
            "x": 0,
            "xanchor": "left",
        },
        height=240,
        margin={"l": 56, "r": 10, "t": 34, "b": 40},
        xaxis={
            "type": "date",
            "range": [since.isoformat(), until.isoformat()],
            "title": {"text": "Time (UTC)"},
        },
        yaxis={"title": {"text": f"Records per {per}"}, "rangemode": "tozero", **_whole_ticks(volume)},
        legend={"orientation": "h", "y": -0.25},
        plot_bgcolor="#fff",
    )
    return figure_json(figure)


def _whole_ticks(volume: Volume) -> dict[str, Any]:
    """Records are whole: a low chart ticks every record rather than at 0.5."""
    totals: dict[datetime, int] = {}
    for bar in volume.bars:
        totals[bar.bucket] = totals.get(bar.bucket, 0) + bar.records
    return {"dtick": 1, "tick0": 0} if max(totals.values(), default=0) <= 5 else {"tickformat": ",d"}
