"""OTLP/HTTP trace bodies read into OpenTelemetry's own protobuf messages, whichever form they came in.

Protobuf bodies (``application/x-protobuf``) are parsed whole by the generated classes of
``opentelemetry-proto``. JSON bodies (``application/json``) follow the OTLP JSON mapping, which differs from
protobuf's canonical JSON in one way that matters: trace and span ids are hex, not base64. They pass the depth
guard first, then each span is read into a ``Span`` message on its own, so one malformed span (a bad id, a
field of the wrong type) is rejected alone and named, while the rest of the export lands. Unknown fields are
ignored, as the OTLP specification asks of receivers.

What one export may cost is bounded before its spans are converted: counting the spans of a parsed request
is cheap (the lengths of its repeated fields), converting them is not (330,000 spans of one trace took 14 s
and 1.2 GB before being refused). An export of more than :data:`MAX_SPANS_PER_EXPORT` spans (or
:data:`MAX_RECORDS_PER_EXPORT` log records) is a 413 before any is converted; a trace with more than
:data:`MAX_SPANS_PER_TRACE` spans in one export keeps its first ones and the rest are refused, counted, in
``partial_success``. Large bodies are decoded at most :data:`LARGE_DECODES` at a time
(:func:`large_decode_slot`): the parse itself costs about six times the body.
"""

from __future__ import annotations

import base64
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError as ProtobufDecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from stacklens.errors import Unavailable
from stacklens.ingest.decode import decode_error
from stacklens.ingest.jsondepth import MAX_JSON_DEPTH, JsonTooDeep, loads

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
# Fields of the JSON mapping that hold ids as hex (OTLP spec, "JSON Protobuf Encoding").
_HEX_ID_FIELDS = ("traceId", "spanId", "parentSpanId")
# OpenTelemetry's SDKs export at most 512 spans a request and the Collector's batch processor 8,192 by
# default; 10,000 leaves room for both and keeps one export's conversion under a second and ~100 MiB.
MAX_SPANS_PER_EXPORT = 10_000
MAX_RECORDS_PER_EXPORT = 10_000
# A trace's spans beyond this in one export are refused (a transaction keeps 2,000 spans per local root
# anyway).
MAX_SPANS_PER_TRACE = 5_000
# Bodies of at least 1 MiB (inflated) are decoded two at a time: a 20 MiB protobuf costs ~120 MiB to parse.
LARGE_BODY_BYTES = 1024 * 1024
LARGE_DECODES = 2
LARGE_DECODE_WAIT_S = 5.0
_large_decodes = threading.BoundedSemaphore(LARGE_DECODES)


class DecodeBusy(Unavailable):
    """Every large-decode slot stayed taken for :data:`LARGE_DECODE_WAIT_S` (answered 503 with
    Retry-After)."""


@contextmanager
def large_decode_slot(size: int) -> Iterator[None]:
    """Hold one of :data:`LARGE_DECODES` slots while decoding a body of ``size`` bytes, if it is large."""
    if size < LARGE_BODY_BYTES:
        yield
        return
    if not _large_decodes.acquire(timeout=LARGE_DECODE_WAIT_S):
        raise DecodeBusy(
            f"{LARGE_DECODES} large OTLP exports are being decoded already; retry in a few seconds"
        )
    try:
        yield
    finally:
        _large_decodes.release()


def _too_many(count: int, what: str, limit: int) -> Exception:
    return decode_error(
        413, f"the export holds {count} {what}; at most {limit} are accepted per export: send smaller batches"
    )


@dataclass
class SpanBatch:
    """The spans of one resource (and one instrumentation scope), as the export grouped them."""

    resource: Resource
    scope_name: str
    spans: list[Span]


@dataclass
class TraceExport:
    """What an export request holds: its spans by resource, and the spans that could not even be read."""

    batches: list[SpanBatch] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # why, one entry per unreadable span
    refused: list[tuple[int, str]] = field(default_factory=list)  # (spans, why): read but over a bound

    @property
    def span_count(self) -> int:
        return (
            sum(len(batch.spans) for batch in self.batches)
            + len(self.rejected)
            + sum(n for n, _ in self.refused)
        )


class _TraceBound:
    """Keeps at most :data:`MAX_SPANS_PER_TRACE` spans of each trace; counts the rest per trace."""

    def __init__(self) -> None:
        self.seen: Counter[bytes | str] = Counter()

    def keep(self, trace_id: bytes | str) -> bool:
        self.seen[trace_id] += 1
        return self.seen[trace_id] <= MAX_SPANS_PER_TRACE

    def refused(self) -> list[tuple[int, str]]:
        return [
            (
                n - MAX_SPANS_PER_TRACE,
                f"trace {t.hex() if isinstance(t, bytes) else t}: more than {MAX_SPANS_PER_TRACE} spans in one "
                "export; the rest were refused",
            )
            for t, n in self.seen.items()
            if n > MAX_SPANS_PER_TRACE
        ]


@dataclass
class LogBatch:
    """The log records of one resource (and one instrumentation scope), as the export grouped them."""

    resource: Resource
    scope_name: str
    records: list[LogRecord]


@dataclass
class LogExport:
    """What a logs export holds: its records by resource, and the records that could not even be read."""

    batches: list[LogBatch] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # why, one entry per unreadable record


def media_type(content_type: str | None) -> str:
    """``application/x-protobuf`` or ``application/json`` (415 for anything else)."""
    media = (content_type or "").partition(";")[0].strip().lower()
    if media in (PROTOBUF, JSON):
        return media
    raise decode_error(
        415, f"unsupported Content-Type {media or '(none)'!r}; OTLP/HTTP sends {PROTOBUF} or {JSON}"
    )


def read_traces(raw: bytes, media: str) -> TraceExport:
    """The export in ``raw`` (already inflated); 400 when the body as a whole is unreadable."""
    if media == PROTOBUF:
        return _from_protobuf(raw)
    return _from_json(raw)


def _from_protobuf(raw: bytes) -> TraceExport:
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(raw)
    except (ProtobufDecodeError, RecursionError) as exc:
        raise decode_error(
            400, f"the body is not an OTLP ExportTraceServiceRequest (protobuf): {exc}"
        ) from None
    count = sum(len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans)
    if count > MAX_SPANS_PER_EXPORT:
        del request  # not kept alive by the error's traceback
        raise _too_many(count, "spans", MAX_SPANS_PER_EXPORT)
    export, bound = TraceExport(), _TraceBound()
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            spans = [span for span in scope_spans.spans if bound.keep(span.trace_id)]
            export.batches.append(SpanBatch(resource_spans.resource, scope_spans.scope.name, spans))
    export.refused = bound.refused()
    return export


def _from_json(raw: bytes) -> TraceExport:
    export, bound = TraceExport(), _TraceBound()
    for resource, scope_name, where, items in _json_scopes(raw, _TRACES_JSON):
        batch = SpanBatch(resource, scope_name, [])
        for i, item in enumerate(items):
            trace_id = item.get("traceId") if isinstance(item, dict) else None
            if isinstance(trace_id, str) and not bound.keep(trace_id.lower()):
                continue
            try:
                batch.spans.append(_json_span(item))
            except ValueError as exc:
                export.rejected.append(f"{where}.spans[{i}]: {exc}")
        export.batches.append(batch)
    export.refused = bound.refused()
    return export


@dataclass(frozen=True)
class _JsonShape:
    """How an OTLP JSON export of one signal nests its items: resources, then scopes, then the items."""

    request: str  # the message the body is, for the error naming it
    resources: str
    scopes: str
    items: str
    what: str  # the items in words, for the 413
    limit: int


_TRACES_JSON = _JsonShape(
    "ExportTraceServiceRequest", "resourceSpans", "scopeSpans", "spans", "spans", MAX_SPANS_PER_EXPORT
)
_LOGS_JSON = _JsonShape(
    "ExportLogsServiceRequest",
    "resourceLogs",
    "scopeLogs",
    "logRecords",
    "log records",
    MAX_RECORDS_PER_EXPORT,
)


def _json_scopes(raw: bytes, shape: _JsonShape) -> Iterator[tuple[Resource, str, str, list[Any]]]:
    """Each scope of an OTLP JSON export: its resource, its scope's name, where it is (for the messages naming
    an item) and its items as sent. 400 naming the place when the body, a resource or a scope is not what OTLP
    says; 413 when the export holds more than ``shape.limit`` items, before any is read."""
    try:
        body = loads(raw, MAX_JSON_DEPTH, where="the OTLP JSON body")
    except JsonTooDeep as exc:
        raise decode_error(400, str(exc)) from None
    except (ValueError, RecursionError) as exc:
        raise decode_error(400, f"the body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise decode_error(400, f"the body is not a JSON object (an {shape.request})")
    count = _json_count(body, shape.resources, shape.scopes, shape.items)
    if count > shape.limit:
        del body
        raise _too_many(count, shape.what, shape.limit)
    for r, resource_items in enumerate(_list(body, shape.resources, "the body")):
        where = f"{shape.resources}[{r}]"
        if not isinstance(resource_items, dict):
            raise decode_error(400, f"{where} is not an object")
        resource = Resource()
        try:
            json_format.ParseDict(resource_items.get("resource") or {}, resource, ignore_unknown_fields=True)
        except (json_format.ParseError, TypeError, ValueError) as exc:
            raise decode_error(400, f"{where}.resource: {_short(exc)}") from None
        for s, scope_items in enumerate(_list(resource_items, shape.scopes, where)):
            scope_where = f"{where}.{shape.scopes}[{s}]"
            if not isinstance(scope_items, dict):
                raise decode_error(400, f"{scope_where} is not an object")
            scope = scope_items.get("scope")
            scope_name = scope.get("name") if isinstance(scope, dict) else ""
            name = scope_name if isinstance(scope_name, str) else ""
            yield resource, name, scope_where, _list(scope_items, shape.items, scope_where)


def _json_count(body: dict[str, Any], outer: str, inner: str, leaf: str) -> int:
    """How many items an OTLP JSON body holds (its shape is checked, and named, when it is read)."""
    count = 0
    for resource in body.get(outer) or []:
        for scope in (resource.get(inner) or []) if isinstance(resource, dict) else []:
            items = scope.get(leaf) if isinstance(scope, dict) else None
            count += len(items) if isinstance(items, list) else 0
    return count if isinstance(body.get(outer), list) else 0


def read_logs(raw: bytes, media: str) -> LogExport:
    """The logs export in ``raw`` (already inflated); 400 when the body as a whole is unreadable."""
    if media == PROTOBUF:
        request = ExportLogsServiceRequest()
        try:
            request.ParseFromString(raw)
        except (ProtobufDecodeError, RecursionError) as exc:
            raise decode_error(
                400, f"the body is not an OTLP ExportLogsServiceRequest (protobuf): {exc}"
            ) from None
        count = sum(len(scope.log_records) for res in request.resource_logs for scope in res.scope_logs)
        if count > MAX_RECORDS_PER_EXPORT:
            del request
            raise _too_many(count, "log records", MAX_RECORDS_PER_EXPORT)
        export = LogExport()
        for resource_logs in request.resource_logs:
            for scope_logs in resource_logs.scope_logs:
                export.batches.append(
                    LogBatch(resource_logs.resource, scope_logs.scope.name, list(scope_logs.log_records))
                )
        return export
    return _logs_from_json(raw)


def _logs_from_json(raw: bytes) -> LogExport:
    export = LogExport()
    for resource, scope_name, where, items in _json_scopes(raw, _LOGS_JSON):
        batch = LogBatch(resource, scope_name, [])
        for i, item in enumerate(items):
            try:
                batch.records.append(_json_record(item))
            except ValueError as exc:
                export.rejected.append(f"{where}.logRecords[{i}]: {exc}")
        export.batches.append(batch)
    return export


def _json_record(item: Any) -> LogRecord:
    """One record of the JSON mapping as a ``LogRecord``; ``ValueError`` naming the field when it is not
    one."""
    if not isinstance(item, dict):
        raise ValueError("the log record is not an object")
    data = dict(item)
    for name in ("traceId", "spanId"):
        data[name] = _hex_to_base64(data.get(name), name)
    record = LogRecord()
    try:
        json_format.ParseDict(data, record, ignore_unknown_fields=True)
    except (json_format.ParseError, TypeError) as exc:
        raise ValueError(_short(exc)) from None
    return record


def _list(parent: dict[str, Any], name: str, where: str) -> list[Any]:
    value = parent.get(name)
    if value is None:
        return []
    if not isinstance(value, list):
        raise decode_error(400, f"{where}.{name} is not a list")
    return value


def _json_span(item: Any) -> Span:
    """One span of the JSON mapping as a ``Span`` message; ``ValueError`` naming the field when it is not
    one."""
    if not isinstance(item, dict):
        raise ValueError("the span is not an object")
    data = dict(item)
    for name in _HEX_ID_FIELDS:
        data[name] = _hex_to_base64(data.get(name), name)
    links = data.get("links")
    if isinstance(links, list):
        data["links"] = [
            {**link, **{k: _hex_to_base64(link.get(k), f"links.{k}") for k in ("traceId", "spanId")}}
            if isinstance(link, dict)
            else link
            for link in links
        ]
    span = Span()
    try:
        json_format.ParseDict(data, span, ignore_unknown_fields=True)
    except (json_format.ParseError, TypeError) as exc:
        raise ValueError(_short(exc)) from None
    return span


def _hex_to_base64(value: Any, name: str) -> str:
    if value is None or value == "":
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{name} is not a hex string")
    try:
        return base64.b64encode(bytes.fromhex(value)).decode("ascii")
    except ValueError:
        raise ValueError(f"{name} {value[:40]!r} is not hex") from None


def _short(exc: Exception) -> str:
    return str(exc).replace("\n", " ")[:300]


__all__ = [
    "JSON",
    "MAX_RECORDS_PER_EXPORT",
    "MAX_SPANS_PER_EXPORT",
    "MAX_SPANS_PER_TRACE",
    "PROTOBUF",
    "DecodeBusy",
    "LogBatch",
    "LogExport",
    "SpanBatch",
    "TraceExport",
    "large_decode_slot",
    "media_type",
    "read_logs",
    "read_traces",
]
