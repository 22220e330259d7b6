"""The rule page's 30-day preview chart: what the evaluator saw at each evaluation — its value (a gap where
it had too few samples, never 0), its state as a band (ok, warning, firing, insufficient data), the
threshold, the warning and the resolve thresholds as lines — with the firings counted from the firing bands
themselves."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from dashboards.figure_json import figure_json
from dashboards.vrects import add_vrects, vrect
from stacklens.alerts.messages import value_text, what
from stacklens.alerts.preview import Preview
from stacklens.alerts.rule_types import fires_below
from stacklens.control.models.alerts import AlertRule

BAND_COLOURS = {
    "ok": "#dcfce7",
    "warning": "#fde68a",
    "firing": "#fca5a5",
    "insufficient_data": "#e5e7eb",
}
BAND_NAMES = {"ok": "ok", "warning": "warning", "firing": "firing", "insufficient_data": "insufficient data"}
NO_DATA = "no data for these filters"
GREY = "#98a2b3"


def _threshold(
    figure: go.Figure,
    rule: AlertRule,
    value: float | None,
    colour: str,
    dash: str,
    text: str,
    position: str,
) -> None:
    if value is not None:
        figure.add_hline(
            y=value,
            line={"color": colour, "dash": dash, "width": 1},
            annotation_text=f"{text} {value_text(rule, value)}",  # with its unit, as the rule page writes it
            annotation_position=position,
        )


def preview_figure(rule: AlertRule, replay: Preview) -> dict[str, Any]:
    label, unit = what(rule)
    figure = go.Figure()
    if replay.daily and not replay.steps:
        figure.add_bar(
            x=[d for d, _ in replay.daily],
            y=[n for _, n in replay.daily],
            marker_color="#c2410c",
            name="notifications",
            hovertemplate="%{x}<br>%{y} notifications<extra></extra>",
        )
        title, y_title = "Notifications per day over the past 30 days", "notifications"
    else:
        add_vrects(
            figure,
            (
                vrect(band.start.isoformat(), band.end.isoformat(), BAND_COLOURS[band.state], 0.5)
                for band in replay.bands
            ),
        )
        for state, colour in BAND_COLOURS.items():  # the bands' legend
            figure.add_scatter(
                x=[None],
                y=[None],
                mode="markers",
                marker={"color": colour, "size": 10, "symbol": "square"},
                name=BAND_NAMES[state],
            )
        steps = replay.steps
        figure.add_scatter(
            x=[s.at.isoformat() for s in steps],
            # An evaluation with too few samples judged nothing: a gap, not a value.
            y=[None if s.state == "insufficient_data" else s.value for s in steps],
            mode="lines+markers",
            marker={"size": 4},
            line={"color": "#0b5cad", "width": 1.5},
            name=label,
            connectgaps=False,
            customdata=[[s.samples, BAND_NAMES[s.state]] for s in steps],
            hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>%{y:,.1f} "
            + unit
            + "<br>%{customdata[0]} samples · %{customdata[1]}<extra></extra>",
            showlegend=False,
        )
        # A rule that fires below its threshold (a crash-free rate) has its warning above it: the labels go on
        # other corners so that lines half a point apart keep readable labels.
        below = fires_below(rule.type, rule.metric)
        _threshold(
            figure,
            rule,
            rule.threshold,
            "#b42318",
            "solid",
            "threshold",
            "bottom right" if below else "top left",
        )
        _threshold(figure, rule, rule.warning_threshold, "#b45309", "dash", "warning", "top left")
        _threshold(figure, rule, rule.resolve_threshold, "#1a7f37", "dot", "resolve", "bottom left")
        if not any(s.value is not None and s.state != "insufficient_data" for s in steps):
            figure.add_annotation(
                text=NO_DATA, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False, font={"color": GREY}
            )
        title, y_title = (
            f"{label}: would have fired {len(replay.periods)} time(s) in 30 days",
            unit or "value",
        )
    figure.update_layout(
        title={"text": title, "font": {"size": 13}, "x": 0, "xanchor": "left"},
        height=300,
        margin={"l": 60, "r": 10, "t": 34, "b": 46},
        showlegend=not replay.daily,
        legend={"orientation": "h", "y": -0.25},
        plot_bgcolor="#fff",
        xaxis={"type": "date", "title": {"text": "Time (UTC)"}}
        if replay.steps or replay.daily
        else {"visible": False},
        # A crash-free rate lives between 90 and 100 %: from zero, its line and thresholds would be one
        # stroke.
        yaxis={
            "title": {"text": y_title},
            "rangemode": "normal" if fires_below(rule.type, rule.metric) else "tozero",
        },
    )
    return figure_json(figure)
