"""The PDF report's INP causes section: the parts per page with the INP page's numbers (as the catalog writes
them), the scripts with their party, and the browsers without data named."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

from pypdf import PdfReader

from stacklens.control.db import session_scope
from stacklens.control.projects import project_by_slug
from stacklens.metrics.formatting import format_value
from stacklens.performance.exports.pdf import build_pdf
from stacklens.performance.exports.report_data import report_data
from stacklens.performance.inp.reads import inp_view
from stacklens.settings import Settings
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance.inp import inp_seed as s
from tests.stacklens.performance.perf_seed import migrated


def test_the_report_has_the_inp_pages_numbers(settings: Settings, make_org) -> None:
    client = migrated(settings)
    org = make_org("Acme")
    at = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
    spans = [
        s.span(
            at + timedelta(seconds=i),
            "http://shop.test/cart",
            "button#buy",
            (40.0 + i, 260.0 + i, 12.0),
            [
                s.script("http://shop.test/a.js", 260.0 + i, "processing", "buy"),
                s.script("http://w.example/w.js", 40.0, "input_delay"),
            ],
        )
        for i in range(6)
    ]
    s.store(client, org["org_id"], org["project_id"], spans)
    s.refresh(client, *s.hour_range(at))
    filters = ViewFilters.parse(range="24h")
    with session_scope(settings) as session:
        project = project_by_slug(session, str(org["project"]))
        data = report_data(session, client, project, filters)
    whole = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(build_pdf(data))).pages)
    assert "INP causes" in whole and "Scripts in slow interactions" in whole
    page = next(r for r in inp_view(client, org["org_id"], org["project_id"], filters).parts if not r.target)
    processing = format_value("inp_processing_ms", page.processing_p75, None)
    assert "/cart 6 of 6" in whole and processing in whole, (processing, whole)
    assert "http://w.example/w.js" in whole and "third party" in whole
