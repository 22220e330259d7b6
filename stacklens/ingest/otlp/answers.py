"""The bodies OTLP/HTTP answers with, in the request's encoding (OTLP specification, "OTLP/HTTP Response").

- **200**: an ``Export<signal>ServiceResponse``; ``partial_success`` is left unset when everything landed, and
  set with the count of refused spans or log records and an ``error_message`` in English saying which and
  why (the first :data:`MAX_REASONS` reasons; the count stays exact, and the answer stays far under the 4 MiB
  the specification allows).
- **4xx / 5xx**: a ``google.rpc.Status`` with a developer-facing ``message``; a 400 carries a ``BadRequest``
  detail naming what could not be read, a 429 or 503 a ``RetryInfo`` with the delay ``Retry-After`` gives
  (the gRPC convention OTLP/gRPC uses for throttling). ``code`` is the gRPC code nearest the HTTP status; the
  specification leaves it to the server and clients do not act on it.

The server answers in the encoding the request used: protobuf for ``application/x-protobuf``, the OTLP JSON
mapping for ``application/json``. A request of another type (refused with 415) is answered in protobuf, OTLP's
default encoding.
"""

from __future__ import annotations

from typing import Literal

from google.protobuf import duration_pb2, json_format
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

from stacklens.ingest.otlp.decode import JSON, PROTOBUF

MAX_REASONS = 20  # reasons spelled out in partial_success.error_message (the count stays exact)
Signal = Literal["traces", "logs"]
# HTTP status → the gRPC code of the same meaning (google/rpc/code.proto's own mapping).
_CODES = {
    400: code_pb2.INVALID_ARGUMENT,
    401: code_pb2.UNAUTHENTICATED,
    403: code_pb2.PERMISSION_DENIED,
    404: code_pb2.NOT_FOUND,
    413: code_pb2.INVALID_ARGUMENT,
    415: code_pb2.INVALID_ARGUMENT,
    429: code_pb2.RESOURCE_EXHAUSTED,
    500: code_pb2.INTERNAL,
    503: code_pb2.UNAVAILABLE,
}
_REQUESTS = {"traces": "ExportTraceServiceRequest", "logs": "ExportLogsServiceRequest"}


def answer_media(content_type: str | None) -> str:
    """The encoding of the answer: JSON for a JSON request, else protobuf."""
    media = (content_type or "").partition(";")[0].strip().lower()
    return JSON if media == JSON else PROTOBUF


def encode(message: Message, media: str) -> bytes:
    if media == JSON:
        return json_format.MessageToJson(message, indent=None).encode()
    return message.SerializeToString()


def shown_reasons(reasons: list[str]) -> str:
    shown = "; ".join(reasons[:MAX_REASONS])
    if len(reasons) > MAX_REASONS:
        shown += f"; and {len(reasons) - MAX_REASONS} more"
    return shown


def export_answer(signal: Signal, media: str, rejected: int, reasons: list[str]) -> bytes:
    """The 200 body: ``partial_success`` only when something was refused."""
    if signal == "traces":
        traces = ExportTraceServiceResponse()
        if rejected or reasons:
            traces.partial_success.rejected_spans = rejected
            traces.partial_success.error_message = shown_reasons(reasons)
        return encode(traces, media)
    logs = ExportLogsServiceResponse()
    if rejected or reasons:
        logs.partial_success.rejected_log_records = rejected
        logs.partial_success.error_message = shown_reasons(reasons)
    return encode(logs, media)


def failure_status(
    signal: Signal, media: str, status: int, message: str, retry_after: str | None = None
) -> bytes:
    """The body of a 4xx / 5xx answer: a ``google.rpc.Status``."""
    answer = status_pb2.Status(code=_CODES.get(status, code_pb2.UNKNOWN), message=message)
    if status == 400:
        violation = error_details_pb2.BadRequest.FieldViolation(field=_REQUESTS[signal], description=message)
        answer.details.add().Pack(error_details_pb2.BadRequest(field_violations=[violation]))
    if status in (429, 503) and retry_after and retry_after.isdigit():
        delay = duration_pb2.Duration(seconds=int(retry_after))
        answer.details.add().Pack(error_details_pb2.RetryInfo(retry_delay=delay))
    return encode(answer, media)


__all__ = ["MAX_REASONS", "answer_media", "export_answer", "failure_status"]
