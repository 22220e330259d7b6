"""The PDF report read back: every section's heading and text, the numbers of the pages table equal to the
view's, budgets with their status, the filters, generation time and page numbers on each page, charts drawn
as paths (no image in the file), and poppler renders every page. Nothing of another organization shows."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pypdf import PdfReader

from stacklens.control import budgets
from stacklens.control.db import session_scope
from stacklens.control.projects import project_by_slug
from stacklens.metrics.formatting import format_value
from stacklens.performance import view_data
from stacklens.performance.budget_status import with_status
from stacklens.performance.exports.pdf import build_pdf, fmt
from stacklens.performance.exports.report_data import budget_rows, report_data
from stacklens.settings import Settings
from stacklens.view_filters import ViewFilters
from tests.module_stores import store_fixtures
from tests.stacklens.performance.perf_seed import NOW, migrated, seed

WINDOW = ViewFilters.parse(since="2026-11-06T12:00:00Z", until=NOW.isoformat())
SECTIONS = (
    "Summary",
    "Web vitals",
    "Budgets",
    "Pages",
    "Resources",
    "API endpoints",
    "Trends",
    "Release impact",
    "Recommendations",
)


# The tests read one report of two seeded organizations (one adds a budget the report was built before):
# stores of the module's own (tests/module_stores.py), seeded and reported once.
stores, org_factory = store_fixtures("pdf-report")


@pytest.fixture(scope="module")
def report(stores: Settings, org_factory):
    client = migrated(stores)
    acme, other = org_factory("Acme"), org_factory("Other", project="Other App")
    seed(client, int(acme["org_id"]), int(acme["project_id"]), loads=200, seed=3, facts=False)
    seed(client, int(other["org_id"]), int(other["project_id"]), loads=60, seed=4)
    with session_scope(stores) as session:
        project = project_by_slug(session, str(acme["project"]))
        budgets.create_budget(session, project, "lcp_ms", "*", 2500)
        budgets.create_budget(session, project, "load_time_ms", "/checkout", 1)
        data = report_data(session, client, project, WINDOW, now=datetime(2026, 11, 21, 8, 30, tzinfo=UTC))
        status = budget_rows(session, client, project, data.generated_at)
    return data, status, client, acme


def _text(pdf: bytes) -> tuple[PdfReader, list[str]]:
    reader = PdfReader(io.BytesIO(pdf))
    return reader, [page.extract_text() for page in reader.pages]


def test_report_sections_numbers_and_page_furniture(report, tmp_path: Path) -> None:
    data, status, client, acme = report
    pdf = build_pdf(data)
    assert pdf.startswith(b"%PDF-")
    reader, pages = _text(pdf)
    whole = "\n".join(pages)
    for section in SECTIONS:
        assert section in whole, section
    assert "Performance report: Web App" in whole
    for number, text in enumerate(pages, start=1):
        assert f"Page {number} of {len(pages)}" in text
        assert "generated 2026-11-21 08:30:00 UTC" in text
        assert "2026-11-06T12:00:00Z to 2026-11-20T12:00:00Z" in text
    # the pages table carries the view's numbers, row by row, as the page shows them
    rows = view_data.pages(client, int(acme["org_id"]), int(acme["project_id"]), WINDOW)["rows"]
    assert rows
    for row in rows:  # numbers as the catalog writes them (units included), as the pages show them
        avg = format_value("load_time_ms", row["load_avg"], "avg")
        p75 = format_value("load_time_ms", row["load_p75"], "p75")
        expected = f"{row['page']} {fmt(row['views'])} {avg} {p75}"
        assert any(line.startswith(expected) for line in whole.splitlines()), expected
    # budgets: both listed with the status the budgets page shows for the same moment
    assert [b["status"] for b in data.budgets] == [b["status"] for b in status]
    assert {b["status"] for b in status} <= {"pass", "fail", "insufficient data"}
    for budget in status:
        assert f"{budget['description']} {budget['statistic']}" in whole and budget["status"] in whole
    score = next(r for r in data.views["overview"]["rows"] if r["metric"] == "score")
    assert f"Performance score {fmt(score['value'])} of 100 over {score['samples']} page loads" in whole
    # charts are vector paths: no image anywhere, and the chart pages draw lines
    for page in reader.pages:
        resources = page.get("/Resources") or {}
        assert "/XObject" not in resources or not resources["/XObject"]
    content = reader.pages[0].get_contents().get_data().decode("latin-1")
    assert re.search(r"\d l\b", content) and " re" in content


def _bottom_lines(pdf: bytes) -> list[list[tuple[str, str]]]:
    """Per page, the lowest line of the body (above the footer) as (text, font) pieces."""
    out = []
    for page in PdfReader(io.BytesIO(pdf)).pages:
        pieces: list[tuple[float, str, str]] = []

        def visit(text: str, cm: list, tm: list, font: dict | None, size: float, sink: list = pieces) -> None:
            if text.strip():
                base = str((font or {}).get("/BaseFont", ""))
                sink.append((round(tm[5] * cm[3] + cm[5], 1), text.strip(), base))

        page.extract_text(visitor_text=visit)
        footer = min(y for y, _, _ in pieces)  # the footer: filters, generation time, page number
        body = [p for p in pieces if p[0] > footer + 5]
        lowest = min(y for y, _, _ in body)
        out.append([(t, f) for y, t, f in body if abs(y - lowest) < 1.0])
    return out


def test_no_page_ends_with_a_table_header_or_title(report) -> None:
    """Every page's last line is a row, a note or a chart's labels — never a header or a title left without
    its rows (bold: headers, titles and headings are the report's only bold text). Tables shifted down by
    one row at a time put each following table's header on every height of a page's bottom band."""
    data, *_ = report
    template = data.views["pages"]["rows"][0]
    for count in range(1, 31):
        rows = [{**template, "page": f"/p{i}"} for i in range(count)]
        shifted = replace(data, views={**data.views, "pages": {**data.views["pages"], "rows": rows}})
        for number, line in enumerate(_bottom_lines(build_pdf(shifted)), start=1):
            assert not any("Bold" in font for _, font in line), (count, number, line)


def test_endpoints_say_where_they_were_measured(report) -> None:
    data, *_ = report
    text = "\n".join(p.extract_text() for p in PdfReader(io.BytesIO(build_pdf(data))).pages)
    assert "client (browser)" in text and "Measured in" in text
    assert re.search(r"client \(browser\) GET /api/items/\{id\} [\d,]+ [\d,.]+ ms [\d,.]+ ms", text), text


def test_report_budgets_follow_the_budgets_evaluation(report, stores: Settings) -> None:
    data, _, client, acme = report
    with session_scope(stores) as session:
        project = project_by_slug(session, str(acme["project"]))
        budgets.create_budget(session, project, "ttfb_ms", "/nowhere", 800)  # a route without page loads
        rows = budget_rows(session, client, project, data.generated_at)
        expected = with_status(client, budgets.list_budgets(session, project), data.generated_at)
    assert [r["status"] for r in rows] == [str(e["status"]).replace("_", " ") for e in expected]
    assert [r["current"] for r in rows] == [e["current_value"] for e in expected]
    nowhere = next(r for r in rows if r["scope"] == "/nowhere")
    assert nowhere["status"] == "insufficient data" and nowhere["current"] is None  # no samples: never a pass
    assert nowhere["samples"] == 0


# `make test` installs poppler-utils; only a run outside it, away from CI, may lack pdftoppm.
@pytest.mark.skipif(
    shutil.which("pdftoppm") is None and not os.environ.get("CI"), reason="poppler-utils not installed"
)
def test_poppler_renders_every_page(report, tmp_path: Path) -> None:
    data, *_ = report
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(build_pdf(data))
    subprocess.run(["pdftoppm", "-r", "60", "-png", str(pdf), str(tmp_path / "page")], check=True, timeout=60)
    rendered = sorted(tmp_path.glob("page-*.png"))
    assert len(rendered) == len(PdfReader(str(pdf)).pages) >= 2
    assert all(p.stat().st_size > 5_000 for p in rendered)
    if os.environ.get("STACKLENS_SHOTS_DIR"):  # keep the pages to look at
        shots = Path(os.environ["STACKLENS_SHOTS_DIR"])
        shots.mkdir(parents=True, exist_ok=True)
        for png in rendered:
            shutil.copy(png, shots / f"seeded-report-{png.name}")


def test_a_missing_pdf_library_is_a_clear_message(report, monkeypatch) -> None:
    import sys

    from stacklens.errors import Unavailable

    data, *_ = report
    monkeypatch.setitem(sys.modules, "fpdf", None)  # as on an install without the server extra
    with pytest.raises(Unavailable, match=r"fpdf2 .*pip install 'stacklens\[server\]'"):
        build_pdf(data)
