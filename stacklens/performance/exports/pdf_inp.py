"""The PDF report's INP causes section (docs/performance.md, "INP causes"): the INP parts p75 per page with
their samples, the scripts ranked by their share of the attributed time with their party, and the browsers
that send no INP or no attribution — the INP page's figures (stacklens.performance.inp.reads)."""

from __future__ import annotations

from stacklens.performance.exports.pdf_layout import Layout, fmt, metric
from stacklens.performance.exports.report_data import ReportData
from stacklens.performance.inp.reads import PART_LABELS


def inp_causes(layout: Layout, data: ReportData) -> None:
    view = data.inp
    if view is None:
        return
    layout.heading("INP causes")
    pages = [r for r in view.parts if not r.target]
    layout.table(
        "Parts per page (p75)",
        [
            "Page",
            "Interactions",
            "INP",
            "Input delay",
            "Processing",
            "Presentation",
            "Third party",
            "Main part",
        ],
        [
            [
                r.page,
                f"{fmt(r.attributed)} of {fmt(r.interactions)}",
                metric("inp_ms", r.inp_p75),
                metric("inp_input_delay_ms", r.input_delay_p75),
                metric("inp_processing_ms", r.processing_p75),
                metric("inp_presentation_ms", r.presentation_p75),
                metric("inp_third_party_ms", r.third_party_p75),
                PART_LABELS.get(r.main_part, "no attribution"),
            ]
            for r in pages
        ],
        (50, 24, 22, 24, 24, 24, 24, 28),
        empty="No interactions reported for these filters.",
    )
    layout.table(
        "Scripts in slow interactions",
        ["Script", "Function", "Party", "Share", "Avg per run", "Runs", "Main part"],
        [
            [
                s.url or "(the browser's own work)",
                s.function,
                "third party" if s.third_party else "first party",
                f"{s.share_pct:.1f} %",
                metric("inp_processing_ms", s.avg_ms, "avg"),
                fmt(s.runs),
                PART_LABELS[s.main_part],
            ]
            for s in view.scripts[:15]
        ],
        (80, 30, 22, 16, 22, 14, 28),
        empty="No script data for these filters (only Chromium-based browsers report long animation frames).",
    )
    gaps = [b.gap for b in view.browsers if b.gap]
    if gaps:
        layout.note("; ".join(gaps) + " — counted, never shown as 0 ms.")
