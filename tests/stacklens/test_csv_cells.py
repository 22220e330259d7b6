"""CSV cells a spreadsheet shows as text and never runs as a formula, numbers left as numbers."""

from __future__ import annotations

import csv
import io
from datetime import UTC, date, datetime
from decimal import Decimal

import polars as pl
import pytest

from stacklens.csv_cells import cell, csv_text, neutralise, neutralise_frame, to_csv


@pytest.mark.parametrize("text", ['=cmd|"/c calc"!A1', "+1", "-5", "@SUM(A1)", "\t=1", "\r=1"])
def test_a_formula_start_is_escaped(text: str) -> None:
    assert neutralise(text) == "'" + text


def test_cells_of_each_type() -> None:
    assert [cell(None), cell(-5), cell(2.5), cell(True), cell(Decimal("1.10"))] == [
        "",
        -5,
        2.5,
        True,
        Decimal("1.10"),
    ]
    assert cell("-5") == "'-5" and cell("/checkout") == "/checkout"
    assert cell(["=a", 1]) == '["=a", 1]' and cell({"k": "v"}) == '{"k": "v"}'
    assert cell(datetime(2026, 11, 20, 12, tzinfo=UTC)) == "2026-11-20T12:00:00+00:00"
    assert cell(date(2026, 11, 20)) == "2026-11-20"


def test_csv_text_from_mappings_or_sequences() -> None:
    text = csv_text(["page", "p75"], [{"page": "=HYPERLINK(1)", "p75": 1800}, ["/a, b", None], {"p75": -1}])
    assert list(csv.reader(io.StringIO(text))) == [
        ["page", "p75"],
        ["'=HYPERLINK(1)", "1800"],
        ["/a, b", ""],
        ["", "-1"],
    ]


def test_a_frames_text_columns_only() -> None:
    frame = pl.DataFrame({"release": ["=1+1", "shop@1.0", None], "delta": [-5, 3, 0]})
    assert neutralise_frame(frame).to_dict(as_series=False) == {
        "release": ["'=1+1", "shop@1.0", None],
        "delta": [-5, 3, 0],
    }


def test_csv_of_rows() -> None:
    assert to_csv([]) == ""
    text = to_csv(
        [{"page": "=cmd", "p75": 1800.5, "days": [1, 2]}, {"page": "/cart", "p75": None, "days": []}]
    )
    assert list(csv.reader(io.StringIO(text))) == [
        ["page", "p75", "days"],
        ["'=cmd", "1800.5", "[1, 2]"],
        ["/cart", "", "[]"],
    ]
