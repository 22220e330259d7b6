"""A trace as the API answers it: spans in tree order with their project's slug, the errors and log records
tied to the span they were written in, the critical path's span ids, times in ISO 8601 UTC."""

from __future__ import annotations

from datetime import UTC, datetime

from stacklens.traces.answers import trace_out
from stacklens.traces.reads import Trace, TraceError, TraceLog, TraceReplay, trace_services
from stacklens.traces.tree import SpanRow, build_tree

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _row(sid: str, parent: str, service: str, project: int) -> SpanRow:
    return SpanRow(sid, parent, project, "4c2f0d8e-0000-4000-8000-000000000001", not parent, int(T0.timestamp() * 1000), 10.0, "op",
                   sid, "ok", 0, service, "1.0", "production")  # fmt: skip


def test_answer_ties_errors_and_logs_to_their_spans() -> None:
    tree = build_tree([_row("a", "", "", 1), _row("b", "a", "shop", 2)], {1: "web", 2: "api"})
    assert tree is not None
    trace = Trace(
        trace_id="f" * 32,
        tree=tree,
        services=trace_services(tree.spans),
        errors=[TraceError("e1", 2, 7, "ValueError", "error", T0, "b")],
        logs=[TraceLog(T0, "info", "hi", "b", "shop", 2), TraceLog(T0, "info", "x", "zz", "shop", 2)],
        replays=[TraceReplay("r" * 32, 1)],
        truncated=False,
    )
    out = trace_out(trace, {1: "web", 2: "api"})
    assert [s["span_id"] for s in out["spans"]] == ["a", "b"]
    assert [(s["service"], s["project"]) for s in out["spans"]] == [("web", "web"), ("shop", "api")]
    assert out["spans"][1]["error_ids"] == ["e1"] and out["spans"][1]["log_count"] == 1
    assert out["spans"][0]["transaction_event_id"] == "4c2f0d8e000040008000000000000001"
    assert out["start"] == "2026-11-20T12:00:00Z" and out["critical_path"] == ["a", "b"]
    assert [s["name"] for s in out["services"]] == ["web", "shop"]
    assert out["replays"] == [{"replay_id": "r" * 32, "project": "web"}]
