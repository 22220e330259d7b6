"""The Sentry payloads an OTLP trace export becomes (:mod:`stacklens.ingest.otlp.traces`): a transaction with
its spans, an error event, and the contexts they carry, typed as the log lines (docs/architecture.md §11.1)
hold them."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from stacklens.ingest.otlp.stacks import Frame

# A span's, an event's or a resource's attributes as JSON values (stacklens.ingest.otlp.values.attributes):
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
