"""OTLP spans → the `transaction` and `event` lines the ingest service lands: local roots and their spans, a
malformed span refused alone and counted (ids of the wrong length, all zeros, the same ids twice), a parent
loop, the per-transaction span limit, trims named in the payload, exceptions as error events in the trace,
and the same export always making the same lines."""

from __future__ import annotations

import traceback

from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from stacklens.ingest.otlp.decode import SpanBatch, TraceExport
from stacklens.ingest.otlp.traces import MAX_SPANS_PER_TRANSACTION, transactions_at_least
from tests.stacklens.ingest.otlp.otlp_seed import START, TRACE, _attr, _lines, _payloads, _span


def test_a_server_span_and_its_children_make_one_transaction() -> None:
    http = {"http.request.method": "POST", "url.path": "/carts/91/items", "http.response.status_code": 503}
    server = _span(1, kind=Span.SPAN_KIND_SERVER, attrs=http)
    db = _span(2, 1, Span.SPAN_KIND_CLIENT, {"db.system.name": "postgresql", "db.query.text": "SELECT 1"})
    nested = _span(3, 2)
    made = _lines(server, db, nested)
    [(kind, payload)] = _payloads(made)
    assert kind == "transaction" and made.spans_per_line == [3] and made.rejected_spans == 0
    assert payload["transaction"] == "span 1" and payload["transaction_info"] == {"source": "url"}
    assert payload["request"] == {"url": "/carts/91/items", "method": "POST"}
    assert payload["contexts"]["trace"]["op"] == "http.server"
    assert payload["contexts"]["trace"]["status"] == "unavailable"
    assert payload["contexts"]["response"] == {"status_code": 503}
    assert [(s["op"], s["description"]) for s in payload["spans"]] == [
        ("db", "SELECT 1"),
        ("function", "span 3"),
    ]
    assert payload["release"] == "1.2.0" and payload["tags"] == {"service": "cart"}
    assert _lines(server, db, nested).lines == made.lines, "the same export makes the same lines"


def test_malformed_spans_are_refused_alone_and_counted() -> None:
    good = _span(1, kind=Span.SPAN_KIND_SERVER)
    short_trace = _span(2)
    short_trace.trace_id = TRACE[:4]
    no_span_id = _span(3)
    no_span_id.span_id = b""
    long_span_id = _span(4)
    long_span_id.span_id = b"\x01" * 9
    zero_trace = _span(5)
    zero_trace.trace_id = b"\0" * 16
    zero_span = _span(6)
    zero_span.span_id = b"\0" * 8
    bad_parent = _span(7)
    bad_parent.parent_span_id = b"\x01\x02\x03"
    twice = _span(1, kind=Span.SPAN_KIND_SERVER)
    made = _lines(good, short_trace, no_span_id, long_span_id, zero_trace, zero_span, bad_parent, twice)
    assert [kind for kind, _ in _payloads(made)] == ["transaction"]
    assert made.rejected_spans == 7 and len(made.reasons) == 7
    for reason, words in zip(
        made.reasons,
        [
            "trace_id is 4 bytes; OTLP trace ids are 16",
            "span_id is 0 bytes; OTLP span ids are 8",
            "span_id is 9 bytes",
            "trace_id is all zeros",
            "span_id is all zeros",
            "parent_span_id is 3 bytes",
            "another span of the export has the same trace_id and span_id",
        ],
        strict=True,
    ):
        assert words in reason, reason
        assert reason.startswith("span 'span "), reason


def test_a_parent_loop_lands_as_a_local_root_with_its_spans() -> None:
    made = _lines(_span(1, 2), _span(2, 1), _span(3, 2))
    [(kind, payload)] = _payloads(made)
    assert kind == "transaction" and payload["transaction"] == "span 1"
    assert sorted(s["span_id"][-1] for s in payload["spans"]) == ["2", "3"]


def test_spans_past_the_limit_of_one_transaction_are_counted_as_refused() -> None:
    spans = [_span(1, kind=Span.SPAN_KIND_SERVER)]
    spans += [_span(i, 1) for i in range(2, MAX_SPANS_PER_TRANSACTION + 7)]
    made = _lines(*spans)
    [(_, payload)] = _payloads(made)
    assert len(payload["spans"]) == MAX_SPANS_PER_TRANSACTION
    assert made.rejected_spans == 5 and "the latest were dropped" in made.reasons[0]


def test_trims_are_named_in_the_payload_and_non_finite_numbers_land() -> None:
    root = _span(1, kind=Span.SPAN_KIND_SERVER, attrs={"note": "x" * 9000, "ratio": float("nan")})
    [(_, payload)] = _payloads(_lines(root))
    data = payload["contexts"]["trace"]["data"]
    assert len(data["note"]) == 8192 and data["ratio"] == "NaN"
    assert payload["errors"] == [
        {"type": "value_too_long", "name": "attributes.note", "original_length": 9000}
    ]


def _fail() -> None:
    raise ValueError("no such cart")


def test_an_exception_event_is_an_error_in_the_trace_with_its_stack() -> None:
    try:
        _fail()
    except ValueError as exc:
        stack = "".join(traceback.format_exception(exc))
    root = _span(
        1, kind=Span.SPAN_KIND_SERVER, attrs={"http.route": "/carts/{id}", "http.request.method": "GET"}
    )
    root.events.add(
        name="exception",
        time_unix_nano=START + 3_000_000,
        attributes=[
            _attr("exception.type", "ValueError"),
            _attr("exception.message", "no such cart"),
            _attr("exception.stacktrace", stack),
        ],
    )
    unknown = _span(2, 1)
    unknown.events.add(name="exception", attributes=[_attr("exception.stacktrace", "somewhere, somehow")])
    made = _lines(root, unknown)
    (_, transaction), (_, error), (_, other) = _payloads(made)
    assert made.labels[1] == f"the exception event of span 'span 1' (trace {TRACE.hex()}, span {'0' * 15}1)"
    value = error["exception"]["values"][0]
    assert (value["type"], value["value"]) == ("ValueError", "no such cart")
    assert [f["function"] for f in value["stacktrace"]["frames"]][-1] == "_fail"
    assert error["contexts"]["trace"]["trace_id"] == TRACE.hex() and error["transaction"] == "/carts/{id}"
    assert other["exception"]["values"][0]["type"] == "Error", "no exception.type: a plain Error"
    assert other["extra"] == {"exception.stacktrace": "somewhere, somehow"}, "an unknown stack kept as text"
    assert error["event_id"] != other["event_id"] != transaction["event_id"]


def test_the_transactions_an_export_makes_at_least_are_counted_without_converting_it() -> None:
    """The quotas' count before the conversion (api/routers/otlp.py, issue #62): never more transactions
    than the conversion makes, and as many for every export but a parent loop's."""
    twice = _span(1, kind=Span.SPAN_KIND_SERVER)
    bad_parent = _span(9)
    bad_parent.parent_span_id = b"\x01\x02\x03"
    orphan = _span(8, 77)  # its parent is not in the export: a local root
    consumer = _span(6, 5, Span.SPAN_KIND_CONSUMER)  # a local root under its parent
    exports = [
        [_span(1, kind=Span.SPAN_KIND_SERVER), _span(2, 1), _span(3, 2)],
        [_span(1, kind=Span.SPAN_KIND_SERVER), twice, bad_parent, orphan, _span(5), consumer, _span(7, 6)],
        [_span(1, 2), _span(2, 1), _span(3, 2)],  # a parent loop: one transaction, none counted before
    ]
    counted = []
    for spans in exports:
        resource = Resource(attributes=[_attr("service.name", "cart")])
        export = TraceExport([SpanBatch(resource, "manual", spans)])
        made = sum(1 for kind, _ in _payloads(_lines(*spans)) if kind == "transaction")
        counted.append((transactions_at_least(export), made))
    assert counted == [(1, 1), (4, 4), (0, 1)]
