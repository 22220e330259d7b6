"""The catalog's Markdown table: one row per metric, in the catalog's order, between its markers."""

from __future__ import annotations

import subprocess
import sys

from stacklens.metrics.catalog import CATALOG
from stacklens.metrics.formatting import format_value
from stacklens.metrics.reference import BEGIN, END, HEADER, example, markdown_table


def test_one_row_per_metric_between_the_markers() -> None:
    lines = markdown_table().split("\n")
    assert lines[0] == BEGIN and lines[-1] == END and tuple(lines[1:3]) == HEADER
    rows = lines[3:-1]
    assert [row.split(" | ")[0].removeprefix("| ").strip("`") for row in rows] == list(CATALOG)
    assert all(row.count(" | ") == HEADER[0].count(" | ") for row in rows)


def test_examples_are_written_as_the_product_writes_them() -> None:
    lcp = next(m for m in CATALOG.values() if m.unit.key == "ms")
    assert example(lcp) == format_value(lcp.key, 2004.9)


def test_the_module_prints_the_table() -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "stacklens.metrics.reference"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert printed == markdown_table() + "\n"
