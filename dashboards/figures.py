"""Plotly figure builders: Python builds the figure, the page hands its JSON to plotly.js (no inline
script)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import plotly.graph_objects as go

from dashboards.figure_json import figure_json
from stacklens.issues.events import EventBucket, bucket_seconds

BUCKET_NAMES = {300: "5 minutes", 3600: "hour", 86400: "day"}


def events_over_time_figure(rows: list[EventBucket], since: datetime, until: datetime) -> dict[str, Any]:
    """A bar chart of an issue's events per time bucket over [since, until]."""
    figure = go.Figure(
        go.Bar(
            x=[
                row["bucket"].isoformat() if isinstance(row["bucket"], datetime) else str(row["bucket"])
                for row in rows
            ],
            y=[int(row["events"]) for row in rows],
            # Each bar as wide as its bucket (less a gap), whatever its neighbours: plotly would otherwise
            # size bars from the closest pair of points.
            width=[bucket_seconds(since, until) * 1000 * 0.85] * len(rows),
            marker_color="#c2410c",
            name="events",
            hovertemplate="%{x}<br>%{y} events<extra></extra>",
        )
    )
    per = BUCKET_NAMES.get(bucket_seconds(since, until), "bucket")
    figure.update_layout(
        title={"text": f"Events per {per}", "font": {"size": 13}, "x": 0, "xanchor": "left"},
        height=260,
        margin={"l": 56, "r": 10, "t": 34, "b": 46},
        xaxis={
            "type": "date",
            "range": [since.isoformat(), until.isoformat()],
            "title": {"text": "Time (UTC)"},
        },
        yaxis={"title": {"text": f"Events per {per}"}, "rangemode": "tozero"},
        plot_bgcolor="#fff",
    )
    return figure_json(figure)
