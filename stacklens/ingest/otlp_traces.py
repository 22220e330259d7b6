"""OTLP spans → the Sentry ``transaction`` and ``event`` log lines every other ingest road lands.

One code path (DESIGN §7.3): an export becomes log lines (DESIGN §4.1) that the ingest service prepares,
groups, deduplicates and writes like any SDK's, so an OpenTelemetry span is stored exactly as a Sentry
transaction's span is. What becomes what:

- A **local root** becomes a transaction: a span of kind SERVER or CONSUMER, a span without a parent, one
  whose parent is remote (the span flags say so) or one whose parent is not in the export. A SERVER span with
  HTTP attributes is an ``http.server`` transaction: method from ``http.request.method``, route from
  ``http.route`` (else the URL path, folded into a route template by
  :mod:`stacklens.ingest.route_templates`), status from ``http.response.status_code``.
- Every other span becomes a span of its nearest root ancestor (``db``, ``http.client``, …).
- A span event named ``exception`` becomes an error event, its stack read from ``exception.stacktrace``
  (:mod:`stacklens.ingest.otlp_stacks`), with the span's trace id in its trace context.
- The resource gives the service (``service.name``), release (``service.version``) and environment
  (``deployment.environment.name``, or the older ``deployment.environment``).

Ids are derived from the trace and span ids, so a resent export makes the same event ids and lands nothing
twice (the writer drops ids already stored). A span that cannot be stored (ids of the wrong length, the same
ids twice) is rejected alone, with its reason, for ``partial_success``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

import orjson
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from stacklens.ingest import timeparse
from stacklens.ingest.otlp_decode import TraceExport
from stacklens.ingest.otlp_stacks import Frame, parse_stack
from stacklens.ingest.otlp_values import MAX_VALUE_CHARS, Notes, attributes

# Event ids are name-based UUIDs in this namespace: the same trace and span give the same id on every resend.
_ID_NAMESPACE = uuid.UUID("6f1d3c2e-8a4b-5c7d-9e0f-a1b2c3d4e5f6")
MAX_SPANS_PER_TRANSACTION = (
    2000  # what a Sentry transaction's spans are cut to (stacklens.ingest.transactions)
)
_RAW_STACK_CHARS = 64 * 1024
_MAX_SPAN_SECONDS = 86_400.0  # a longer duration from an unset start is not a duration
_FLAG_HAS_IS_REMOTE = 0x100  # SpanFlags: the sender knows whether the parent is remote …
_FLAG_IS_REMOTE = 0x200  # … and it is
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
# A span's, an event's or a resource's attributes as JSON values (stacklens.ingest.otlp_values.attributes):
# their keys and values are the sender's.
Attributes = dict[str, Any]


class SpanIds(TypedDict):
    trace_id: str  # hex
    span_id: str
    parent_span_id: str  # "" for a root
    op: str


class TraceContext(SpanIds):
    """A transaction's ``contexts.trace``: its root span."""

    status: str
    data: Attributes
    origin: str


class SpanPayload(SpanIds):
    """One span of a transaction, as a Sentry SDK sends it (times in epoch seconds)."""

    description: str
    start_timestamp: float
    timestamp: float
    status: str
    data: Attributes
    origin: str


class RequestPayload(TypedDict):
    url: str
    method: str


class EventPayload(TypedDict):
    """What a transaction and an error event both carry; the resource's release, environment and host, and the
    trims made while reading the values (``errors``), only when there are some."""

    event_id: str
    timestamp: float
    platform: str
    transaction: str
    tags: dict[str, str]
    request: NotRequired[RequestPayload]
    release: NotRequired[str]
    environment: NotRequired[str]
    server_name: NotRequired[str]
    errors: NotRequired[list[dict[str, Any]]]


class OtelContext(TypedDict):
    resource: Attributes
    span_name: NotRequired[str]  # an error event's span


class TransactionContexts(TypedDict):
    trace: TraceContext
    otel: OtelContext
    response: NotRequired[dict[str, int]]  # {"status_code": …}


class TransactionPayload(EventPayload):
    """The Sentry ``transaction`` payload of a local root and its spans."""

    type: str
    transaction_info: dict[str, str]  # {"source": route, url or custom}
    start_timestamp: float
    contexts: TransactionContexts
    spans: list[SpanPayload]


class ExceptionPayload(TypedDict):
    type: str
    value: str
    mechanism: dict[str, str | bool]  # {"type": "otlp", "handled": …}
    stacktrace: NotRequired[dict[str, list[Frame]]]  # {"frames": …}, oldest first


class ErrorContexts(TypedDict):
    trace: SpanIds
    otel: OtelContext


class ErrorPayload(EventPayload):
    """The Sentry error event of an ``exception`` span event."""

    level: str
    exception: dict[str, list[ExceptionPayload]]  # {"values": [...]}
    contexts: ErrorContexts
    extra: NotRequired[dict[str, str]]  # the stack as sent, when no parser read it


@dataclass
class TraceLines:
    """The log lines an export becomes, what each holds (for ``partial_success``), and the spans refused."""

    lines: list[bytes] = field(default_factory=list)
    spans_per_line: list[int] = field(default_factory=list)  # 0 for an error event's line
    labels: list[str] = field(default_factory=list)  # how the answer names each line
    rejected_spans: int = 0
    reasons: list[str] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"\n".join(self.lines)

    @property
    def idempotency_key(self) -> str:
        """The same export sent again answers its first figures (the shipper's Idempotency-Key rule)."""
        return "otlp-" + hashlib.sha256(self.body).hexdigest()[:40]

    def reject(self, spans: int, reason: str) -> None:
        self.rejected_spans += spans
        self.reasons.append(reason)


@dataclass
class _Origin:
    """What a span's resource says about where it comes from."""

    service: str
    release: str
    environment: str
    platform: str
    host: str
    resource: Attributes


@dataclass
class _Node:
    span: Span
    origin: _Origin
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


def trace_lines(export: TraceExport, app_key: str) -> TraceLines:
    """The lines of ``export``; spans read but refused are counted in ``rejected_spans`` with their reason.

    Lines carry no ``ts`` (every payload has its own times), so the same export always makes the same lines.
    """
    out = TraceLines()
    for reason in export.rejected:
        out.reject(1, reason)
    for count, reason in export.refused:
        out.reject(count, reason)
    nodes: dict[tuple[bytes, bytes], _Node] = {}
    for batch in export.batches:
        origin = _origin_of(batch.resource)
        for span in batch.spans:
            problem = _id_problem(span)
            key = (span.trace_id, span.span_id)
            if problem is None and key in nodes:
                problem = "another span of the export has the same trace_id and span_id"
            if problem is not None:
                out.reject(1, f"span {_name(span)}: {problem}")
                continue
            notes = Notes()
            nodes[key] = _Node(span, origin, attributes(span.attributes, notes, "attributes"), notes)
    roots = {key: node for key, node in nodes.items() if _is_root(node.span, nodes)}
    children: dict[tuple[bytes, bytes], list[_Node]] = {key: [] for key in roots}
    for key, node in nodes.items():
        if key in roots:
            continue
        root_key = _root_of(node.span, nodes, roots)
        if root_key is None:
            # Its parents loop back to it (a broken exporter): it becomes a local root, and the rest of the
            # loop its spans.
            roots[key], children[key] = node, []
        else:
            children[root_key].append(node)
    for key, root in roots.items():
        kept = sorted(children[key], key=lambda n: n.span.start_time_unix_nano)
        if len(kept) > MAX_SPANS_PER_TRANSACTION:
            out.reject(
                len(kept) - MAX_SPANS_PER_TRANSACTION,
                f"span {_name(root.span)}: more than {MAX_SPANS_PER_TRANSACTION} spans under one local root; "
                "the latest were dropped",
            )
            kept = kept[:MAX_SPANS_PER_TRANSACTION]
        payload = _transaction(root, kept)
        out.lines.append(_line("transaction", app_key, payload))
        out.spans_per_line.append(1 + len(kept))
        out.labels.append(f"span {_name(root.span)}")
        for node in [root, *kept]:
            for index, event in enumerate(node.span.events):
                if event.name == "exception":
                    error = _error_event(node, event, index, payload)
                    out.lines.append(_line("event", app_key, error))
                    out.spans_per_line.append(0)
                    out.labels.append(f"the exception event of span {_name(node.span)}")
    return out


def _line(kind: str, app_key: str, payload: TransactionPayload | ErrorPayload) -> bytes:
    line = {"v": 1, "type": kind, "app_key": app_key, "payload": payload}
    try:
        return orjson.dumps(line)
    except orjson.JSONEncodeError:
        # A lone surrogate (JSON bodies may escape one) is not UTF-8: replaced, as the envelope road does.
        return json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "replace")


def _name(span: Span) -> str:
    return f"{span.name[:80]!r} (trace {span.trace_id.hex()[:32]}, span {span.span_id.hex()[:16]})"


def _id_problem(span: Span) -> str | None:
    if len(span.trace_id) != 16:
        return f"trace_id is {len(span.trace_id)} bytes; OTLP trace ids are 16"
    if not any(span.trace_id):
        return "trace_id is all zeros (an invalid trace id)"
    if len(span.span_id) != 8:
        return f"span_id is {len(span.span_id)} bytes; OTLP span ids are 8"
    if not any(span.span_id):
        return "span_id is all zeros (an invalid span id)"
    if span.parent_span_id and len(span.parent_span_id) != 8:
        return f"parent_span_id is {len(span.parent_span_id)} bytes; OTLP span ids are 8 (or empty)"
    return None


def _origin_of(resource: Resource) -> _Origin:
    notes = Notes()
    attrs = attributes(resource.attributes, notes, "resource")

    def word(*keys: str, limit: int = 256) -> str:
        for key in keys:
            value = attrs.get(key)
            if isinstance(value, str) and value:
                return value[:limit]
        return ""

    language = word("telemetry.sdk.language", limit=32)
    return _Origin(
        service=word("service.name", limit=31),
        release=word("service.version"),
        environment=word("deployment.environment.name", "deployment.environment", limit=128),
        platform=_PLATFORMS.get(language, "other"),
        host=word("host.name"),
        resource=attrs,
    )


def _is_root(span: Span, nodes: dict[tuple[bytes, bytes], _Node]) -> bool:
    if span.kind in (Span.SPAN_KIND_SERVER, Span.SPAN_KIND_CONSUMER) or not span.parent_span_id:
        return True
    if span.flags & _FLAG_HAS_IS_REMOTE and span.flags & _FLAG_IS_REMOTE:
        return True
    return (span.trace_id, span.parent_span_id) not in nodes


def _root_of(
    span: Span, nodes: dict[tuple[bytes, bytes], _Node], roots: dict[tuple[bytes, bytes], _Node]
) -> tuple[bytes, bytes] | None:
    """The local root above ``span``; ``None`` when its parents form a loop without one."""
    key = (span.trace_id, span.parent_span_id)
    for _ in range(len(nodes)):  # bounded: a parent loop never reaches a root
        if key in roots:
            return key
        key = (span.trace_id, nodes[key].span.parent_span_id)
    return None


def _seconds(nanos: int) -> float:
    return nanos / 1e9


def _str(attrs: Attributes, *keys: str) -> str:
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return ""


def _method(attrs: Attributes) -> str:
    method = _str(attrs, "http.request.method", "http.method")
    if method == "_OTHER":
        method = _str(attrs, "http.request.method_original") or method
    return method.upper()[:16]


def _status_code(attrs: Attributes) -> int | None:
    value = attrs.get("http.response.status_code", attrs.get("http.status_code"))
    try:
        code = int(value) if value is not None and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None
    return code if code is not None and 100 <= code <= 599 else None


def _url(attrs: Attributes) -> str:
    full = _str(attrs, "url.full", "http.url")
    if full:
        return full
    path = _str(attrs, "url.path", "http.target")
    query = _str(attrs, "url.query")
    host = _str(attrs, "server.address", "http.host", "net.host.name")
    if not path:
        return ""
    target = f"{path}?{query}" if query and "?" not in path else path
    if not host:
        return target
    port = _str(attrs, "server.port", "net.host.port")
    scheme = _str(attrs, "url.scheme", "http.scheme") or "http"
    default = (scheme, port) in (("http", "80"), ("https", "443"))
    return f"{scheme}://{host}{'' if not port or default else ':' + port}{target}"


def _sentry_status(span: Span, code: int | None) -> str:
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


def _description(node: _Node) -> str:
    span, op, attrs = node.span, node.op, node.attrs
    if op == "db":
        return _str(attrs, "db.query.text", "db.statement") or span.name
    if op == "http.client":
        return f"{node.method} {_url(attrs) or span.name}"
    return span.name


def _data(node: _Node) -> Attributes:
    data = dict(node.attrs)
    if node.span.status.message:
        data["otel.status_description"] = node.span.status.message[:MAX_VALUE_CHARS]
    data["otel.kind"] = Span.SpanKind.Name(node.span.kind).removeprefix("SPAN_KIND_").lower()
    return data


def _child_times(node: _Node, root: Span) -> tuple[float, float]:
    """A span's start and end in epoch seconds. A start no clock gives (unset, before 2000, after 2100) is
    the root's start, as the ingest service places a span outside the kept window, and the payload says so:
    without it the span would have no place in the waterfall."""
    span = node.span
    start, end = _seconds(span.start_time_unix_nano), _seconds(span.end_time_unix_nano)
    if timeparse.to_epoch(start) is not None:
        return start, max(start, end)
    node.notes.add(
        "invalid_timestamp",
        "spans.start_timestamp",
        value=str(span.start_time_unix_nano),
        span_id=span.span_id.hex(),
    )
    placed = _seconds(root.start_time_unix_nano)
    duration = end - start if 0 <= end - start <= _MAX_SPAN_SECONDS else 0.0
    return placed, placed + duration


def _span(node: _Node, root: Span) -> SpanPayload:
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
        "status": _sentry_status(span, node.code),
        "data": _data(node),
        "origin": "otlp",
    }


def _transaction(root: _Node, children: list[_Node]) -> TransactionPayload:
    """The Sentry transaction payload of a local root and its spans."""
    span, attrs, origin = root.span, root.attrs, root.origin
    op, code = root.op, root.code
    route = _str(attrs, "http.route")
    url = _url(attrs)
    if route.startswith("/"):
        name, source = route, "route"
    elif url and op == "http.server":
        name, source = span.name, "url"
    else:
        name, source = span.name, "custom"
    trace: TraceContext = {
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent_span_id": span.parent_span_id.hex(),
        "op": op,
        "status": _sentry_status(span, code),
        "data": _data(root),
        "origin": "otlp",
    }
    contexts: TransactionContexts = {"trace": trace, "otel": {"resource": origin.resource}}
    if code is not None:
        contexts["response"] = {"status_code": code}
    payload: TransactionPayload = {
        "type": "transaction",
        "event_id": _event_id("transaction", span.trace_id, span.span_id),
        "transaction": name[:1024],
        "transaction_info": {"source": source},
        "start_timestamp": _seconds(span.start_time_unix_nano),
        "timestamp": _seconds(max(span.end_time_unix_nano, span.start_time_unix_nano)),
        "platform": origin.platform,
        "contexts": contexts,
        "spans": [_span(child, span) for child in children],
        "tags": _tags(origin),
    }
    if url or root.method:
        payload["request"] = {"url": url, "method": root.method}
    _common(payload, origin, [root, *children])
    return payload


def _tags(origin: _Origin) -> dict[str, str]:
    return {"service": origin.service} if origin.service else {}


def _common(payload: EventPayload, origin: _Origin, nodes: list[_Node]) -> None:
    if origin.release:
        payload["release"] = origin.release
    if origin.environment:
        payload["environment"] = origin.environment
    if origin.host:
        payload["server_name"] = origin.host
    errors = [entry for node in nodes for entry in node.notes.entries]
    if errors:
        payload["errors"] = errors[:100]


def _event_id(kind: str, trace_id: bytes, span_id: bytes, extra: str = "") -> str:
    return uuid.uuid5(_ID_NAMESPACE, f"{kind}:{trace_id.hex()}:{span_id.hex()}:{extra}").hex


def _error_event(node: _Node, event: Span.Event, index: int, transaction: TransactionPayload) -> ErrorPayload:
    """The error event of an ``exception`` span event, in the trace of its span."""
    notes = Notes()
    # The stack is read whole (up to 64 KiB), not cut at the attribute limit: its innermost frames are last
    # in a Python traceback.
    stack = next((p.value.string_value for p in event.attributes if p.key == "exception.stacktrace"), "")[
        :_RAW_STACK_CHARS
    ]
    attrs = attributes([p for p in event.attributes if p.key != "exception.stacktrace"], notes, "exception")
    exc_type = _str(attrs, "exception.type")
    message = _str(attrs, "exception.message")
    frames = parse_stack(stack) if stack else []
    exception: ExceptionPayload = {
        "type": exc_type or "Error",
        "value": message,
        "mechanism": {"type": "otlp", "handled": attrs.get("exception.escaped") is not True},
    }
    if frames:
        exception["stacktrace"] = {"frames": frames}
    span, origin = node.span, node.origin
    payload: ErrorPayload = {
        "event_id": _event_id("exception", span.trace_id, span.span_id, f"{index}:{event.time_unix_nano}"),
        "timestamp": _seconds(event.time_unix_nano or span.end_time_unix_nano),
        "level": "error",
        "platform": origin.platform,
        "exception": {"values": [exception]},
        "transaction": transaction["transaction"],
        "contexts": {
            "trace": {
                "trace_id": span.trace_id.hex(),
                "span_id": span.span_id.hex(),
                "parent_span_id": span.parent_span_id.hex(),
                "op": node.op,
            },
            "otel": {"resource": origin.resource, "span_name": span.name},
        },
        "tags": _tags(origin),
    }
    if stack and not frames:
        # No parser knows the format: the text stays with the event, as sent (within 64 KiB).
        payload["extra"] = {"exception.stacktrace": stack}
    if "request" in transaction:
        payload["request"] = transaction["request"]
    _common(payload, origin, [])
    if notes.entries:
        payload["errors"] = notes.entries
    return payload
