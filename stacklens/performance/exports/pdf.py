"""The PDF report of a project and a time window (fpdf2, pure Python: no system library, no browser, no
network): summary (score, web vitals with ratings, budgets with status), pages, resources, API endpoints,
trends, release impact and recommendations, with vector charts, the filters and the generation time on every
page, and page numbers. Text uses the PDF core fonts (Helvetica), so nothing is downloaded or embedded.
"""

from __future__ import annotations

from typing import Any

from stacklens.errors import Unavailable
from stacklens.performance.exports.pdf_charts import INK, MUTED, latin
from stacklens.performance.exports.pdf_layout import Layout, describe_filters, fmt
from stacklens.performance.exports.pdf_sections import SECTIONS
from stacklens.performance.exports.report_data import ReportData

__all__ = ["build_pdf", "fmt"]


def fpdf_classes() -> Any:
    try:
        from fpdf import FPDF, XPos, YPos
    except ImportError as exc:  # an install without the server extra
        raise Unavailable(
            "PDF reports need the fpdf2 package (part of stacklens[server]): pip install 'stacklens[server]'"
        ) from exc
    return FPDF, XPos, YPos


def build_pdf(data: ReportData) -> bytes:
    """The report as PDF bytes."""
    fpdf_class, x_pos, y_pos = fpdf_classes()
    generated = data.generated_at.strftime("%Y-%m-%d %H:%M:%S UTC")

    class Report(fpdf_class):  # type: ignore[misc, valid-type]  # FPDF, imported only when a report is built
        def footer(self) -> None:
            self.set_y(-10)
            self.set_font("Helvetica", "", 7)
            self.set_text_color(*MUTED)
            self.cell(
                0,
                5,
                latin(f"{data.project} - {describe_filters(data)} - generated {generated}"),
                align="L",
            )
            self.set_x(-40)
            self.cell(30, 5, f"Page {self.page_no()} of {{nb}}", align="R")

    pdf = Report(orientation="L", unit="mm", format="A4")
    pdf.set_title(latin(f"Performance report: {data.project}"))
    pdf.set_creator("StackLens")
    pdf.set_creation_date(data.generated_at)
    pdf.set_auto_page_break(auto=True, margin=14)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 18)
    pdf.set_text_color(*INK)
    pdf.cell(0, 10, latin(f"Performance report: {data.project}"), new_x=x_pos.LMARGIN, new_y=y_pos.NEXT)
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(0, 5, latin(f"Filters: {describe_filters(data)}"), new_x=x_pos.LMARGIN, new_y=y_pos.NEXT)
    pdf.cell(0, 5, f"Generated {generated}", new_x=x_pos.LMARGIN, new_y=y_pos.NEXT)
    layout = Layout(pdf, x_pos, y_pos)
    for section in SECTIONS:
        section(layout, data)
    return bytes(pdf.output())
