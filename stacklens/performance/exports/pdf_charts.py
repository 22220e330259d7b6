"""Charts of the PDF report drawn as PDF paths (lines, polylines, rectangles), so they stay sharp at any zoom
and the file needs no image library: a line chart over time and a horizontal bar chart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

ACCENT = (37, 99, 235)
GRID = (220, 224, 230)
INK = (40, 44, 52)
MUTED = (110, 116, 128)


# Characters the product's own texts use that Latin-1 lacks, written the way a plain-text report would.
PLAIN = str.maketrans({"→": "->", "–": "-", "—": "-", "≤": "<=", "≥": ">=", "…": "...", "Δ": "d", "’": "'"})


def latin(text: Any) -> str:
    """Text the PDF core fonts can draw (Latin-1); anything else becomes ``?`` rather than failing."""
    return str(text).translate(PLAIN).encode("latin-1", "replace").decode("latin-1")


def fit(pdf: Any, text: str, width: float) -> str:
    """``text`` cut (ending in ``~``) so it fits ``width`` in the current font."""
    if pdf.get_string_width(text) <= width:
        return text
    while len(text) > 1 and pdf.get_string_width(text + "~") > width:
        # drop about the overflow's share of characters at once, then single ones
        over = pdf.get_string_width(text + "~") - width
        text = text[: -max(1, int(len(text) * over / max(pdf.get_string_width(text), 1e-6)))]
    return text + "~"


def nice_max(value: float) -> float:
    """A round axis maximum at or above ``value`` (1, 2, 2.5, 5 × a power of ten)."""
    if value <= 0:
        return 1.0
    power = 10 ** len(str(int(value))) / 10 if value >= 1 else 1.0
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def _label(value: float) -> str:
    return f"{value:.0f}" if value >= 10 or value == int(value) else f"{value:.2g}"


def _frame(pdf: Any, x: float, y: float, w: float, h: float, title: str, top: float, unit: str) -> None:
    pdf.set_text_color(*INK)
    pdf.set_font("Helvetica", "B", 8)
    pdf.text(x, y + 3, latin(title))
    pdf.set_font("Helvetica", "", 6)
    pdf.set_draw_color(*GRID)
    pdf.set_line_width(0.2)
    for i in range(5):
        gy = y + 6 + (h - 12) * (1 - i / 4)
        pdf.line(x + 14, gy, x + w, gy)
        pdf.set_text_color(*MUTED)
        pdf.text(x, gy + 1, latin(f"{_label(top * i / 4)} {unit}".strip()))


def line_chart(
    pdf: Any,
    x: float,
    y: float,
    w: float,
    h: float,
    title: str,
    labels: Sequence[str],
    values: Sequence[float | None],
    unit: str = "",
) -> None:
    """A line over ``labels`` (gaps where a value is missing), with a y axis from 0 and the first and last
    label under the x axis."""
    known = [v for v in values if v is not None]
    top = nice_max(max(known) if known else 0.0)
    _frame(pdf, x, y, w, h, title, top, unit)
    left, bottom, width, height = x + 16, y + h - 6, w - 18, h - 12
    step = width / max(len(values) - 1, 1)
    pdf.set_draw_color(*ACCENT)
    pdf.set_line_width(0.6)
    run: list[tuple[float, float]] = []
    for i, value in enumerate([*values, None]):
        if value is None:
            if len(run) > 1:
                pdf.polyline(run)
            elif run:
                pdf.circle(x=run[0][0], y=run[0][1], radius=0.6, style="D")
            run = []
            continue
        run.append((left + i * step, bottom - height * value / top))
    pdf.set_text_color(*MUTED)
    pdf.set_font("Helvetica", "", 6)
    if labels:
        pdf.text(left, bottom + 4, latin(labels[0]))
        last = latin(labels[-1])
        pdf.text(left + width - pdf.get_string_width(last), bottom + 4, last)
    pdf.set_text_color(*INK)


def bar_chart(
    pdf: Any,
    x: float,
    y: float,
    w: float,
    h: float,
    title: str,
    labels: Sequence[str],
    values: Sequence[float | None],
    unit: str = "",
    show: Callable[[float], str] | None = None,
) -> None:
    """Horizontal bars, one per label (labels cut to fit), each with its value at its end (``show`` formats
    it; by default the number and ``unit``); a label without a value has no bar and says "no data", never
    0."""
    pdf.set_text_color(*INK)
    pdf.set_font("Helvetica", "B", 8)
    pdf.text(x, y + 3, latin(title))
    if not values:
        return
    top = nice_max(max((v for v in values if v is not None), default=0.0))
    label_w = w * 0.35
    bar_h = min(5.0, (h - 8) / len(values))
    pdf.set_font("Helvetica", "", 6)
    pdf.set_fill_color(*ACCENT)
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        by = y + 6 + i * bar_h
        text = fit(pdf, latin(label), label_w - 2)
        pdf.set_text_color(*INK)
        pdf.text(x, by + bar_h * 0.7, text)
        if value is None:
            pdf.set_text_color(*MUTED)
            pdf.text(x + label_w + 1, by + bar_h * 0.7, "no data")
            continue
        length = (w - label_w - 22) * value / top
        pdf.rect(x + label_w, by + bar_h * 0.15, max(length, 0.3), bar_h * 0.7, style="F")
        pdf.set_text_color(*MUTED)
        shown = show(value) if show else f"{_label(value)} {unit}".strip()
        pdf.text(x + label_w + length + 1, by + bar_h * 0.7, latin(shown))
    pdf.set_text_color(*INK)
    pdf.set_fill_color(255, 255, 255)  # tables drawn next must not inherit the bars' colour
