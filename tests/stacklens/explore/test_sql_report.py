"""A SQL widget in the dashboard's PDF: a table with every column and the time it took, a bar chart of the
plot the page draws, a number as its first cell (read back with pdftotext)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stacklens.explore.report_pdf import dashboard_pdf
from stacklens.explore.run import Result
from stacklens.explore.widgets import WidgetAnswer


def _answer(title: str, kind: str, columns: list[str], rows: list[list[Any]]) -> WidgetAnswer:
    result = Result(columns, [dict(zip(columns, r, strict=True)) for r in rows], [], 4_321, 12.5)
    return WidgetAnswer(0, {"title": title, "kind": kind, "sql": "SELECT …"}, result=result)


def test_sql_widgets_in_the_pdf(tmp_path: Path) -> None:
    rows = [["shop@1.0.0", 180], ["shop@1.1.0", 144]]
    answers = [
        _answer("Loads table", "table", ["release", "page_loads"], rows),
        _answer("Loads bars", "bar", ["release", "page_loads"], rows),
        _answer("Total loads", "number", ["page_loads"], [[324]]),
    ]
    now = datetime(2026, 11, 28, 12, tzinfo=UTC)
    pdf = dashboard_pdf("SQL board", "30d", answers, "http://x", now, lambda a: [a.widget["title"]])
    path = tmp_path / "sql.pdf"
    path.write_bytes(pdf)
    text = " ".join(
        subprocess.run(
            ["pdftotext", str(path), "-"], check=True, capture_output=True, text=True
        ).stdout.split()
    )
    assert "Loads table" in text and "release page_loads" in text and "shop@1.0.0 180" in text, text
    assert "SQL - 12.5 ms - 4,321 rows read" in text, text
    assert "Loads bars" in text and "shop@1.1.0" in text, text
    assert "Total loads: 324" in text, text
