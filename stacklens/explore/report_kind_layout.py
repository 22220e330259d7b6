"""Where the dashboard's PDF places a widget of a kind beyond the four (:mod:`stacklens.explore.report_kinds`
draws it): a chart box as tall as the line charts', the plot's refusal or cut note under it as on the page."""

from __future__ import annotations

from typing import Any

from stacklens.explore.columns import AGGREGATE, columns_of
from stacklens.explore.report_kinds import (
    area_chart,
    gauge_chart,
    heatmap_chart,
    scatter_chart,
    stacked_chart,
)
from stacklens.explore.widget_kinds import GaugeBudget
from stacklens.explore.widget_plot import widget_plot
from stacklens.explore.widgets import WidgetAnswer
from stacklens.performance.exports.pdf_layout import Layout

OWN_KINDS = ("area", "stacked_bar", "scatter", "heatmap", "gauge")
HEIGHT = 60.0
DRAW = {"area": area_chart, "stacked_bar": stacked_chart, "scatter": scatter_chart, "heatmap": heatmap_chart}


def draw_kind(layout: Layout, answer: WidgetAnswer, budget: GaugeBudget | None) -> bool:
    """Draw the answered widget; False when it is left to the four kinds' drawing (a gauge without a budget
    is written as a number)."""
    title = str(answer.widget.get("title") or "")
    kind = answer.widget["kind"]
    if kind == "gauge":
        if budget is None or answer.query is None or answer.number is None:
            return False
        column = next(c for c in columns_of(answer.query) if c.kind == AGGREGATE)
        value, text = float(answer.number), column.format(answer.number)

        def gauge(pdf: Any, x: float, y: float, w: float, h: float) -> None:
            gauge_chart(pdf, x, y, w, h, title, value, text, budget)

        layout.charts(gauge, height=40.0)
        return True
    plot = widget_plot(answer)
    if plot is None:
        return False
    if plot.refusal:
        layout.note(f"{title}: {plot.refusal}")
        return True
    draw = DRAW[kind]
    layout.charts(lambda pdf, x, y, w, h: draw(pdf, x, y, w, h, title, plot), height=HEIGHT)
    if plot.note:
        layout.note(plot.note)
    return True
