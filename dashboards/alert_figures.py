"""The rule page's 30-day preview chart: the measured value, the threshold (and resolve threshold) and the
periods the rule would have been firing, shaded."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import plotly.graph_objects as go

from stacklens.alerts.messages import what
from stacklens.alerts.preview import Preview
from stacklens.control.alert_models import AlertRule


def preview_figure(rule: AlertRule, replay: Preview) -> dict[str, Any]:
    label, unit = what(rule)
    figure = go.Figure()
    if replay.daily and not replay.points:
        figure.add_bar(
            x=[d for d, _ in replay.daily],
            y=[n for _, n in replay.daily],
            marker_color="#c2410c",
            name="notifications",
            hovertemplate="%{x}<br>%{y} notifications<extra></extra>",
        )
        title, y_title = "Notifications per day over the past 30 days", "notifications"
    else:
        figure.add_scatter(
            x=[p[0].isoformat() for p in replay.points],
            y=[p[1] for p in replay.points],
            mode="lines",
            line={"color": "#0b5cad", "width": 1.5},
            name=label,
            connectgaps=False,
            hovertemplate="%{x}<br>%{y:,.1f} " + unit + "<extra></extra>",
        )
        if rule.threshold is not None:
            figure.add_hline(
                y=rule.threshold,
                line={"color": "#b42318", "dash": "solid", "width": 1},
                annotation_text=f"threshold {rule.threshold:g}",
                annotation_position="top left",
            )
        if rule.resolve_threshold is not None:
            figure.add_hline(
                y=rule.resolve_threshold,
                line={"color": "#1a7f37", "dash": "dot", "width": 1},
                annotation_text=f"resolve {rule.resolve_threshold:g}",
                annotation_position="bottom left",
            )
        end = replay.points[-1][0] if replay.points else datetime.now(UTC)
        for start, stop, _ in replay.periods:
            figure.add_vrect(
                x0=start.isoformat(),
                x1=(stop or end).isoformat(),
                fillcolor="#fca5a5",
                opacity=0.35,
                line_width=0,
            )
        title, y_title = (
            f"{label}: would have fired {len(replay.periods)} time(s) in 30 days",
            unit or "value",
        )
    figure.update_layout(
        title={"text": title, "font": {"size": 13}, "x": 0, "xanchor": "left"},
        height=300,
        margin={"l": 60, "r": 10, "t": 34, "b": 46},
        showlegend=False,
        plot_bgcolor="#fff",
        xaxis={"type": "date", "title": {"text": "Time (UTC)"}},
        yaxis={"title": {"text": y_title}, "rangemode": "tozero"},
    )
    return json.loads(figure.to_json())
