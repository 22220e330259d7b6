"""The INP parts CSV: columns named with their unit, a part without samples an empty cell (never 0), and a
target that looks like a formula neutralised."""

from __future__ import annotations

import csv
import io

from stacklens.performance.inp.reads import InpView, PartRow
from stacklens.performance.inp.table import parts_csv


def test_parts_csv() -> None:
    row = PartRow("/cart", "=HYPERLINK(1)", "click", 3, 0, 0, 240.0, None, None, None, None)
    parsed = list(csv.DictReader(io.StringIO(parts_csv(InpView([row], [], [], [], 0.0)))))
    assert parsed == [
        {
            "page": "/cart",
            "target": "'=HYPERLINK(1)",
            "type": "click",
            "interactions": "3",
            "attributed": "0",
            "with_scripts": "0",
            "inp_p75_ms": "240.0",
            "inp_input_delay_p75_ms": "",
            "inp_processing_p75_ms": "",
            "inp_presentation_p75_ms": "",
            "inp_third_party_p75_ms": "",
        }
    ]
