"""The trace page's rows: every value from a span escaped (event data is the sender's), bars placed by class,
badges for an orphan, an error, log records and a page load, far rows marked for deferred layout."""

from __future__ import annotations

from dashboards.trace_figures import Bar
from dashboards.trace_rows import NEAR_ROWS, span_rows
from stacklens.traces.reads import TraceError
from stacklens.traces.tree import SpanRow, TraceSpan


def _row(description: str, *, orphan: bool = False, op: str = "db") -> dict[str, object]:
    row = SpanRow("a1", "p0" if orphan else "", 1, "e-1", op == "pageload", 0, 12.5, op, description, "ok", 0,
                  '<b>svc</b>', "", "")  # fmt: skip
    span = TraceSpan(row=row, service='<b>svc</b>"', start_ms=3.0, orphan=orphan, critical=True)
    error = TraceError("ev", 1, 7, "<img src=x onerror=alert(1)>", "error", None, "a1")
    return {"span": span, "bar": Bar(4, 10), "colour_index": 12, "depth": "d2", "project": "web",
            "errors": [error], "logs": 2}  # fmt: skip


def test_rows_escape_span_data_and_place_bars_by_class() -> None:
    html = str(span_rows([_row('<script>alert("x")</script>', orphan=True)], "acme", "f" * 32))
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b>svc" not in html and "<img" not in html and "&lt;img" in html
    assert 'class="bar c2 x4 w10"' in html and "style=" not in html
    assert "orphan-badge" in html and "error-badge" in html and ">2 logs<" in html
    assert 'href="/orgs/acme/projects/web/issues/7"' in html and "trace-row critical orphan" in html
    page = str(span_rows([_row("GET /", op="pageload")], "acme", "f" * 32))
    assert "/performance/waterfall/e-1" in page
    many = str(span_rows([_row("q")] * (NEAR_ROWS + 1), "acme", "f" * 32))
    assert many.count(" far") == 1
