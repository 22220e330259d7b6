"""The widget kinds beyond line, bar, number and table in the dashboard's PDF (docs/explore.md, "Widget
kinds"), drawn from the same :class:`~stacklens.explore.widget_plot.WidgetPlot` as the page (vector paths,
core fonts): an area as the page's lines filled to zero, a stacked bar as stacks per bucket or group, a
scatter as one point per group named beside it, a heat map as a grid of cells shaded by value (a bucket
without rows blank) with its scale's ends written, a gauge as a bar against its budget's mark. Every number
written carries its unit (the catalog's texts)."""

from __future__ import annotations

from typing import Any

from stacklens.explore.report_charts import COLOURS, plot_chart, tick_label
from stacklens.explore.widget_kinds import GaugeBudget
from stacklens.explore.widget_plot import WidgetPlot
from stacklens.performance.exports.pdf_charts import GRID, INK, MUTED, fit, latin, nice_max

GOOD, POOR = (26, 127, 55), (207, 34, 46)
# The page's heat map scale (Plotly's YlOrRd as the figure's JSON spells it), light for low values.
YLORRD = (
    (255, 255, 204),
    (255, 237, 160),
    (254, 217, 118),
    (254, 178, 76),
    (253, 141, 60),
    (252, 78, 42),
    (227, 26, 28),
    (189, 0, 38),
    (128, 0, 38),
)


def _frame(pdf: Any, x: float, y: float, w: float, title: str) -> None:
    pdf.set_text_color(*INK)
    pdf.set_font("Helvetica", "B", 8)
    pdf.text(x, y + 3, latin(fit(pdf, title, w)))
    pdf.set_font("Helvetica", "", 6)


def area_chart(pdf: Any, x: float, y: float, w: float, h: float, title: str, plot: WidgetPlot) -> None:
    """The page's lines, each filled down to zero (never stacked: a p75 does not add up)."""
    plot_chart(pdf, x, y, w, h, title, plot, False, fill=True)


def stacked_chart(pdf: Any, x: float, y: float, w: float, h: float, title: str, plot: WidgetPlot) -> None:
    """Bars stacked per x (bucket or group), each line's colour, the stacks' tallest the scale."""
    _frame(pdf, x, y, w, title)
    left, right, top_y, bottom = x + 16, x + w - 2, y + 6, y + h - 14
    totals = [sum(line.values[i] or 0.0 for line in plot.lines) for i in range(len(plot.x))]
    top = nice_max(max(totals) if totals else 0.0)
    height, slot = bottom - top_y, (right - left) / max(len(plot.x), 1)
    pdf.set_draw_color(*GRID)
    for i in range(5):
        gy = bottom - height * i / 4
        pdf.line(left, gy, right, gy)
        pdf.set_text_color(*MUTED)
        pdf.text(x, gy + 1, latin(f"{top * i / 4:,.0f}"))
    for i in range(len(plot.x)):
        base = bottom
        for n, line in enumerate(plot.lines):
            value = line.values[i] or 0.0
            if value <= 0:
                continue
            bh = height * value / top
            pdf.set_fill_color(*COLOURS[n % len(COLOURS)])
            pdf.rect(left + i * slot + slot * 0.1, base - bh, slot * 0.8, bh, style="F")
            base -= bh
    _legend(pdf, x, bottom + 4, w, plot, plot.axes[0] if plot.axes else "")


def _legend(pdf: Any, x: float, y: float, w: float, plot: WidgetPlot, axis: str) -> None:
    pdf.set_text_color(*MUTED)
    if plot.x:
        first, last = plot.x[0].replace("T", " ")[:16], plot.x[-1].replace("T", " ")[:16]
        pdf.text(x + 16, y, latin(f"{first} ... {last}   |   {axis}"))
    column = (w - 4) / 4
    for n, line in enumerate(plot.lines[:8]):
        lx, ly = x + (n % 4) * column, y + 4 + (n // 4) * 3.2
        pdf.set_fill_color(*COLOURS[n % len(COLOURS)])
        pdf.rect(lx, ly - 1.8, 3, 1.8, style="F")
        pdf.set_text_color(*INK)
        pdf.text(lx + 4, ly, latin(fit(pdf, line.name, column - 5)))


def scatter_chart(pdf: Any, x: float, y: float, w: float, h: float, title: str, plot: WidgetPlot) -> None:
    """One point per group, named: the first aggregate across, the second up, both axes from zero with
    their ticks and titled with their column (and unit), as the page's scatter."""
    _frame(pdf, x, y, w, title)
    across, up = plot.lines[0], plot.lines[1]
    left, right, top_y, bottom = x + 16, x + w - 4, y + 6, y + h - 12
    xmax = nice_max(max((v for v in across.values if v is not None), default=0.0))
    ymax = nice_max(max((v for v in up.values if v is not None), default=0.0))
    pdf.set_draw_color(*GRID)
    pdf.set_line_width(0.2)
    pdf.set_text_color(*MUTED)
    for i in range(5):
        gy = bottom - (bottom - top_y) * i / 4
        pdf.line(left, gy, right, gy)
        pdf.text(x, gy + 1, latin(tick_label(ymax * i / 4)))
        gx = left + (right - left) * i / 4
        pdf.line(gx, bottom, gx, bottom + 1)
        label = latin(tick_label(xmax * i / 4))
        pdf.text(gx - pdf.get_string_width(label) / 2, bottom + 3.5, label)
    axes = latin(f"across: {across.name}   |   up: {up.name}")
    pdf.text(left + (right - left) / 2 - pdf.get_string_width(axes) / 2, bottom + 7.5, axes)
    pdf.set_fill_color(*COLOURS[0])
    for name, a, b in zip(plot.x, across.values, up.values, strict=True):
        if a is None or b is None:
            continue
        px = left + (right - left) * a / xmax
        py = bottom - (bottom - top_y) * b / ymax
        pdf.circle(x=px, y=py, radius=0.9, style="F")
        pdf.set_text_color(*INK)
        pdf.text(px + 1.2, py - 0.6, latin(fit(pdf, name, 30)))


def shade(share: float) -> tuple[int, int, int]:
    """The colour of a value at ``share`` (0 to 1) of the heat map's range, between the scale's stops."""
    at = min(max(share, 0.0), 1.0) * (len(YLORRD) - 1)
    i = min(int(at), len(YLORRD) - 2)
    lo, hi, t = YLORRD[i], YLORRD[i + 1], at - i
    return (
        round(lo[0] + (hi[0] - lo[0]) * t),
        round(lo[1] + (hi[1] - lo[1]) * t),
        round(lo[2] + (hi[2] - lo[2]) * t),
    )


def heatmap_chart(pdf: Any, x: float, y: float, w: float, h: float, title: str, plot: WidgetPlot) -> None:
    """The window's buckets across, the percentiles up (p50 at the bottom), each cell shaded by its value."""
    _frame(pdf, x, y, w, title)
    left, right, top_y, bottom = x + 16, x + w - 2, y + 6, y + h - 10
    known = [v for line in plot.lines for v in line.values if v is not None]
    low, high = (min(known), max(known)) if known else (0.0, 0.0)
    cw = (right - left) / max(len(plot.x), 1)
    ch = (bottom - top_y) / max(len(plot.lines), 1)
    for r, line in enumerate(plot.lines):
        cy = bottom - (r + 1) * ch
        pdf.set_text_color(*MUTED)
        pdf.text(x, cy + ch / 2 + 1, latin(line.name.split(" (")[0][-12:]))
        for i, value in enumerate(line.values):
            if value is None:
                continue
            pdf.set_fill_color(*shade((value - low) / (high - low) if high > low else 0.5))
            pdf.rect(left + i * cw, cy, cw, ch, style="F")
    pdf.set_text_color(*MUTED)
    if plot.x:
        pdf.text(left, bottom + 3, latin(plot.x[0].replace("T", " ")[:16]))
        last = latin(plot.x[-1].replace("T", " ")[:16])
        pdf.text(right - pdf.get_string_width(last), bottom + 3, last)
    texts = {
        v: t for line in plot.lines for v, t in zip(line.values, line.texts, strict=True) if v is not None
    }
    if known:
        metric = plot.lines[0].name.replace(" p50", "")
        scale = f"lightest {texts[low]}, darkest {texts[high]} ({metric}; rows p50 to p99, bottom up)"
        pdf.text(left, bottom + 6.5, latin(scale))


def gauge_chart(
    pdf: Any, x: float, y: float, w: float, h: float, title: str, value: float, text: str, budget: GaugeBudget
) -> None:
    """The value as a bar from 0, green within the budget and red beyond, the budget a dark mark."""
    _frame(pdf, x, y, w, title)
    left, right = x + 2, x + w - 2
    top = max(value, budget.value) * 1.5 or 1.0
    within = value <= budget.value if budget.better == "lower" else value >= budget.value
    bar_y = y + 12
    pdf.set_fill_color(*GRID)
    pdf.rect(left, bar_y, right - left, 6, style="F")
    pdf.set_fill_color(*(GOOD if within else POOR))
    pdf.rect(left, bar_y, (right - left) * value / top, 6, style="F")
    mark = left + (right - left) * budget.value / top
    pdf.set_draw_color(*INK)
    pdf.set_line_width(0.8)
    pdf.line(mark, bar_y - 2, mark, bar_y + 8)
    pdf.set_line_width(0.2)
    pdf.set_font("Helvetica", "B", 12)
    pdf.set_text_color(*INK)
    verdict = "within budget" if within else ("over budget" if budget.better == "lower" else "under budget")
    pdf.text(left, bar_y + 16, latin(f"{text} - {verdict}"))
    pdf.set_font("Helvetica", "", 7)
    pdf.set_text_color(*MUTED)
    pdf.text(left, bar_y + 21, latin(f"Budget {budget.text}, the {budget.source} (the dark mark)."))
