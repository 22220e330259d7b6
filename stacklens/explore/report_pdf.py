"""A dashboard's scheduled report as a PDF: the dashboard's widgets in its order, each drawn as on the page
— a number with its change (worded as the summary words it), a line over time, bars per group, a table —
with the performance PDF report's pages, charts and tables (fpdf2, core fonts, vector charts:
`stacklens.performance. exports`), so both PDFs read alike and nothing is rendered by a browser."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from stacklens.explore.columns import AGGREGATE, columns_of
from stacklens.explore.widgets import WidgetAnswer
from stacklens.performance.exports.pdf import fpdf_classes
from stacklens.performance.exports.pdf_charts import INK, MUTED, bar_chart, latin, line_chart
from stacklens.performance.exports.pdf_layout import Layout

MAX_BARS = 12  # bars of a bar widget drawn; the dashboard shows the rest
CHART_HEIGHT = 55.0


def _day(value: str) -> str:
    """A bucket's start (ISO 8601) as the chart's x label: ``2026-11-20 08:00``."""
    return value.replace("T", " ")[:16].removesuffix(" 00:00")


def _group(row: dict[str, object], group_by: tuple[str, ...]) -> str:
    return ", ".join(f"{g}={row[g]}" for g in group_by) or "all"


def _widget(layout: Layout, answer: WidgetAnswer, words: Callable[[WidgetAnswer], list[str]]) -> None:
    title = str(answer.widget.get("title") or "")
    query, result = answer.query, answer.result
    kind = answer.widget["kind"]
    if answer.error or query is None or result is None or not result.rows or kind == "number":
        layout.room(12)
        layout.pdf.set_font("Helvetica", "B", 10)
        layout.pdf.set_text_color(*INK)
        for line in words(answer):
            layout.pdf.cell(0, 6, latin(line), new_x=layout.x_pos.LMARGIN, new_y=layout.y_pos.NEXT)
            layout.pdf.set_font("Helvetica", "", 9)
        return
    columns = columns_of(query)
    column = next(c for c in columns if c.kind == AGGREGATE)
    if kind == "line" and result.series:
        # The widget's largest line (the series come largest first); the dashboard draws every one.
        first = result.series[0]
        more = len(result.series) - 1
        named = f"{title} - {column.header}" + (
            f" ({_group(first['group'], query.group_by)}; {more} more line(s) on the dashboard)"
            if more
            else ""
        )
        labels = [_day(t) for t in first["t"]]
        values = [float(v) if isinstance(v, int | float) else None for v in first["values"][column.key]]
        layout.charts(
            lambda pdf, x, y, w, h: line_chart(pdf, x, y, w, h, named, labels, values), height=CHART_HEIGHT
        )
        return
    if kind == "bar":
        rows = result.rows[:MAX_BARS]
        labels = [_group(r, query.group_by) for r in rows]
        values = [float(v) if isinstance(v := r.get(column.key), int | float) else None for r in rows]
        named = f"{title} - {column.header}"
        layout.charts(
            lambda pdf, x, y, w, h: bar_chart(pdf, x, y, w, h, named, labels, values, "", column.format),
            height=CHART_HEIGHT,
        )
        return
    width = (layout.pdf.w - layout.pdf.l_margin - layout.pdf.r_margin) / len(columns)
    layout.table(
        title,
        [c.header for c in columns],
        [[c.format(r.get(c.key)) for c in columns] for r in result.rows],
        [width] * len(columns),
    )


def dashboard_pdf(
    name: str,
    scope: str,
    answers: list[WidgetAnswer],
    link: str,
    now: datetime,
    words: Callable[[WidgetAnswer], list[str]],
) -> bytes:
    """The PDF of a dashboard's answered widgets over ``scope`` (its range and filters, in words) at ``now``;
    ``words`` words a number (or an unanswered widget) as the summary report does."""
    fpdf_class, x_pos, y_pos = fpdf_classes()
    generated = now.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")

    class Report(fpdf_class):  # type: ignore[misc, valid-type]  # FPDF, imported only when a report is built
        def footer(self) -> None:
            self.set_y(-10)
            self.set_font("Helvetica", "", 7)
            self.set_text_color(*MUTED)
            self.cell(0, 5, latin(f"{name} - the last {scope} - generated {generated}"), align="L")
            self.set_x(-40)
            self.cell(30, 5, f"Page {self.page_no()} of {{nb}}", align="R")

    pdf = Report(orientation="L", unit="mm", format="A4")
    pdf.set_title(latin(f"Dashboard: {name}"))
    pdf.set_creator("StackLens")
    pdf.set_creation_date(now.astimezone(UTC))
    pdf.set_auto_page_break(auto=True, margin=14)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    pdf.set_text_color(*INK)
    pdf.cell(0, 10, latin(f"Dashboard: {name}"), new_x=x_pos.LMARGIN, new_y=y_pos.NEXT)
    layout = Layout(pdf, x_pos, y_pos)
    layout.note(f"The last {scope}, as of {generated}. Open the dashboard: {link}")
    pdf.ln(2)
    for answer in answers:
        _widget(layout, answer, words)
    return bytes(pdf.output())
