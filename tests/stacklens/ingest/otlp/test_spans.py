"""What one span says (stacklens/ingest/otlp/spans.py): a span without a plausible start is placed at its
root's, and noted."""

from __future__ import annotations

from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.stacklens.ingest.otlp.otlp_seed import _lines, _payloads, _span


def test_a_span_without_a_plausible_start_is_placed_at_its_roots_and_noted() -> None:
    root = _span(1, kind=Span.SPAN_KIND_SERVER)
    unset = _span(2, 1)
    unset.start_time_unix_nano, unset.end_time_unix_nano = 0, 3_000_000
    far = _span(3, 1)
    far.start_time_unix_nano = 2**64 - 1  # the largest fixed64: year 2554
    [(_, payload)] = _payloads(_lines(root, unset, far))
    starts = [
        (s["start_timestamp"], round(s["timestamp"] - s["start_timestamp"], 6)) for s in payload["spans"]
    ]
    placed = root.start_time_unix_nano / 1e9
    assert starts == [(placed, 0.003), (placed, 0.0)], "placed at the root's start, durations kept"
    assert [(e["type"], e["name"], e["value"]) for e in payload["errors"]] == [
        ("invalid_timestamp", "spans.start_timestamp", "0"),
        ("invalid_timestamp", "spans.start_timestamp", str(2**64 - 1)),
    ]
