"""OTLP spans and exports for the tests of stacklens/ingest/otlp/traces.py and the modules it reads
(spans.py, trace_payloads.py): spans of one trace, an export of them, its lines as JSON."""

from __future__ import annotations

from typing import Any

import orjson
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from stacklens.ingest.otlp.decode import SpanBatch, TraceExport
from stacklens.ingest.otlp.traces import TraceLines, trace_lines

TRACE = bytes.fromhex("5b8efff798038103d269b633813fc60c")
START = 1_764_041_700_000_000_000


def _attr(key: str, value: Any) -> KeyValue:
    if isinstance(value, str):
        return KeyValue(key=key, value=AnyValue(string_value=value))
    if isinstance(value, float):
        return KeyValue(key=key, value=AnyValue(double_value=value))
    return KeyValue(key=key, value=AnyValue(int_value=value))


def _span(
    span_id: int, parent: int = 0, kind: int = Span.SPAN_KIND_INTERNAL, attrs: dict[str, Any] | None = None
) -> Span:
    return Span(
        trace_id=TRACE,
        span_id=span_id.to_bytes(8, "big"),
        parent_span_id=parent.to_bytes(8, "big") if parent else b"",
        name=f"span {span_id}",
        kind=kind,
        start_time_unix_nano=START + span_id * 1_000_000,
        end_time_unix_nano=START + span_id * 1_000_000 + 5_000_000,
        attributes=[_attr(k, v) for k, v in (attrs or {}).items()],
    )


def _lines(*spans: Span, service: str = "cart") -> TraceLines:
    resource = Resource(attributes=[_attr("service.name", service), _attr("service.version", "1.2.0")])
    return trace_lines(TraceExport([SpanBatch(resource, "manual", list(spans))]), "stacklens_app_x")


def _payloads(made: TraceLines) -> list[tuple[str, dict[str, Any]]]:
    lines = [orjson.loads(line) for line in made.lines]  # every line is JSON the ingest service reads
    return [(line["type"], line["payload"]) for line in lines]
