"""The trace page's spans as data for its windowed waterfall: one list per span in tree order, flags for the
critical path, orphans, failures and page loads, errors and log records placed in their span, times written
by the metrics layer; in the page, a span's text cannot close the data block (json_block escapes it)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from dashboards.rendering import json_block
from dashboards.trace_rows import CRITICAL, FAILED, FIELDS, ORPHAN, PAGELOAD, orphan_start, trace_data
from stacklens.traces.reads import Trace, TraceError, TraceLog, TraceService
from stacklens.traces.tree import SpanRow, build_tree


def _trace() -> Trace:
    at = 1_700_000_000_000
    rows = [
        SpanRow("a" * 16, "", 1, "e-1", True, at, 120.0, "pageload", "/cart", "ok", 0, "", "", "", "javascript"),
        SpanRow("b" * 16, "a" * 16, 2, "e-2", True, at + 5, 80.0, "http.server", "POST /api", "ok", 500, "api",
                "", ""),
        SpanRow("c" * 16, "b" * 16, 2, "e-2", False, at + 10, 30.5, "db", '</script><img src=x>', "ok", 0,
                "api", "", ""),
        SpanRow("d" * 16, "f" * 16, 2, "e-3", False, at + 50, 4.0, "smtp", "RCPT", "internal_error", 0, "mailer",
                "", ""),
    ]  # fmt: skip
    tree = build_tree(rows, {1: "web", 2: "shop"})
    assert tree is not None
    services = [TraceService(s, i, 1, (1,)) for i, s in enumerate(["web (browser)", "api", "mailer"])]
    at_dt = datetime.now(UTC)
    errors = [TraceError("ev", 2, 7, "ZeroDivisionError", "error", at_dt, "c" * 16)]
    logs = [TraceLog(at_dt, "info", "hello", "c" * 16, "api", 2)] * 2
    return Trace("f" * 32, tree, services, errors, logs, [], False)


def test_each_span_is_a_row_of_data_in_tree_order() -> None:
    trace = _trace()
    data = trace_data(trace, {1: "web", 2: "shop"}, "acme")
    rows = [dict(zip(FIELDS, r, strict=True)) for r in data["rows"]]
    assert [r["span_id"][0] for r in rows] == ["a", "b", "c", "d"]
    assert data["orphanStart"] == 3 == orphan_start(trace.spans)
    assert data["services"] == ["web (browser)", "api", "mailer"] and data["projects"] == ["web", "shop"]
    page, server, query, orphan = rows
    assert page["flags"] & PAGELOAD and page["flags"] & CRITICAL and page["transaction_event_id"] == "e-1"
    assert server["flags"] & FAILED and server["transaction_event_id"] == "" and server["depth"] == 1
    assert query["errors"] == [[7, "ZeroDivisionError"]] and query["logs"] == 2 and query["project"] == 1
    assert (query["start_text"], query["duration_text"]) == ("10.0 ms", "30.5 ms")
    assert orphan["flags"] & ORPHAN and orphan["flags"] & FAILED and orphan["parent_span_id"] == "f" * 16
    assert server["parent_span_id"] == "", "a row's parent is the row it is under"
    assert data["total"] == 120.0 and data["trace"] == "f" * 32 and data["org"] == "acme"

    block = str(json_block(data))
    assert "</script>" not in block and "<img" not in block
    assert json.loads(block)["rows"][2][FIELDS.index("description")] == "</script><img src=x>"
