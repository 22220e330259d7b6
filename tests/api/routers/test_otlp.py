"""OTLP/HTTP traces from OpenTelemetry's own Python SDK and exporter (protobuf, gzip) and from a JSON body
written by the specification, into a real server: the server span is an API endpoint with its route, its
child a span, its exception an issue in the same trace; a resend lands nothing twice; malformed spans are
refused alone in partial_success; keys, bombs and unreadable bodies get their own answers."""

from __future__ import annotations

import gzip
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from google.protobuf import json_format
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.ingest.front_door import settle_front_doors
from tests.api.sentry_live import _warehouse
from tests.stacklens.performance.perf_seed import build_facts

RESOURCE = {"service.name": "checkout", "service.version": "4.2.0", "deployment.environment.name": "staging"}


def _rows(sql: str, org_id: int) -> list[tuple[Any, ...]]:
    return list(_warehouse[0].query(sql, parameters={"org": org_id}).result_rows)


def _handle_order(tracer: Any, order_id: int) -> None:
    """A small instrumented request handler: a server span, a database call, and a failure."""
    attributes = {
        "http.request.method": "GET",
        "http.route": "/orders/{order_id}",
        "url.path": f"/orders/{order_id}",
        "url.scheme": "https",
        "server.address": "shop.example",
        "http.response.status_code": 500,
    }
    with tracer.start_as_current_span(
        "GET /orders/{order_id}", kind=SpanKind.SERVER, attributes=attributes
    ) as span:
        with tracer.start_as_current_span(
            "SELECT shop.orders",
            kind=SpanKind.CLIENT,
            attributes={
                "db.system.name": "postgresql",
                "db.query.text": "SELECT * FROM orders WHERE id = %s",
            },
        ):
            time.sleep(0.002)
        try:
            raise LookupError(f"order {order_id} has no lines")
        except LookupError as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR))


def _provider(*exporters: Any) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create(RESOURCE))
    for exporter in exporters:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def test_python_sdk_protobuf_gzip_lands_endpoint_span_and_issue(dsn_server: str, make_org) -> None:
    org = make_org()
    memory = InMemorySpanExporter()
    exporter = OTLPSpanExporter(
        endpoint=f"{dsn_server}/api/{org['project_id']}/otlp/v1/traces",
        headers={"x-stacklens-app-key": str(org["app_key"])},
        compression=Compression.Gzip,
    )
    provider = _provider(memory)
    tracer = provider.get_tracer("shop.web")
    for order_id in (41, 42):
        _handle_order(tracer, order_id)
    spans = memory.get_finished_spans()
    assert exporter.export(spans) == SpanExportResult.SUCCESS

    org_id = int(org["org_id"])
    transactions = _rows(
        "SELECT op, page, http_method, http_status, release, environment, service, trace_id, duration_ms "
        "FROM transactions FINAL WHERE org_id = {org:UInt64}",
        org_id,
    )
    assert len(transactions) == 2
    for op, page, method, status, release, environment, service, trace_id, duration in transactions:
        assert (op, page, method, status) == ("http.server", "/orders/{order_id}", "GET", 500)
        assert (release, environment, service) == ("4.2.0", "staging", "checkout")
        assert len(trace_id) == 32 and duration >= 2.0
    children = _rows(
        "SELECT op, description, parent_span_id, page FROM spans WHERE org_id = {org:UInt64}", org_id
    )
    assert len(children) == 2
    assert {(op, description, page) for op, description, _, page in children} == {
        ("db", "SELECT * FROM orders WHERE id = %s", "/orders/{order_id}")
    }
    events = _rows(
        "SELECT title, release, environment, issue_id, JSONExtractString(payload, 'contexts', 'trace', 'trace_id') "
        "FROM events FINAL WHERE org_id = {org:UInt64}",
        org_id,
    )
    assert len(events) == 2
    assert all(e[0].startswith("LookupError") and e[1:3] == ("4.2.0", "staging") for e in events)
    assert len({e[3] for e in events}) == 1, "both failures are one issue"
    assert {e[4] for e in events} == {t[7] for t in transactions}, "each error is linked to its trace"

    # A resend of the same export lands nothing twice.
    assert exporter.export(spans) == SpanExportResult.SUCCESS
    counts = _rows(
        "SELECT (SELECT count() FROM transactions WHERE org_id = {org:UInt64}), "
        "(SELECT count() FROM spans WHERE org_id = {org:UInt64}), "
        "(SELECT count() FROM events WHERE org_id = {org:UInt64})",
        org_id,
    )
    assert counts == [(2, 2, 2)]

    # The server side of API endpoints, and the issue, through the JSON API.
    now = datetime.now(UTC)
    build_facts(_warehouse[0], now - timedelta(hours=2), now + timedelta(hours=1))
    bearer = {"Authorization": f"Bearer {org['api_key']}"}
    endpoints = httpx.get(
        f"{dsn_server}/api/projects/{org['project']}/performance/endpoints",
        params={"range": "24h"},
        headers=bearer,
    )
    assert endpoints.status_code == 200, endpoints.text
    server = [r for r in endpoints.json()["rows"] if r["source"] == "server"]
    assert [(r["method"], r["path"], r["calls"], r["s5xx"]) for r in server] == [
        ("GET", "/orders/{order_id}", 2, 2)
    ]
    issues = httpx.get(f"{dsn_server}/api/projects/{org['project']}/issues", headers=bearer)
    assert issues.status_code == 200, issues.text
    titles = [row["title"] for row in issues.json()["issues"]]
    assert any(title.startswith("LookupError") for title in titles), titles


def _json_span(trace_id: str, span_id: str, name: str, start_ns: int, **extra: Any) -> dict[str, Any]:
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": 2,
        "startTimeUnixNano": str(start_ns),
        "endTimeUnixNano": str(start_ns + 25_000_000),
        "attributes": [
            {"key": "http.request.method", "value": {"stringValue": "POST"}},
            {
                "key": "url.path",
                "value": {"stringValue": "/carts/9f1c2a7e-2b1e-4c1a-9a3e-1d2c3b4a5f60/items"},
            },
            {"key": "http.response.status_code", "value": {"intValue": "201"}},
            {"key": "note", "value": {"stringValue": "x" * 10_000}},
        ],
        **extra,
    }


def test_json_export_by_the_spec_refuses_bad_spans_alone(dsn_server: str, make_org) -> None:
    org = make_org()
    now_ns = time.time_ns()
    good = _json_span("5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174", "POST", now_ns)
    # 200 days old: past the 90-day retention, stored under the receive time with a note, as events are.
    ancient_ns = now_ns - 200 * 86_400 * 10**9
    ancient = _json_span("5b8efff798038103d269b633813fc60d", "eee19b7ec3c1b175", "POST", ancient_ns)
    # Two hours ahead: a clock that is off, stored under the receive time too.
    future = _json_span("5b8efff798038103d269b633813fc60f", "eee19b7ec3c1b177", "POST", now_ns + 7200 * 10**9)
    short_trace = _json_span("5b8efff7", "eee19b7ec3c1b176", "POST", now_ns)
    not_hex = _json_span("5b8efff798038103d269b633813fc60e", "not-hex-at-all!!", "POST", now_ns)
    body = {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [
                        {"key": "service.name", "value": {"stringValue": "carts"}},
                        {"key": "deployment.environment", "value": {"stringValue": "production"}},
                    ]
                },
                "scopeSpans": [
                    {"scope": {"name": "manual"}, "spans": [good, ancient, future, short_trace, not_hex]}
                ],
                "unknownField": {"ignored": True},
            }
        ]
    }
    url = f"{dsn_server}/api/{org['project_id']}/otlp/v1/traces"
    answer = httpx.post(
        url,
        content=json.dumps(body),
        headers={"Content-Type": "application/json"},
        params={"sentry_key": str(org["app_key"])},
    )
    assert answer.status_code == 200, answer.text
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "2"
    assert "trace_id is 4 bytes" in partial["errorMessage"]
    assert "spanId 'not-hex-at-all!!' is not hex" in partial["errorMessage"]

    org_id = int(org["org_id"])
    rows = _rows(
        "SELECT page, http_method, http_status, service, environment, timestamp, "
        "JSONExtractRaw(payload, 'errors') FROM transactions FINAL WHERE org_id = {org:UInt64} ORDER BY timestamp",
        org_id,
    )
    assert len(rows) == 3
    for page, method, status, service, environment, stamp, errors in rows:
        assert (page, method, status, service, environment) == (
            "/carts/{uuid}/items",
            "POST",
            201,
            "carts",
            "production",
        )
        assert abs(stamp.replace(tzinfo=UTC).timestamp() - now_ns / 1e9) < 120, "an expired time is replaced"
        assert '"value_too_long"' in errors and "attributes.note" in errors
    assert [('"past_timestamp"' in row[6], '"future_timestamp"' in row[6]) for row in rows].count(
        (False, False)
    ) == 1
    assert any('"past_timestamp"' in row[6] for row in rows) and any(
        '"future_timestamp"' in row[6] for row in rows
    )

    # gzip JSON goes through the same bounded inflate and depth guard; a bomb is 413, too deep 400.
    again = httpx.post(
        url,
        content=gzip.compress(json.dumps(body).encode()),
        headers={
            "Content-Type": "application/json",
            "Content-Encoding": "gzip",
            "X-Stacklens-App-Key": str(org["app_key"]),
        },
    )
    assert again.status_code == 200 and again.json()["partialSuccess"]["rejectedSpans"] == "2", again.text
    assert _rows("SELECT count() FROM transactions WHERE org_id = {org:UInt64}", org_id) == [(3,)]
    bomb = gzip.compress(b" " * (65 * 1024 * 1024))
    headers = {
        "Content-Type": "application/json",
        "Content-Encoding": "gzip",
        "X-Stacklens-App-Key": str(org["app_key"]),
    }
    assert httpx.post(url, content=bomb, headers=headers, timeout=60).status_code == 413
    deep = gzip.compress(b'{"a":' * 200 + b"1" + b"}" * 200)
    too_deep = httpx.post(url, content=deep, headers=headers)
    assert too_deep.status_code == 400 and "deeper than" in too_deep.text, too_deep.text


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"X-Stacklens-App-Key": "stacklens_app_not_a_key"}, 403),
    ],
)
def test_keys_are_checked_before_the_body_is_read(
    dsn_server: str, make_org, headers: dict[str, str], status: int
) -> None:
    org = make_org()
    # A bomb behind a bad key costs nothing: the key is refused before anything is inflated.
    bomb = gzip.compress(b"\0" * (65 * 1024 * 1024))
    answer = httpx.post(
        f"{dsn_server}/api/{org['project_id']}/otlp/v1/traces",
        content=bomb,
        headers={"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip", **headers},
    )
    assert answer.status_code == status, answer.text
    # Every refusal is a google.rpc.Status in the request's encoding (OTLP/HTTP "Failures").
    assert answer.headers["content-type"] == "application/x-protobuf"
    refusal = status_pb2.Status.FromString(answer.content)
    expected = code_pb2.UNAUTHENTICATED if status == 401 else code_pb2.PERMISSION_DENIED
    assert refusal.code == expected and "app key" in refusal.message, refusal


def _status(answer: httpx.Response) -> tuple[status_pb2.Status, list[Any]]:
    """The google.rpc.Status of a refusal, read in the answer's encoding, and its unpacked details."""
    refusal = status_pb2.Status()
    if answer.headers["content-type"] == "application/json":
        json_format.Parse(answer.text, refusal)
    else:
        assert answer.headers["content-type"] == "application/x-protobuf", answer.headers
        refusal.ParseFromString(answer.content)
    details: list[Any] = []
    for packed in refusal.details:
        for kind in (error_details_pb2.BadRequest, error_details_pb2.RetryInfo):
            if packed.Is(kind.DESCRIPTOR):
                detail = kind()
                packed.Unpack(detail)
                details.append(detail)
    return refusal, details


def test_other_projects_key_unreadable_bodies_and_media(dsn_server: str, make_org) -> None:
    org, other = make_org(), make_org("Other")
    url = f"{dsn_server}/api/{org['project_id']}/otlp/v1/traces"
    proto = {"Content-Type": "application/x-protobuf", "X-Stacklens-App-Key": str(org["app_key"])}
    assert (
        httpx.post(
            url, content=b"", headers={**proto, "X-Stacklens-App-Key": str(other["app_key"])}
        ).status_code
        == 403
    )
    garbage = httpx.post(url, content=b"\xff\xff\xff\xff not protobuf", headers=proto)
    assert garbage.status_code == 400
    refusal, details = _status(garbage)
    assert refusal.code == code_pb2.INVALID_ARGUMENT and "ExportTraceServiceRequest" in refusal.message
    assert isinstance(details[0], error_details_pb2.BadRequest)
    assert details[0].field_violations[0].field == "ExportTraceServiceRequest"
    # A JSON request is answered in JSON: the Status in the OTLP JSON mapping.
    not_json = httpx.post(url, content=b"{not json", headers={**proto, "Content-Type": "application/json"})
    assert not_json.status_code == 400 and not_json.headers["content-type"] == "application/json"
    assert not_json.json()["code"] == code_pb2.INVALID_ARGUMENT and "not JSON" in not_json.json()["message"]
    assert not_json.json()["details"][0]["@type"] == "type.googleapis.com/google.rpc.BadRequest"
    media = httpx.post(url, content=b"x", headers={**proto, "Content-Type": "text/plain"})
    assert media.status_code == 415 and "unsupported Content-Type" in _status(media)[0].message
    bomb = httpx.post(
        url, content=gzip.compress(b"\0" * (65 * 1024 * 1024)), headers={**proto, "Content-Encoding": "gzip"}
    )
    assert bomb.status_code == 413 and "64 MiB" in _status(bomb)[0].message, bomb.content[:200]
    too_large = httpx.post(url, content=b"\0" * (21 * 1024 * 1024), headers=proto, timeout=60)
    assert too_large.status_code == 413 and "20 MiB" in _status(too_large)[0].message
    empty = httpx.post(url, content=b"", headers=proto)
    assert empty.status_code == 200 and empty.headers["content-type"] == "application/x-protobuf"
    assert not ExportTraceServiceResponse.FromString(empty.content).HasField("partial_success")
    unknown = httpx.post(f"{dsn_server}/api/abc/otlp/v1/traces", content=b"", headers=proto)
    assert unknown.status_code == 404 and _status(unknown)[0].code == code_pb2.NOT_FOUND


def test_the_quota_answers_429_with_retry_after(dsn_server: str, make_org, settings) -> None:
    org = make_org()
    with session_scope(settings) as session:
        accounts.set_quota(session, org["org_id"], events_per_minute=2)
    answers = []
    for order_id in range(4):  # each export is a transaction and an error: two events
        memory = InMemorySpanExporter()
        _handle_order(_provider(memory).get_tracer("shop.web"), order_id)
        answers.append(
            httpx.post(
                f"{dsn_server}/api/{org['project_id']}/otlp/v1/traces",
                content=encode_spans(memory.get_finished_spans()).SerializeToString(),
                headers={
                    "Content-Type": "application/x-protobuf",
                    "X-Stacklens-App-Key": str(org["app_key"]),
                },
            )
        )
    limited = [a for a in answers if a.status_code == 429]
    assert limited, [a.status_code for a in answers]
    retry_after = int(limited[0].headers["Retry-After"])
    assert retry_after >= 1
    refusal, details = _status(limited[0])
    assert refusal.code == code_pb2.RESOURCE_EXHAUSTED and refusal.message.startswith("Rate Limited")
    assert [d.retry_delay.seconds for d in details] == [retry_after], "RetryInfo says what Retry-After says"


def test_a_small_export_takes_one_hop_off_the_event_loop(
    dsn_server: str, make_org, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Identifying, inflating, converting and admitting a small export is one hop to the admission threads;
    an export larger than their bodies (api/admission.py) is converted and admitted in hops of its own."""
    from api import admission
    from api.routers import otlp as otlp_router

    hops: list[str] = []
    real = admission.admitted

    async def counting(size: int, func: Any, *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(func, "__name__", ""))
        return await real(size, func, *args, **kwargs)

    monkeypatch.setattr(otlp_router, "admitted", counting)
    org = make_org()
    now_ns = time.time_ns()

    def export(spans: int, first: int) -> None:
        body = {
            "resourceSpans": [
                {
                    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "carts"}}]},
                    "scopeSpans": [
                        {
                            "spans": [
                                _json_span(f"{n:032x}", f"{n:016x}", "POST", now_ns)
                                for n in range(first, first + spans)
                            ]
                        }
                    ],
                }
            ]
        }
        answer = httpx.post(
            f"{dsn_server}/api/{org['project_id']}/otlp/v1/traces",
            content=json.dumps(body),
            headers={"Content-Type": "application/json"},
            params={"sentry_key": str(org["app_key"])},
        )
        assert answer.status_code == 200 and "partialSuccess" not in answer.json(), answer.text

    export(1, 1)  # ~10 KB
    assert hops == ["road"]
    hops.clear()
    export(8, 100)  # ~83 KB: past SMALL_BODY_BYTES once inflated
    assert hops == ["road", "_trace_lines", "_admit"]
    assert settle_front_doors()  # the second export may be answered once spooled
    landed = _rows("SELECT count() FROM transactions FINAL WHERE org_id = {org:UInt64}", int(org["org_id"]))
    assert landed == [(9,)]
