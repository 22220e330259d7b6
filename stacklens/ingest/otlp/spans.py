"""What one OTLP span says (:mod:`stacklens.ingest.otlp.traces`): where it comes from (its resource: service,
release, environment, platform), its HTTP method, status, URL, op and description, and the Sentry span it
becomes under its transaction's root."""

from __future__ import annotations

from dataclasses import dataclass, field

from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from stacklens.ingest import timeparse
from stacklens.ingest.otlp.trace_payloads import (
    Attributes,
    SpanPayload,
)
from stacklens.ingest.otlp.values import MAX_VALUE_CHARS, Notes, attributes

_MAX_SPAN_SECONDS = 86_400.0  # a longer duration from an unset start is not a duration


# SDK language (telemetry.sdk.language) → the Sentry platform name (what in-app rules and titles read).
_PLATFORMS = {
    "python": "python",
    "java": "java",
    "nodejs": "node",
    "webjs": "javascript",
    "go": "go",
    "dotnet": "csharp",
    "ruby": "ruby",
    "php": "php",
    "rust": "rust",
    "cpp": "native",
    "swift": "cocoa",
    "erlang": "elixir",
}
_ERROR_STATUS = {
    400: "invalid_argument",
    401: "unauthenticated",
    403: "permission_denied",
    404: "not_found",
    409: "already_exists",
    429: "resource_exhausted",
    499: "cancelled",
    501: "unimplemented",
    503: "unavailable",
    504: "deadline_exceeded",
}


@dataclass
class SpanOrigin:
    """What a span's resource says about where it comes from."""

    service: str
    release: str
    environment: str
    platform: str
    host: str
    resource: Attributes


@dataclass
class SpanNode:
    span: Span
    origin: SpanOrigin
    attrs: Attributes
    notes: Notes

    # Read once per span: the op, the description and the status all ask for them.
    method: str = field(init=False)
    code: int | None = field(init=False)
    op: str = field(init=False)

    def __post_init__(self) -> None:
        self.method = _method(self.attrs)
        self.code = _status_code(self.attrs)
        self.op = _op(self.span, self.attrs, self.method)


def otlp_span_name(span: Span) -> str:
    return f"{span.name[:80]!r} (trace {span.trace_id.hex()[:32]}, span {span.span_id.hex()[:16]})"


def origin_of(resource: Resource) -> SpanOrigin:
    notes = Notes()
    attrs = attributes(resource.attributes, notes, "resource")

    def word(*keys: str, limit: int = 256) -> str:
        for key in keys:
            value = attrs.get(key)
            if isinstance(value, str) and value:
                return value[:limit]
        return ""

    language = word("telemetry.sdk.language", limit=32)
    return SpanOrigin(
        service=word("service.name", limit=31),
        release=word("service.version"),
        environment=word("deployment.environment.name", "deployment.environment", limit=128),
        platform=_PLATFORMS.get(language, "other"),
        host=word("host.name"),
        resource=attrs,
    )


def seconds_of(nanos: int) -> float:
    return nanos / 1e9


def first_str(attrs: Attributes, *keys: str) -> str:
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return ""


def _method(attrs: Attributes) -> str:
    method = first_str(attrs, "http.request.method", "http.method")
    if method == "_OTHER":
        method = first_str(attrs, "http.request.method_original") or method
    return method.upper()[:16]


def _status_code(attrs: Attributes) -> int | None:
    value = attrs.get("http.response.status_code", attrs.get("http.status_code"))
    try:
        code = int(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None
    return code if code is not None and 100 <= code <= 599 else None


def url_of(attrs: Attributes) -> str:
    full = first_str(attrs, "url.full", "http.url")
    if full:
        return full
    path = first_str(attrs, "url.path", "http.target")
    query = first_str(attrs, "url.query")
    host = first_str(attrs, "server.address", "http.host", "net.host.name")
    if not path:
        return ""
    target = f"{path}?{query}" if query and "?" not in path else path
    if not host:
        return target
    port = first_str(attrs, "server.port", "net.host.port")
    scheme = first_str(attrs, "url.scheme", "http.scheme") or "http"
    default = (scheme, port) in (("http", "80"), ("https", "443"))
    return f"{scheme}://{host}{'' if not port or default else ':' + port}{target}"


def sentry_status(span: Span, code: int | None) -> str:
    if code is not None and code >= 400:
        return _ERROR_STATUS.get(code, "internal_error" if code >= 500 else "invalid_argument")
    if span.status.code == Status.STATUS_CODE_ERROR:
        return "internal_error"
    return "ok"


def _op(span: Span, attrs: Attributes, method: str) -> str:
    has_http = bool(method)
    if span.kind == Span.SPAN_KIND_SERVER:
        return "http.server" if has_http else "rpc.server" if "rpc.system" in attrs else "server"
    if "db.system.name" in attrs or "db.system" in attrs:
        return "db"
    if span.kind == Span.SPAN_KIND_CLIENT and has_http:
        return "http.client"
    if "messaging.system" in attrs:
        return "queue.process" if span.kind == Span.SPAN_KIND_CONSUMER else "queue.publish"
    if "rpc.system" in attrs:
        return "rpc"
    return "function"


def _description(node: SpanNode) -> str:
    span, op, attrs = node.span, node.op, node.attrs
    if op == "db":
        return first_str(attrs, "db.query.text", "db.statement") or span.name
    if op == "http.client":
        return f"{node.method} {url_of(attrs) or span.name}"
    return span.name


def span_data(node: SpanNode) -> Attributes:
    data = dict(node.attrs)
    if node.span.status.message:
        data["otel.status_description"] = node.span.status.message[:MAX_VALUE_CHARS]
    data["otel.kind"] = Span.SpanKind.Name(node.span.kind).removeprefix("SPAN_KIND_").lower()
    return data


def _child_times(node: SpanNode, root: Span) -> tuple[float, float]:
    """A span's start and end in epoch seconds. A start no clock gives (unset, before 2000, after 2100) is
    the root's start, as the ingest service places a span outside the kept window, and the payload says so:
    without it the span would have no place in the waterfall."""
    span = node.span
    start, end = seconds_of(span.start_time_unix_nano), seconds_of(span.end_time_unix_nano)
    if timeparse.to_epoch(start) is not None:
        return start, max(start, end)
    node.notes.add(
        "invalid_timestamp",
        "spans.start_timestamp",
        value=str(span.start_time_unix_nano),
        span_id=span.span_id.hex(),
    )
    placed = seconds_of(root.start_time_unix_nano)
    duration = end - start if 0 <= end - start <= _MAX_SPAN_SECONDS else 0.0
    return placed, placed + duration


def span_payload(node: SpanNode, root: Span) -> SpanPayload:
    span = node.span
    start, end = _child_times(node, root)
    return {
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent_span_id": span.parent_span_id.hex(),
        "op": node.op,
        "description": _description(node),
        "start_timestamp": start,
        "timestamp": end,
        "status": sentry_status(span, node.code),
        "data": span_data(node),
        "origin": "otlp",
    }
