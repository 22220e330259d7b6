"""OTLP spans → the Sentry ``transaction`` and ``event`` log lines every other ingest road lands.

One code path (docs/architecture.md §11.4): an export becomes log lines (docs/architecture.md §11.1) that the
ingest service prepares,
groups, deduplicates and writes like any SDK's, so an OpenTelemetry span is stored exactly as a Sentry
transaction's span is. What becomes what:

- A **local root** becomes a transaction: a span of kind SERVER or CONSUMER, a span without a parent, one
  whose parent is remote (the span flags say so) or one whose parent is not in the export. A SERVER span with
  HTTP attributes is an ``http.server`` transaction: method from ``http.request.method``, route from
  ``http.route`` (else the URL path, folded into a route template by
  :mod:`stacklens.ingest.route_templates`), status from ``http.response.status_code``.
- Every other span becomes a span of its nearest root ancestor (``db``, ``http.client``, …).
- A span event named ``exception`` becomes an error event, its stack read from ``exception.stacktrace``
  (:mod:`stacklens.ingest.otlp.stacks`), with the span's trace id in its trace context.
- The resource gives the service (``service.name``), release (``service.version``) and environment
  (``deployment.environment.name``, or the older ``deployment.environment``).

Ids are derived from the trace and span ids, so a resent export makes the same event ids and lands nothing
twice (the writer drops ids already stored). A span that cannot be stored (ids of the wrong length, the same
ids twice) is rejected alone, with its reason, for ``partial_success``.

What one span says (its resource, method, status, op, the Sentry span it becomes) is read in
:mod:`stacklens.ingest.otlp.spans`; the payloads' types are in :mod:`stacklens.ingest.otlp.trace_payloads`.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Container
from dataclasses import dataclass, field

import orjson
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from stacklens.ingest.otlp.decode import TraceExport
from stacklens.ingest.otlp.spans import (
    SpanNode,
    SpanOrigin,
    first_str,
    origin_of,
    otlp_span_name,
    seconds_of,
    sentry_status,
    span_data,
    span_payload,
    url_of,
)
from stacklens.ingest.otlp.stacks import parse_stack
from stacklens.ingest.otlp.trace_payloads import (
    ErrorPayload,
    EventPayload,
    ExceptionPayload,
    TraceContext,
    TransactionContexts,
    TransactionPayload,
)
from stacklens.ingest.otlp.values import Notes, attributes

# Event ids are name-based UUIDs in this namespace: the same trace and span give the same id on every resend.
_ID_NAMESPACE = uuid.UUID("6f1d3c2e-8a4b-5c7d-9e0f-a1b2c3d4e5f6")
MAX_SPANS_PER_TRANSACTION = (
    2000  # what a Sentry transaction's spans are cut to (stacklens.ingest.transactions)
)
_RAW_STACK_CHARS = 64 * 1024
_FLAG_HAS_IS_REMOTE = 0x100  # SpanFlags: the sender knows whether the parent is remote …
_FLAG_IS_REMOTE = 0x200  # … and it is


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


def trace_lines(export: TraceExport, app_key: str) -> TraceLines:
    """The lines of ``export``; spans read but refused are counted in ``rejected_spans`` with their reason.

    Lines carry no ``ts`` (every payload has its own times), so the same export always makes the same lines.
    """
    out = TraceLines()
    for reason in export.rejected:
        out.reject(1, reason)
    for count, reason in export.refused:
        out.reject(count, reason)
    nodes: dict[tuple[bytes, bytes], SpanNode] = {}
    for batch in export.batches:
        origin = origin_of(batch.resource)
        for span in batch.spans:
            problem = _id_problem(span)
            key = (span.trace_id, span.span_id)
            if problem is None and key in nodes:
                problem = "another span of the export has the same trace_id and span_id"
            if problem is not None:
                out.reject(1, f"span {otlp_span_name(span)}: {problem}")
                continue
            notes = Notes()
            nodes[key] = SpanNode(span, origin, attributes(span.attributes, notes, "attributes"), notes)
    roots = {key: node for key, node in nodes.items() if _is_root(node.span, nodes)}
    children: dict[tuple[bytes, bytes], list[SpanNode]] = {key: [] for key in roots}
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
                f"span {otlp_span_name(root.span)}: more than {MAX_SPANS_PER_TRANSACTION} spans under one local root; "
                "the latest were dropped",
            )
            kept = kept[:MAX_SPANS_PER_TRANSACTION]
        payload = _transaction(root, kept)
        out.lines.append(_line("transaction", app_key, payload))
        out.spans_per_line.append(1 + len(kept))
        out.labels.append(f"span {otlp_span_name(root.span)}")
        for node in [root, *kept]:
            for index, event in enumerate(node.span.events):
                if event.name == "exception":
                    error = _error_event(node, event, index, payload)
                    out.lines.append(_line("event", app_key, error))
                    out.spans_per_line.append(0)
                    out.labels.append(f"the exception event of span {otlp_span_name(node.span)}")
    return out


def _line(kind: str, app_key: str, payload: TransactionPayload | ErrorPayload) -> bytes:
    line = {"v": 1, "type": kind, "app_key": app_key, "payload": payload}
    try:
        return orjson.dumps(line)
    except orjson.JSONEncodeError:
        # A lone surrogate (JSON bodies may escape one) is not UTF-8: replaced, as the envelope road does.
        return json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "replace")


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


def transactions_at_least(export: TraceExport) -> int:
    """How many transactions ``export`` becomes at least (its local roots with readable ids), counted from
    the spans' ids and kinds alone: milliseconds for 10,000 spans where converting them takes seconds, so
    the quotas can refuse an export before its conversion (issue #62). Error events from span events come
    on top."""
    present = {(span.trace_id, span.span_id) for batch in export.batches for span in batch.spans}
    roots = {
        (span.trace_id, span.span_id)
        for batch in export.batches
        for span in batch.spans
        if _id_problem(span) is None and _is_root(span, present)
    }
    return len(roots)


def _is_root(span: Span, nodes: Container[tuple[bytes, bytes]]) -> bool:
    if span.kind in (Span.SPAN_KIND_SERVER, Span.SPAN_KIND_CONSUMER) or not span.parent_span_id:
        return True
    if span.flags & _FLAG_HAS_IS_REMOTE and span.flags & _FLAG_IS_REMOTE:
        return True
    return (span.trace_id, span.parent_span_id) not in nodes


def _root_of(
    span: Span, nodes: dict[tuple[bytes, bytes], SpanNode], roots: dict[tuple[bytes, bytes], SpanNode]
) -> tuple[bytes, bytes] | None:
    """The local root above ``span``; ``None`` when its parents form a loop without one."""
    key = (span.trace_id, span.parent_span_id)
    for _ in range(len(nodes)):  # bounded: a parent loop never reaches a root
        if key in roots:
            return key
        key = (span.trace_id, nodes[key].span.parent_span_id)
    return None


def _transaction(root: SpanNode, children: list[SpanNode]) -> TransactionPayload:
    """The Sentry transaction payload of a local root and its spans."""
    span, attrs, origin = root.span, root.attrs, root.origin
    op, code = root.op, root.code
    route = first_str(attrs, "http.route")
    url = url_of(attrs)
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
        "status": sentry_status(span, code),
        "data": span_data(root),
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
        "start_timestamp": seconds_of(span.start_time_unix_nano),
        "timestamp": seconds_of(max(span.end_time_unix_nano, span.start_time_unix_nano)),
        "platform": origin.platform,
        "contexts": contexts,
        "spans": [span_payload(child, span) for child in children],
        "tags": _tags(origin),
    }
    if url or root.method:
        payload["request"] = {"url": url, "method": root.method}
    _common(payload, origin, [root, *children])
    return payload


def _tags(origin: SpanOrigin) -> dict[str, str]:
    return {"service": origin.service} if origin.service else {}


def _common(payload: EventPayload, origin: SpanOrigin, nodes: list[SpanNode]) -> None:
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


def _error_event(
    node: SpanNode, event: Span.Event, index: int, transaction: TransactionPayload
) -> ErrorPayload:
    """The error event of an ``exception`` span event, in the trace of its span."""
    notes = Notes()
    # The stack is read whole (up to 64 KiB), not cut at the attribute limit: its innermost frames are last
    # in a Python traceback.
    stack = next((p.value.string_value for p in event.attributes if p.key == "exception.stacktrace"), "")[
        :_RAW_STACK_CHARS
    ]
    attrs = attributes([p for p in event.attributes if p.key != "exception.stacktrace"], notes, "exception")
    exc_type = first_str(attrs, "exception.type")
    message = first_str(attrs, "exception.message")
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
        "timestamp": seconds_of(event.time_unix_nano or span.end_time_unix_nano),
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
