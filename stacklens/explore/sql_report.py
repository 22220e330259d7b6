"""A dashboard's SQL widget in the scheduled PDF (docs/explore.md, "SQL panels"): drawn as on the page from
:mod:`stacklens.explore.sql_widgets` — a line or bar as the plot the page draws, a table with every column
the statement answers, a number as its first cell — each with the time the engine took."""

from __future__ import annotations

from stacklens.explore.report_charts import LEGEND_ROW, legend_rows, plot_chart
from stacklens.explore.sql_widgets import cell, sql_columns, sql_plot, sql_summary
from stacklens.explore.widgets import WidgetAnswer
from stacklens.performance.exports.pdf_charts import INK, latin
from stacklens.performance.exports.pdf_layout import Layout

CHART_HEIGHT = 55.0
MAX_TABLE_ROWS = 50  # rows of a table widget printed; the dashboard shows them all


def sql_pdf_widget(layout: Layout, answer: WidgetAnswer) -> None:
    """Draw the SQL widget ``answer`` on the report's ``layout``."""
    title = str(answer.widget.get("title") or "")
    result = answer.result
    kind = answer.widget["kind"]
    if answer.error or result is None or not result.rows or kind == "number":
        layout.room(12)
        layout.pdf.set_font("Helvetica", "B", 10)
        layout.pdf.set_text_color(*INK)
        for line in sql_summary(answer, 1):
            layout.pdf.cell(0, 6, latin(line), new_x=layout.x_pos.LMARGIN, new_y=layout.y_pos.NEXT)
            layout.pdf.set_font("Helvetica", "", 9)
        return
    took = f"SQL - {result.elapsed_ms:,.1f} ms - {result.rows_read:,} rows read"
    plot = sql_plot(answer)
    if plot is not None and plot.refusal:
        layout.note(f"{title}: {plot.refusal}")
        return
    if plot is not None:
        height = CHART_HEIGHT + legend_rows(plot) * LEGEND_ROW
        bars = kind == "bar"
        layout.charts(lambda pdf, x, y, w, h: plot_chart(pdf, x, y, w, h, title, plot, bars), height=height)
        layout.note(took + (f" - {plot.note}" if plot.note else ""))
        return
    columns = sql_columns(result)
    width = (layout.pdf.w - layout.pdf.l_margin - layout.pdf.r_margin) / len(columns)
    rows = result.rows[:MAX_TABLE_ROWS]
    layout.table(
        title, [c.header for c in columns], [[cell(c, r.get(c.key)) for c in columns] for r in rows],
        [width] * len(columns),
    )  # fmt: skip
    cut = (
        f" - the first {MAX_TABLE_ROWS} of {len(result.rows):,} rows"
        if len(result.rows) > MAX_TABLE_ROWS
        else ""
    )
    layout.note(took + cut)
