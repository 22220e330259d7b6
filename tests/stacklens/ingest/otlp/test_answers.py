"""OTLP/HTTP answers: partial success when something was refused, google.rpc.Status for failures, in the
request's encoding."""

from __future__ import annotations

import json

from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from stacklens.ingest.otlp.answers import MAX_REASONS, answer_media, export_answer, failure_status
from stacklens.ingest.otlp.decode import JSON, PROTOBUF


def test_the_answer_is_json_only_for_a_json_request() -> None:
    assert answer_media("application/json; charset=utf-8") == JSON
    assert answer_media("application/x-protobuf") == PROTOBUF
    assert answer_media(None) == PROTOBUF


def test_partial_success_counts_and_names_the_refusals() -> None:
    assert json.loads(export_answer("traces", JSON, 0, [])) == {}
    reasons = [f"span {i}: no name" for i in range(MAX_REASONS + 3)]
    answer = ExportTraceServiceResponse.FromString(export_answer("traces", PROTOBUF, 23, reasons))
    assert answer.partial_success.rejected_spans == 23
    assert answer.partial_success.error_message.endswith("; and 3 more")
    logs = json.loads(export_answer("logs", JSON, 1, ["record 0: body too large"]))
    assert logs == {"partialSuccess": {"rejectedLogRecords": "1", "errorMessage": "record 0: body too large"}}


def test_failures_are_a_status_with_details() -> None:
    bad = status_pb2.Status.FromString(failure_status("logs", PROTOBUF, 400, "not a protobuf message"))
    assert bad.code == code_pb2.INVALID_ARGUMENT and bad.message == "not a protobuf message"
    violation = error_details_pb2.BadRequest()
    assert bad.details[0].Unpack(violation)
    assert violation.field_violations[0].field == "ExportLogsServiceRequest"
    limited = status_pb2.Status.FromString(failure_status("traces", PROTOBUF, 429, "Rate Limited", "30"))
    retry = error_details_pb2.RetryInfo()
    assert limited.code == code_pb2.RESOURCE_EXHAUSTED and limited.details[0].Unpack(retry)
    assert retry.retry_delay.seconds == 30
    assert json.loads(failure_status("traces", JSON, 418, "teapot"))["code"] == code_pb2.UNKNOWN
