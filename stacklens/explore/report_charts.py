"""A widget's plot (:class:`stacklens.explore.widget_plot.WidgetPlot`) drawn in the dashboard's PDF as vector
paths: every line (or bar set) the dashboard draws, in the dashboard's colours, over the same x — the whole
window's buckets or the groups —, a second unit on a right-hand axis, and a legend naming each line, so the
PDF draws what the widget says (docs/explore.md, "What a widget draws")."""

from __future__ import annotations

from typing import Any

from stacklens.explore.widget_plot import WidgetPlot
from stacklens.performance.exports.pdf_charts import GRID, INK, MUTED, fit, latin, nice_max

# Plotly's default template's colour sequence (the dashboard's): the PDF's line N has the page's colour.
COLOURS = (
    (99, 110, 250),  # #636efa
    (239, 85, 59),  # #ef553b
    (0, 204, 150),  # #00cc96
    (171, 99, 250),  # #ab63fa
    (255, 161, 90),  # #ffa15a
    (25, 211, 243),  # #19d3f3
    (255, 102, 146),  # #ff6692
    (182, 232, 128),  # #b6e880
    (255, 151, 255),  # #ff97ff
    (254, 203, 82),  # #fecb52
)
LEGEND_ROW = 3.2  # mm per legend row


def tick_label(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 or value == int(value) else f"{value:.2g}"


def _day(value: str) -> str:
    """A bucket's start (ISO 8601) as an x label: ``2026-11-20 08:00`` (``2026-11-20`` at midnight)."""
    return value.replace("T", " ")[:16].removesuffix(" 00:00")


def legend_rows(plot: WidgetPlot, per_row: int = 4) -> int:
    return (len(plot.lines) + len(plot.previous) + per_row - 1) // per_row


def _runs(
    values: list[float | None], left: float, step: float, bottom: float, scale: float
) -> list[list[tuple[float, float]]]:
    """A line's unbroken stretches as points on the page (a bucket without a value breaks it: a gap)."""
    runs: list[list[tuple[float, float]]] = [[]]
    for i, value in enumerate(values):
        if value is None:
            runs.append([])
        else:
            runs[-1].append((left + i * step, bottom - value * scale))
    return [r for r in runs if r]


def plot_chart(
    pdf: Any,
    x: float,
    y: float,
    w: float,
    h: float,
    title: str,
    plot: WidgetPlot,
    bars: bool,
    fill: bool = False,
) -> None:
    """``plot`` in the box ``(x, y, w, h)``: title, axes from 0 (left, and right for a second unit), every
    line (gaps where a bucket has no value; with ``fill``, an area: each line filled down to zero) or grouped
    bars, the x's first and last labels, and a legend."""
    per_row = 4
    legend = legend_rows(plot, per_row) * LEGEND_ROW
    left, right = x + 16, x + w - (16 if len(plot.axes) > 1 else 2)
    top_y, bottom = y + 6, y + h - 8 - legend
    width, height = right - left, bottom - top_y
    tops = []
    for axis in range(1, len(plot.axes) + 1):
        drawn = [*plot.lines, *plot.previous]
        known = [v for line in drawn if line.axis == axis for v in line.values if v is not None]
        tops.append(nice_max(max(known) if known else 0.0))
    pdf.set_text_color(*INK)
    pdf.set_font("Helvetica", "B", 8)
    pdf.text(x, y + 3, latin(fit(pdf, title, w)))
    pdf.set_font("Helvetica", "", 6)
    pdf.set_draw_color(*GRID)
    pdf.set_line_width(0.2)
    for i in range(5):
        gy = bottom - height * i / 4
        pdf.line(left, gy, right, gy)
        pdf.set_text_color(*MUTED)
        pdf.text(x, gy + 1, latin(tick_label(tops[0] * i / 4)))
        if len(tops) > 1:
            pdf.text(right + 1, gy + 1, latin(tick_label(tops[1] * i / 4)))
    count = max(len(plot.x), 1)
    stretches: list[tuple[tuple[int, int, int], list[list[tuple[float, float]]], bool]] = []
    for n, line in enumerate(plot.lines):
        colour = COLOURS[n % len(COLOURS)]
        top = tops[line.axis - 1]
        pdf.set_draw_color(*colour)
        pdf.set_fill_color(*colour)
        if bars:
            slot = width / count
            bar = slot * 0.8 / max(len(plot.lines), 1)
            for i, value in enumerate(line.values):
                if value is None or value <= 0:
                    continue
                bh = height * value / top
                pdf.rect(left + i * slot + slot * 0.1 + n * bar, bottom - bh, bar, bh, style="F")
            continue
        step = width / max(count - 1, 1)
        runs = _runs(line.values, left, step, bottom, height / top)
        if fill:  # the area under each stretch down to zero, at half opacity as Plotly's fill="tozeroy"
            with pdf.local_context(fill_opacity=0.5):
                for run in runs:
                    if len(run) > 1:
                        pdf.polygon([(run[0][0], bottom), *run, (run[-1][0], bottom)], style="F")
        stretches.append((colour, runs, False))
    for k, line in enumerate(plot.previous):  # a compared window's lines: dotted, the page's next colours
        colour = COLOURS[(len(plot.lines) + k) % len(COLOURS)]
        runs = _runs(line.values, left, width / max(count - 1, 1), bottom, height / tops[line.axis - 1])
        stretches.append((colour, runs, True))
    # Lines over every fill, so an area's later fill never hides an earlier line.
    for colour, runs, dotted in stretches:
        pdf.set_draw_color(*colour)
        pdf.set_line_width(0.35 if dotted else 0.5)
        if dotted:
            pdf.set_dash_pattern(dash=0.8, gap=0.6)
        else:
            pdf.set_dash_pattern()
        for run in runs:
            if len(run) > 1:
                pdf.polyline(run)
            else:
                pdf.circle(x=run[0][0], y=run[0][1], radius=0.5, style="D")
    pdf.set_dash_pattern()
    pdf.set_text_color(*MUTED)
    pdf.set_font("Helvetica", "", 6)
    if plot.x and not plot.time and bars:
        # Bars per group: every group named under its bars (cut to its slot).
        slot = width / count
        for i, name in enumerate(plot.x):
            label = latin(fit(pdf, latin(name), slot - 1))
            pdf.text(left + i * slot + (slot - pdf.get_string_width(label)) / 2, bottom + 3, label)
    elif plot.x:
        first, last = (_day(plot.x[0]), _day(plot.x[-1])) if plot.time else (plot.x[0], plot.x[-1])
        pdf.text(left, bottom + 3, latin(first))
        last = latin(last)
        pdf.text(right - pdf.get_string_width(last), bottom + 3, last)
    axes = "  |  ".join(f"{'left' if i == 0 else 'right'}: {t}" for i, t in enumerate(plot.axes))
    below = bottom + (6 if not plot.time and bars else 3)
    pdf.text(left + width / 2 - pdf.get_string_width(latin(axes)) / 2, below, latin(axes))
    column = (w - 4) / per_row
    for n, line in enumerate([*plot.lines, *plot.previous]):
        lx = x + (n % per_row) * column
        ly = bottom + 8 + (n // per_row) * LEGEND_ROW
        pdf.set_fill_color(*COLOURS[n % len(COLOURS)])
        pdf.rect(lx, ly - 1.8, 3, 1.8, style="F")
        pdf.set_text_color(*INK)
        pdf.text(lx + 4, ly, latin(fit(pdf, line.name, column - 5)))
    pdf.set_text_color(*INK)
