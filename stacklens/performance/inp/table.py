"""The INP view's parts rows as CSV (``GET …/performance/inp?format=csv``, the INP page's download): one line
per page and per page, target and type, metric columns named with their unit, every text cell neutralised."""

from __future__ import annotations

from dataclasses import asdict

from stacklens.csv_cells import csv_text
from stacklens.performance.inp.reads import InpView

COLUMNS = (
    ("page", "page"),
    ("target", "target"),
    ("type", "type"),
    ("interactions", "interactions"),
    ("attributed", "attributed"),
    ("with_scripts", "with_scripts"),
    ("inp_p75", "inp_p75_ms"),
    ("input_delay_p75", "inp_input_delay_p75_ms"),
    ("processing_p75", "inp_processing_p75_ms"),
    ("presentation_p75", "inp_presentation_p75_ms"),
    ("third_party_p75", "inp_third_party_p75_ms"),
)


def parts_csv(view: InpView) -> str:
    """The parts rows as CSV text (empty cells where a part has no samples, never 0)."""
    rows = [[asdict(row)[field] for field, _ in COLUMNS] for row in view.parts]
    return csv_text([name for _, name in COLUMNS], rows)
