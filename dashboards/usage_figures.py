"""The usage page's chart: items per hour, stacked by outcome (Plotly JSON, drawn by app.js)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

import plotly.graph_objects as go

from dashboards.figure_json import figure_json
from stacklens.outcomes.reads import OutcomeRow

# Outcome → colour, the kept items first (the stacking order, bottom up).
OUTCOME_COLOURS = {
    "accepted": "#16a34a",
    "filtered": "#64748b",
    "rate_limited": "#d97706",
    "invalid": "#dc2626",
    "too_large": "#9333ea",
    "dropped": "#7f1d1d",
}
OUTCOME_LABELS = {
    "accepted": "accepted",
    "filtered": "filtered",
    "rate_limited": "rate limited",
    "invalid": "invalid",
    "too_large": "too large",
    "dropped": "dropped by the SDK",
}
HOUR_MS = 3600 * 1000


def outcomes_figure(rows: list[OutcomeRow], since: datetime, until: datetime) -> dict[str, Any]:
    """Stacked bars per hour and outcome. An hour without items has no bar (a gap, not a zero)."""
    figure = go.Figure()
    highest: Counter[datetime] = Counter()
    for outcome, colour in OUTCOME_COLOURS.items():
        per_hour: Counter[datetime] = Counter()
        for row in rows:
            if row.outcome == outcome:
                per_hour[row.hour] += row.quantity
        if not per_hour:
            continue
        highest.update(per_hour)
        hours = sorted(per_hour)
        label = OUTCOME_LABELS[outcome]
        figure.add_trace(
            go.Bar(
                x=[hour.isoformat() for hour in hours],
                y=[per_hour[hour] for hour in hours],
                width=[HOUR_MS * 0.85] * len(hours),
                offset=0,
                name=label,
                marker_color=colour,
                hovertemplate=f"%{{x}}<br>%{{y:,}} items {label}<extra></extra>",
            )
        )
    small = max(highest.values(), default=0) <= 5
    figure.update_layout(
        barmode="stack",
        title={"text": "Items per hour, by outcome", "font": {"size": 13}, "x": 0, "xanchor": "left"},
        height=300,
        margin={"l": 56, "r": 10, "t": 34, "b": 90},
        xaxis={
            "type": "date",
            "range": [since.isoformat(), until.isoformat()],
            "title": {"text": "Time (UTC)"},
        },
        yaxis={
            "title": {"text": "Items per hour"},
            "rangemode": "tozero",
            **({"dtick": 1, "tick0": 0} if small else {"tickformat": ",d"}),
        },
        legend={"orientation": "h", "y": -0.32, "yanchor": "top"},  # below the axis title, not over it
        plot_bgcolor="#fff",
    )
    return figure_json(figure)
