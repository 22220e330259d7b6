"""A dashboard's scheduled report as a PDF: the dashboard's widgets in its order, each drawn as on the page
— a number with its change (worded as the summary words it), every line over the whole window
(:mod:`stacklens.explore.widget_plot`, as the dashboard draws it), bars per group, a table with its compared
columns —
with the performance PDF report's pages, charts and tables (fpdf2, core fonts, vector charts:
`stacklens.performance. exports`), so both PDFs read alike and nothing is rendered by a browser."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from stacklens.explore.columns import AGGREGATE, CHANGE, Column, columns_of, compared_columns_of
from stacklens.explore.report_charts import LEGEND_ROW, legend_rows, plot_chart
from stacklens.explore.report_kind_layout import OWN_KINDS, draw_kind
from stacklens.explore.sql_report import sql_pdf_widget
from stacklens.explore.widget_change import change_of
from stacklens.explore.widget_kinds import GaugeBudget
from stacklens.explore.widget_plot import widget_plot
from stacklens.explore.widgets import WidgetAnswer
from stacklens.performance.exports.pdf import fpdf_classes
from stacklens.performance.exports.pdf_charts import INK, MUTED, bar_chart, latin
from stacklens.performance.exports.pdf_layout import Layout

MAX_BARS = 12  # bars of a bar widget drawn; the dashboard shows the rest
CHART_HEIGHT = 55.0


def _group(row: dict[str, object], group_by: tuple[str, ...]) -> str:
    return ", ".join(f"{g}={row[g]}" for g in group_by) or "all"


def _widget(
    layout: Layout,
    answer: WidgetAnswer,
    words: Callable[[WidgetAnswer], list[str]],
    budget: GaugeBudget | None = None,
) -> None:
    if "sql" in answer.widget:  # a SQL panel (stacklens.explore.sql_report)
        sql_pdf_widget(layout, answer)
        return
    title = str(answer.widget.get("title") or "")
    if answer.widget.get("no_values"):  # as the page: not a chart of every value under the variable's name
        layout.room(12)
        layout.pdf.set_font("Helvetica", "B", 10)
        layout.pdf.set_text_color(*INK)
        layout.pdf.cell(0, 6, latin(title), new_x=layout.x_pos.LMARGIN, new_y=layout.y_pos.NEXT)
        layout.note(f"No values: {answer.widget['no_values']}")
        return
    query, result = answer.query, answer.result
    kind = answer.widget["kind"]
    drawn = kind in OWN_KINDS and not answer.error and result is not None and bool(result.rows)
    if drawn and draw_kind(layout, answer, budget):  # stacklens.explore.report_kind_layout
        return
    if answer.error or query is None or result is None or not result.rows or kind == "number":
        layout.room(12)
        layout.pdf.set_font("Helvetica", "B", 10)
        layout.pdf.set_text_color(*INK)
        for line in words(answer):
            # The core fonts have no dash: "96.60 % — -1.3 pp" would read "96.60 % - -1.3 pp".
            line = line.replace(" — ", ", ")
            layout.pdf.cell(0, 6, latin(line), new_x=layout.x_pos.LMARGIN, new_y=layout.y_pos.NEXT)
            layout.pdf.set_font("Helvetica", "", 9)
        return
    plot = widget_plot(answer)
    if plot is not None and plot.refusal:
        layout.note(f"{title}: {plot.refusal}")
        return
    if plot is not None and (plot.time or len(plot.lines) > 1):
        # Every line the dashboard draws, over the whole window (widget_plot), with a legend.
        height = CHART_HEIGHT + legend_rows(plot) * LEGEND_ROW
        bars = kind == "bar"
        layout.charts(lambda pdf, x, y, w, h: plot_chart(pdf, x, y, w, h, title, plot, bars), height=height)
        if plot.note:
            layout.note(plot.note)
        return
    compared = query.compare is not None and kind == "table"
    columns = compared_columns_of(query) if compared else columns_of(query)
    if plot is not None:
        # One aggregate per group: a bar each, named, with its value (the plot's bars, "others" included).
        column = next(c for c in columns if c.kind == AGGREGATE)
        named_rows = [_group(r, query.group_by) for r in result.rows]
        labels = (named_rows + plot.x[len(named_rows) :])[:MAX_BARS]
        values = plot.lines[0].values[:MAX_BARS]
        named = f"{title} - {column.header}"
        layout.charts(
            lambda pdf, x, y, w, h: bar_chart(pdf, x, y, w, h, named, labels, values, "", column.format),
            height=CHART_HEIGHT,
        )
        if len(plot.x) > MAX_BARS:
            layout.note(f"The first {MAX_BARS} of {len(plot.x)} bars; every one on the dashboard.")
        if plot.note:
            layout.note(plot.note)
        return
    # A table keeps every column the dashboard shows, a compared one its Previous and Change (as points or
    # per cent, by the metric).
    width = (layout.pdf.w - layout.pdf.l_margin - layout.pdf.r_margin) / len(columns)
    layout.table(
        title,
        [c.header for c in columns],
        [[_cell(c, r) for c in columns] for r in result.rows],
        [width] * len(columns),
    )


def _cell(column: Column, row: dict[str, object]) -> str:
    if column.kind == CHANGE and column.aggregate is not None:
        value = column.key.removesuffix("_change_pct")
        change = change_of(column.aggregate, row.get(value), row.get(value + "_previous"))
        return change.text if change is not None else column.format(None)
    return column.format(row.get(column.key))


def dashboard_pdf(
    name: str,
    scope: str,
    answers: list[WidgetAnswer],
    link: str,
    now: datetime,
    words: Callable[[WidgetAnswer], list[str]],
    budgets: dict[int, GaugeBudget] | None = None,
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
        _widget(layout, answer, words, (budgets or {}).get(answer.index))
    return bytes(pdf.output())
