"""OTLP/HTTP bodies → OpenTelemetry's messages: protobuf and the OTLP JSON mapping (hex ids in any case,
64-bit numbers as text or numbers), unknown fields ignored at every level in both, a malformed span or log
record refused alone with its reason, an unreadable body refused whole (400), an unknown type 415."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from stacklens.ingest.decode import DecodeError
from stacklens.ingest.otlp.decode import JSON, PROTOBUF, media_type, read_logs, read_traces

TRACE = "5b8efff798038103d269b633813fc60c"


def _unknown_field(number: int, value: int) -> bytes:
    """A varint field of a number no OTLP message defines, as a newer sender would add one."""
    out, tag = b"", number << 3
    for part in (tag, value):
        while True:
            byte, part = part & 0x7F, part >> 7
            out += bytes([byte | (0x80 if part else 0)])
            if not part:
                break
    return out


def _span(span_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "traceId": TRACE,
        "spanId": span_id,
        "name": "GET /cart",
        "kind": 2,
        "startTimeUnixNano": "1764041700000000000",
        "endTimeUnixNano": 1764041700250000000,  # a number works as well as text
        **extra,
    }


def test_protobuf_unknown_fields_are_ignored() -> None:
    request = ExportTraceServiceRequest()
    span = request.resource_spans.add().scope_spans.add().spans.add()
    span.trace_id, span.span_id, span.name = bytes.fromhex(TRACE), bytes.fromhex("eee19b7ec3c1b174"), "GET"
    span.MergeFromString(_unknown_field(990, 7))
    body = request.SerializeToString() + _unknown_field(991, 1)
    export = read_traces(body, PROTOBUF)
    assert [s.name for s in export.batches[0].spans] == ["GET"] and export.rejected == []


def test_json_unknown_fields_upper_case_hex_and_a_bad_span_refused_alone() -> None:
    body = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "cart"}}],
                    "newResourceField": 1,
                },
                "scopeSpans": [
                    {
                        "scope": {"name": "manual", "futureScopeField": True},
                        "spans": [
                            _span("EEE19B7EC3C1B174", futureSpanField={"a": 1}),
                            _span("eee19b7ec3c1b175", startTimeUnixNano={"not": "a number"}),
                            _span("eee19b7ec3c1b176", traceId=42),
                            _span("zz", name="not hex"),
                            "not an object",
                        ],
                        "futureScopeSpansField": [],
                    }
                ],
            }
        ],
        "futureRequestField": "ignored",
    }
    export = read_traces(json.dumps(body).encode(), JSON)
    spans = export.batches[0].spans
    assert [s.span_id.hex() for s in spans] == ["eee19b7ec3c1b174"]
    assert spans[0].kind == Span.SPAN_KIND_SERVER and spans[0].end_time_unix_nano == 1764041700250000000
    assert export.batches[0].resource.attributes[0].value.string_value == "cart"
    reasons = export.rejected
    assert len(reasons) == 4
    assert (
        reasons[0].startswith("resourceSpans[0].scopeSpans[0].spans[1]:")
        and "startTimeUnixNano" in reasons[0]
    )
    assert "traceId is not a hex string" in reasons[1]
    assert "spanId 'zz' is not hex" in reasons[2]
    assert "not an object" in reasons[3]


def test_logs_in_both_encodings_with_unknown_fields() -> None:
    request = ExportLogsServiceRequest()
    record = request.resource_logs.add().scope_logs.add().log_records.add()
    record.body.string_value = "paid"
    record.MergeFromString(_unknown_field(995, 3))
    export = read_logs(request.SerializeToString() + _unknown_field(996, 2), PROTOBUF)
    assert [r.body.string_value for r in export.batches[0].records] == ["paid"]
    body = {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            {"body": {"stringValue": "ok"}, "eventName": "x", "somethingNew": [1]},
                            {"body": {"stringValue": "bad"}, "timeUnixNano": "soon"},
                            {"body": {"stringValue": "bad id"}, "traceId": "xyz"},
                        ]
                    }
                ]
            }
        ]
    }
    export = read_logs(json.dumps(body).encode(), JSON)
    assert [r.body.string_value for r in export.batches[0].records] == ["ok"]
    assert len(export.rejected) == 2 and "timeUnixNano" in export.rejected[0]
    assert "traceId 'xyz' is not hex" in export.rejected[1]


@pytest.mark.parametrize(
    ("body", "media", "words"),
    [
        (b"\xff\xff\xff garbage", PROTOBUF, "ExportTraceServiceRequest"),
        (b"{not json", JSON, "not JSON"),
        (b"[1, 2]", JSON, "not a JSON object"),
        (b'{"resourceSpans": {"a": 1}}', JSON, "resourceSpans is not a list"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": 3}]}]}', JSON, "spans is not a list"),
        (b'{"a":' * 100 + b"1" + b"}" * 100, JSON, "deeper than"),
    ],
)
def test_an_unreadable_body_is_refused_whole(body: bytes, media: str, words: str) -> None:
    with pytest.raises(DecodeError) as refused:
        read_traces(body, media)
    assert words in str(refused.value)


def test_media_types() -> None:
    assert media_type("application/x-protobuf") == PROTOBUF
    assert media_type("Application/JSON; charset=utf-8") == JSON
    with pytest.raises(DecodeError, match="unsupported Content-Type 'text/plain'"):
        media_type("text/plain")
