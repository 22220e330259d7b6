"""The report's building blocks: numbers written as the pages write them, and the layout of headings, notes,
tables and rows of charts on landscape A4 pages (a block that would not fit starts a new page).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stacklens.metrics import units
from stacklens.metrics.formatting import format_value
from stacklens.performance.exports.pdf_charts import INK, MUTED, bar_chart, fit, latin, line_chart
from stacklens.performance.exports.report_data import ReportData

MAX_ROWS = 30  # rows per table; the report says how many the full table has
ROW_HEIGHT = 4.6
WRAP_LINE, WRAP_PADDING = 4.0, 0.8  # a wrapped table's line height and cell padding (mm)
KEEP_ROWS = 2  # a table's header starts a page rather than end one without at least these rows below it


def fmt(value: Any, digits: int = 0, unit: str = "") -> str:
    """A number as the pages show it (``-`` when missing); text as is."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, int | float):
        text = f"{value:,.{digits}f}"
        return f"{text} {unit}" if unit else text
    return latin(value)


def kb(value: Any) -> str:
    """A size in bytes with a binary prefix, as the pages write it (``250.0 KiB``, ``1.5 MiB``)."""
    return "-" if value is None else units.format_in(units.BYTES, value)


def metric(key: str, value: Any, statistic: str | None = None) -> str:
    """A metric's value as the pages write it (the metric catalog); ``-`` when missing, as the report's
    cells."""
    return "-" if value is None else latin(format_value(key, value, statistic))


def pct(value: Any) -> str:
    return "-" if value is None else f"{value:+.1f} %"


def describe_filters(data: ReportData) -> str:
    f = data.filters.describe()
    window = f"{f['since']} to {f['until']}" + (f" (range {f['range']})" if f["range"] else "")
    dims = ", ".join(f"{k} {f[k] or 'any'}" for k in ("environment", "release", "browser"))
    return f"Window {window}; {dims}"


class Layout:
    """Headings, notes, tables and chart rows on the report's pages (new page when a block would not fit)."""

    def __init__(self, pdf: Any, x_pos: Any, y_pos: Any) -> None:
        self.pdf, self.x_pos, self.y_pos = pdf, x_pos, y_pos

    def room(self, height: float) -> None:
        if self.pdf.get_y() + height > self.pdf.h - 16:
            self.pdf.add_page()

    def heading(self, text: str) -> None:
        self.room(70)  # a heading starts a page rather than sit alone at the bottom of one
        self.pdf.ln(3)
        self.pdf.set_font("Helvetica", "B", 13)
        self.pdf.set_text_color(*INK)
        self.pdf.cell(0, 8, latin(text), new_x=self.x_pos.LMARGIN, new_y=self.y_pos.NEXT)

    def note(self, text: str) -> None:
        self.pdf.set_font("Helvetica", "", 8)
        self.pdf.set_text_color(*MUTED)
        self.pdf.multi_cell(0, 4, latin(text), new_x=self.x_pos.LMARGIN, new_y=self.y_pos.NEXT)
        self.pdf.set_text_color(*INK)

    def table(
        self,
        title: str,
        header: Sequence[str],
        rows: Sequence[Sequence[str]],
        widths: Sequence[float],
        empty: str = "No rows for these filters.",
        wrap: bool = False,
    ) -> None:
        """A table of at most MAX_ROWS rows; one line per cell (cut to fit with ``~``) unless ``wrap``, where
        long texts wrap (slower: fpdf2 breaks lines glyph by glyph). A title and a header never end a page:
        when they and the first KEEP_ROWS rows do not fit below, the table starts on the next page; a table
        running over a page break repeats its header on the next page, above the rows that follow."""
        shown = rows[:MAX_ROWS]
        title_height = 6.0 if title else 0.0
        if not shown:
            self.room(title_height + 6)
        else:
            self.room(title_height + self._opening_height(header, shown[:KEEP_ROWS], widths, wrap))
        if title:
            self.pdf.set_font("Helvetica", "B", 9)
            self.pdf.cell(0, 6, latin(title), new_x=self.x_pos.LMARGIN, new_y=self.y_pos.NEXT)
        if not shown:
            self.note(empty)
            return
        self.pdf.set_draw_color(200, 204, 212)
        self.pdf.set_line_width(0.2)
        self.pdf.set_fill_color(240, 242, 246)
        if wrap:
            self._wrapped(header, shown, widths)
        else:
            self._row(header, widths, bold=True)
            for row in shown:
                if self.pdf.will_page_break(ROW_HEIGHT):
                    self.pdf.add_page()
                    self._row(header, widths, bold=True)
                self._row(row, widths, bold=False)
        if len(rows) > len(shown):
            self.note(
                f"The first {len(shown)} of {len(rows)} rows; the CSV and JSON downloads hold them all."
            )
        self.pdf.ln(2)

    def _opening_height(
        self,
        header: Sequence[str],
        first: Sequence[Sequence[str]],
        widths: Sequence[float],
        wrap: bool,
    ) -> float:
        """The height of the header and ``first`` rows as they will be drawn (wrapped rows by their lines)."""
        if not wrap:
            return ROW_HEIGHT * (1 + len(first))
        self.pdf.set_font("Helvetica", "", 7)
        return sum(self._wrapped_height(cells, widths) for cells in (header, *first))

    def _wrapped_height(self, cells: Sequence[str], widths: Sequence[float]) -> float:
        """A wrapped row's height: its tallest cell's lines (as fpdf2's table breaks them) and the padding."""
        from fpdf.enums import MethodReturnValue

        lines = max(
            len(
                self.pdf.multi_cell(
                    width - 2 * WRAP_PADDING,
                    WRAP_LINE,
                    latin(text),
                    dry_run=True,
                    output=MethodReturnValue.LINES,
                    padding=0,
                )
            )
            for text, width in zip(cells, widths, strict=True)
        )
        return lines * WRAP_LINE + 2 * WRAP_PADDING

    def _row(self, cells: Sequence[str], widths: Sequence[float], bold: bool) -> None:
        pdf = self.pdf
        pdf.set_font("Helvetica", "B" if bold else "", 7)
        for text, width in zip(cells, widths, strict=True):
            pdf.cell(
                width,
                ROW_HEIGHT,
                fit(pdf, latin(text), width - 2 * pdf.c_margin),
                border="B",
                fill=bold,
                new_x=self.x_pos.RIGHT,
                new_y=self.y_pos.TOP,
            )
        pdf.ln(ROW_HEIGHT)

    def _wrapped(self, header: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[float]) -> None:
        self.pdf.set_font("Helvetica", "", 7)
        with self.pdf.table(
            col_widths=tuple(widths),
            line_height=WRAP_LINE,
            text_align="LEFT",
            padding=WRAP_PADDING,
            repeat_headings=1,
            borders_layout="HORIZONTAL_LINES",
            cell_fill_mode="ROWS",
        ) as table:
            table.row([latin(h) for h in header])
            for row in rows:
                table.row([latin(cell) for cell in row])

    def charts(self, *draw: Callable[[Any, float, float, float, float], None], height: float = 50) -> None:
        """Charts side by side, one row."""
        self.room(height + 2)
        top = self.pdf.get_y()
        width = (self.pdf.w - self.pdf.l_margin - self.pdf.r_margin) / len(draw)
        for i, chart in enumerate(draw):
            chart(self.pdf, self.pdf.l_margin + i * width, top, width - 6, height)
        self.pdf.set_y(top + height + 2)


def line(title: str, rows: Sequence[Mapping[str, object]], x: str, y: str, unit: str) -> Callable[..., None]:
    """A line chart of ``y`` over ``x``; a row without ``y`` (a day without samples) is a gap in the line."""
    values = [value if isinstance(value := r.get(y), int | float) else None for r in rows]
    return lambda pdf, left, top, w, h: line_chart(
        pdf, left, top, w, h, title, [str(r[x]) for r in rows], values, unit
    )


def bars(
    title: str,
    labels: list[str],
    values: list[float | None],
    unit: str,
    show: Callable[[float], str] | None = None,
) -> Callable[..., None]:
    return lambda pdf, left, top, w, h: bar_chart(pdf, left, top, w, h, title, labels, values, unit, show)
