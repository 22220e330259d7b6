"""The budgets page's chart: a budget's windowed value at each daily evaluation of the last 30 days and at the
evaluation its status is (the last point: the status's own value), each point coloured by its verdict, the
runs of failing and of insufficient data as bands, and the budget as a line. An evaluation without enough
samples draws no point and breaks the line (never 0); a chart with no value at all says so."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from dashboards.figure_json import figure_json
from dashboards.vrects import add_vrects, vrect
from stacklens.alerts.preview import Step, bands
from stacklens.metrics import catalog
from stacklens.performance.budget_eval import FAIL, INSUFFICIENT, PASS, BudgetSpec, Point, judge

COLOURS = {PASS: "#1a7f37", FAIL: "#b42318"}
BAND_COLOURS = {FAIL: "#fca5a5", INSUFFICIENT: "#e5e7eb"}
GREY = "#98a2b3"
NO_DATA = "no data for these filters"
# Byte budgets are drawn in KiB (1,024 bytes), as the catalog writes sizes.
KIB = 1024.0


def _label(value: float, unit: str) -> str:
    number = f"{value:,.0f}" if value >= 100 else f"{value:.3g}"
    return f"{number} {unit}".strip()


def budget_figure(spec: BudgetSpec, points: list[Point], unit: str, title: str) -> dict[str, Any]:
    verdicts = [judge(v, n, spec.value, spec.min_samples, spec.metric) for _, v, n in points]
    found = catalog.find(spec.metric)
    higher = found is not None and found.better == "higher"  # a floor (uptime): good above the line
    scale, unit = (KIB, "KiB") if unit == "bytes" else (1.0, unit)
    threshold = spec.value / scale
    # What each evaluation saw; one without enough samples is a gap in the line, not a point.
    shown = [
        None if v is None or verdict == INSUFFICIENT else v / scale
        for (_, v, _), verdict in zip(points, verdicts, strict=True)
    ]
    figure = go.Figure()
    steps = [Step(at, v, n, verdict) for (at, v, n), verdict in zip(points, verdicts, strict=True)]
    add_vrects(
        figure,
        (
            vrect(band.start.isoformat(), band.end.isoformat(), BAND_COLOURS[band.state], 0.45)
            for band in bands(steps)
            if band.state in BAND_COLOURS
        ),
    )
    figure.add_scatter(
        x=[at.isoformat() for at, _, _ in points],
        y=shown,
        mode="lines+markers",
        connectgaps=False,
        line={"color": "#0b5cad", "width": 1.5},
        marker={"color": [COLOURS.get(v, GREY) for v in verdicts], "size": 7},
        customdata=[[n, v.replace("_", " ")] for (_, _, n), v in zip(points, verdicts, strict=True)],
        hovertemplate="%{x|%Y-%m-%d %H:%M} UTC<br>%{y:,.4~r} "
        + unit
        + "<br>%{customdata[0]} samples · %{customdata[1]}<extra></extra>",
    )
    figure.add_hline(
        y=threshold,
        line={"color": "#b42318", "dash": "dash", "width": 1},
        annotation_text=f"budget {'≥ ' if higher else ''}{_label(threshold, unit)}",
        annotation_position="top left",
    )
    values = [v for v in shown if v is not None]
    top = max([threshold, *values]) * 1.15 or 1.0
    axis_range = [0.0, top]
    if higher:
        # Uptime near its 99.9 % budget: an axis from 0 would draw every point on the budget's line.
        low = min([threshold, *values])
        span = max((100.0 if unit == "%" else max([threshold, *values])) - low, 0.1)
        axis_range = [max(0.0, low - span * 0.5), low + span * 1.3]
    if not values:
        # Samples but too few: say how many of how many (the row beside the chart shows them), not "no data".
        last = points[-1][2] if points else 0
        text = f"insufficient data: {last:,} of {spec.min_samples:,} samples" if last else NO_DATA
        figure.add_annotation(
            text=text, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False, font={"color": GREY}
        )
    figure.update_layout(
        title={"text": title, "font": {"size": 13}, "x": 0, "xanchor": "left"},
        height=230,
        margin={"l": 60, "r": 10, "t": 34, "b": 36},
        yaxis={"title": {"text": unit}, "range": axis_range},
        xaxis={"type": "date", "range": [points[0][0].isoformat(), points[-1][0].isoformat()]}
        if points
        else {"visible": False},
        plot_bgcolor="#fff",
        showlegend=False,
        # An uptime budget's chart is uptime already: no uptime line beside its markers (uptime_overlay).
        meta={"uptime": spec.metric != "uptime_pct"},
    )
    return figure_json(figure)
