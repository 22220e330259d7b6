"""A table as CSV: its columns named with their unit, nested values as JSON, formulas defused, sent in
chunks."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import polars as pl

from stacklens.performance.exports.tables import Table, csv_column
from stacklens.performance.exports.tabular import csv_chunks, frame

PAGES = Table(
    "pages",
    "Pages",
    ("page", "p75_lcp_ms", "releases", "last_seen"),
    lambda data: data["pages"],
)


def test_a_frame_has_exactly_the_tables_columns() -> None:
    data = {
        "pages": [
            {
                "page": "=HYPERLINK(1)",
                "p75_lcp_ms": 2400,
                "releases": ["1.0", "1.1"],
                "last_seen": datetime(2026, 11, 20, tzinfo=UTC),
                "extra": 1,
            },
            {"page": "/cart", "p75_lcp_ms": 1800.5, "releases": None, "last_seen": None},
        ]
    }
    df = frame(PAGES, data)
    assert df.columns == [csv_column(c) for c in PAGES.columns]
    assert df.row(0) == ("'=HYPERLINK(1)", 2400.0, '["1.0", "1.1"]', "2026-11-20T00:00:00.000Z")
    assert df.row(1) == ("/cart", 1800.5, None, None)
    empty = frame(PAGES, {"pages": []})
    assert empty.height == 0 and set(empty.schema.values()) == {pl.String}


def test_chunks_are_the_header_then_rows() -> None:
    df = pl.DataFrame({"page": [f"/p{i}" for i in range(5)], "loads": list(range(5))})
    chunks = list(csv_chunks(df, chunk_rows=2))
    assert len(chunks) == 4 and chunks[0] == b"page,loads\n"
    assert list(csv.reader(io.StringIO(b"".join(chunks).decode()))) == [["page", "loads"]] + [
        [f"/p{i}", str(i)] for i in range(5)
    ]
