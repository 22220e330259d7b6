"""OTLP log records → `log` lines: ids of the wrong length refused alone and counted (empty ids are fine), the
resource's and the record's attributes (the record's win), a structured body as JSON text, trims named in
`stacklens.trimmed`, and the resource's service, release and environment."""

from __future__ import annotations

from typing import Any

import orjson
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.resource.v1.resource_pb2 import Resource

from stacklens.ingest.otlp.decode import LogBatch, LogExport
from stacklens.ingest.otlp.logs import TRIMMED_ATTRIBUTE, LogLines, log_lines

NOW_NS = 1_764_041_700_000_000_000


def _text(key: str, text: str) -> KeyValue:
    return KeyValue(key=key, value=AnyValue(string_value=text))


def _record(body: str, **fields: Any) -> LogRecord:
    record = LogRecord(time_unix_nano=NOW_NS, severity_number=9, severity_text="INFO", **fields)
    record.body.string_value = body
    return record


def _lines(*records: LogRecord, resource: list[KeyValue] | None = None) -> LogLines:
    resource_attrs = resource if resource is not None else [_text("service.name", "billing")]
    batch = LogBatch(Resource(attributes=resource_attrs), "billing.jobs", list(records))
    return log_lines(LogExport([batch]), "stacklens_app_x")


def _payloads(made: LogLines) -> list[dict[str, Any]]:
    return [orjson.loads(line)["payload"] for line in made.lines]


def test_ids_of_the_wrong_length_are_refused_alone() -> None:
    made = _lines(
        _record("no ids"),
        _record("linked", trace_id=bytes(range(1, 17)), span_id=bytes(range(1, 9))),
        _record("short trace", trace_id=b"\x01\x02\x03\x04"),
        _record("long span", span_id=b"\x01" * 9),
    )
    assert [p["body"] for p in _payloads(made)] == ["no ids", "linked"]
    assert _payloads(made)[1]["trace_id"] == bytes(range(1, 17)).hex()
    assert made.rejected_records == 2
    assert "log record 2 of scope 'billing.jobs': trace_id is 4 bytes" in made.reasons[0]
    assert "log record 3 of scope 'billing.jobs': span_id is 9 bytes" in made.reasons[1]
    assert made.labels == ["log record 0 of scope 'billing.jobs'", "log record 1 of scope 'billing.jobs'"]


def test_attributes_body_trims_and_the_resource() -> None:
    deep = AnyValue(string_value="leaf")
    for _ in range(7):
        deep = AnyValue(array_value=ArrayValue(values=[deep]))
    record = _record("", attributes=[_text("service.name", "ignored-here"), _text("user", "u1")])
    record.attributes.add(key="path", value=deep)
    record.body.CopyFrom(
        AnyValue(
            kvlist_value=KeyValueList(
                values=[
                    KeyValue(key="event", value=AnyValue(string_value="paid")),
                    KeyValue(key="ratio", value=AnyValue(double_value=float("inf"))),
                ]
            )
        )
    )
    resource = [
        _text("service.name", "billing"),
        _text("service.version", "2.0.1"),
        _text("deployment.environment", "staging"),
        _text("host.name", "h" * 9000),
    ]
    [payload] = _payloads(_lines(record, resource=resource))
    assert payload["body"] == '{"event":"paid","ratio":"Infinity"}'
    attributes = payload["attributes"]
    assert attributes["user"] == "u1" and attributes["otel.scope.name"] == "billing.jobs"
    assert attributes["service.name"] == "ignored-here", "the record's attribute wins over the resource's"
    assert len(attributes["host.name"]) == 8192
    assert attributes[TRIMMED_ATTRIBUTE] == "resource.host.name,attributes.path[0][0][0][0][0]"
    assert (payload["service"], payload["release"], payload["environment"]) == ("billing", "2.0.1", "staging")
    assert (payload["timestamp"], payload["severity_number"], payload["source"]) == (NOW_NS / 1e9, 9, "otlp")


def test_a_record_without_times_or_body_is_kept_for_the_service_to_time() -> None:
    record = LogRecord(severity_text="warn")
    [payload] = _payloads(_lines(record))
    assert payload["timestamp"] is None and payload["observed_timestamp"] is None and payload["body"] == ""
    assert _lines(record).lines == _lines(record).lines, "the same export makes the same lines"
