"""The payloads an export becomes (stacklens/ingest/otlp/trace_payloads.py): every field a line holds is
one its type declares, so the types say what the ingest service is sent."""

from __future__ import annotations

from opentelemetry.proto.trace.v1.trace_pb2 import Span

from stacklens.ingest.otlp.trace_payloads import ErrorPayload, SpanPayload, TransactionPayload
from tests.stacklens.ingest.otlp.otlp_seed import START, _attr, _lines, _payloads, _span


def _fields(shape: type) -> set[str]:
    return set(shape.__required_keys__) | set(shape.__optional_keys__)  # type: ignore[attr-defined]


def test_a_transaction_and_an_error_hold_only_their_declared_fields() -> None:
    http = {"http.request.method": "GET", "http.route": "/carts/{id}", "http.response.status_code": 500}
    root = _span(1, kind=Span.SPAN_KIND_SERVER, attrs=http)
    root.events.add(
        name="exception",
        time_unix_nano=START + 3_000_000,
        attributes=[_attr("exception.type", "ValueError"), _attr("exception.message", "no such cart")],
    )
    made = _payloads(_lines(root, _span(2, 1)))
    assert sorted(kind for kind, _ in made) == ["event", "transaction"]
    for kind, payload in made:
        assert set(payload) <= _fields(TransactionPayload if kind == "transaction" else ErrorPayload), kind
        for span in payload.get("spans", []):
            assert set(span) <= _fields(SpanPayload)
