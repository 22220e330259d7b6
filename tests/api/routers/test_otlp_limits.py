"""What one OTLP export may cost, through a real server: 330,000 spans of one trace (a 20 MiB protobuf sent
gzipped, with nothing but a public key) are refused with a 413 `google.rpc.Status` in well under a second's
conversion and without the gigabyte converting them took; a trace over its bound in one export keeps its first
spans and the rest are counted in `partial_success`; and large exports are decoded two at a time, a third
waiting too long is answered 503 with Retry-After."""

from __future__ import annotations

import gzip
import os
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest
from google.rpc import code_pb2, status_pb2
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from api.routers import otlp as otlp_router
from stacklens.blocking import may_block
from stacklens.ingest.otlp import decode as otlp_decode
from stacklens.ingest.otlp import logs as otlp_logs
from stacklens.ingest.otlp import traces as otlp_traces
from stacklens.settings import Settings
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.conftest import override_settings

PAGE = 4096


def _export(spans: int, trace_id: bytes) -> bytes:
    """One trace: a server span and ``spans - 1`` children, each with a few attributes, as exporters send."""
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    attribute = resource.resource.attributes.add()
    attribute.key, attribute.value.string_value = "service.name", "checkout"
    scope = resource.scope_spans.add()
    root = b"\xff" * 8
    for i in range(spans):
        span = scope.spans.add()
        span.trace_id, span.span_id, span.name = trace_id, (i + 1).to_bytes(8, "big") if i else root, "GET /x"
        span.kind = Span.SPAN_KIND_SERVER if i == 0 else Span.SPAN_KIND_CLIENT
        if i:
            span.parent_span_id = root
        span.start_time_unix_nano = 1_760_000_000_000_000_000 + i * 1000
        span.end_time_unix_nano = span.start_time_unix_nano + 500
        for key, value in (("http.route", "/orders/{id}"), ("url.path", f"/orders/{i}")):
            attribute = span.attributes.add()
            attribute.key, attribute.value.string_value = key, value
    return request.SerializeToString()


@contextmanager
def _peak_rss() -> Iterator[list[int]]:
    """The largest growth of this process's resident memory (the server runs in it) while the block runs."""
    with open("/proc/self/statm") as statm:
        start = int(statm.read().split()[1]) * PAGE
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.01):
            with open("/proc/self/statm") as statm:
                peak[0] = max(peak[0], int(statm.read().split()[1]) * PAGE - start)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()


def _url(dsn_server: str, org: dict) -> tuple[str, dict[str, str]]:
    headers = {"Content-Type": "application/x-protobuf", "X-Stacklens-App-Key": str(org["app_key"])}
    return f"{dsn_server}/api/{org['project_id']}/otlp/v1/traces", headers


def test_an_export_of_330k_spans_is_refused_before_they_are_converted(dsn_server: str, make_org) -> None:
    url, headers = _url(dsn_server, make_org())
    raw = _export(330_000, os.urandom(16))
    body = gzip.compress(raw, 1)
    assert len(raw) > 18 * 1024 * 1024 and len(body) < 20 * 1024 * 1024
    del raw
    with _peak_rss() as grown:
        started = time.monotonic()
        answer = httpx.post(url, content=body, headers={**headers, "Content-Encoding": "gzip"}, timeout=120)
        took = time.monotonic() - started
    assert answer.status_code == 413, answer.content[:300]
    refusal = status_pb2.Status.FromString(answer.content)
    assert refusal.code == code_pb2.INVALID_ARGUMENT, refusal  # what OTLP/HTTP maps a 413 to
    assert "330000 spans" in refusal.message and "at most 10000" in refusal.message, refusal.message
    # Inflating and parsing 20 MiB, no conversion: it took 14 s and +1.18 GB before the bound.
    print(f"refused in {took:.2f} s, resident memory grew {grown[0] / 2**20:.0f} MiB at most")
    assert took < 5.0, took
    assert grown[0] < 400 * 1024 * 1024, grown[0]


def test_a_trace_over_its_bound_keeps_its_first_spans(
    dsn_server: str, make_org, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(otlp_decode, "MAX_SPANS_PER_TRACE", 300)
    url, headers = _url(dsn_server, make_org())
    trace_id = os.urandom(16)
    answer = httpx.post(url, content=_export(500, trace_id), headers=headers, timeout=60)
    assert answer.status_code == 200, answer.content[:300]
    partial = ExportTraceServiceResponse.FromString(answer.content).partial_success
    assert partial.rejected_spans == 200
    assert f"trace {trace_id.hex()}: more than 300 spans in one export" in partial.error_message


def test_large_exports_decode_two_at_a_time_then_503(
    dsn_server: str, make_org, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, headers = _url(dsn_server, make_org())
    body = _export(12_000, os.urandom(16))  # over the 1 MiB that takes a slot (and over the span bound)
    assert len(body) >= otlp_decode.LARGE_BODY_BYTES
    monkeypatch.setattr(otlp_decode, "LARGE_DECODE_WAIT_S", 0.2)
    with ExitStack() as held:  # two large decodes under way
        for _ in range(otlp_decode.LARGE_DECODES):
            held.enter_context(otlp_decode.large_decode_slot(len(body)))
        busy = httpx.post(url, content=body, headers=headers, timeout=60)
    assert busy.status_code == 503, busy.content[:300]
    assert busy.headers["retry-after"]
    assert "large OTLP exports are being decoded" in status_pb2.Status.FromString(busy.content).message
    # Once a slot is free the same export is decoded (and refused for its size: 12,000 spans).
    again = httpx.post(url, content=body, headers=headers, timeout=60)
    assert again.status_code == 413


def _roots(count: int) -> bytes:
    """``count`` server spans, each the root of a trace of its own: ``count`` transactions."""
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for i in range(count):
        span = scope.spans.add()
        span.trace_id, span.span_id, span.name = os.urandom(16), (i + 1).to_bytes(8, "big"), "GET /x"
        span.kind = Span.SPAN_KIND_SERVER
        span.start_time_unix_nano = 1_760_000_000_000_000_000 + i * 1000
        span.end_time_unix_nano = span.start_time_unix_nano + 500
    return request.SerializeToString()


def _records(count: int) -> bytes:
    request = ExportLogsServiceRequest()
    scope = request.resource_logs.add().scope_logs.add()
    for i in range(count):
        record = scope.log_records.add()
        record.time_unix_nano = 1_760_000_000_000_000_000 + i
        record.body.string_value = f"line {i}"
    return request.SerializeToString()


def test_spike_protection_refuses_an_export_before_its_conversion(
    settings: Settings, make_org, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #62: 9,999 spans were converted (~3 s of CPU) only for spike protection to refuse them. The
    export's transactions (and log records) are counted from the decoded request first, and an export the
    quotas cannot take is refused before a span is converted."""
    current = settings.model_copy(update={"spike_floor_per_minute": 100})
    override_settings(current)
    apply_migrations(current)
    org = make_org()
    converted: list[str] = []
    real_traces, real_logs = otlp_traces.trace_lines, otlp_logs.log_lines
    monkeypatch.setattr(otlp_router, "trace_lines", lambda *a: converted.append("traces") or real_traces(*a))
    monkeypatch.setattr(otlp_router, "log_lines", lambda *a: converted.append("logs") or real_logs(*a))
    # Every admission steps aside from the event loop after the conversion, as one does when a cached
    # control-store read has expired: the conversion is kept for the run on a thread, not made again.
    real_admit = otlp_router._admit
    monkeypatch.setattr(otlp_router, "_admit", lambda *a: may_block("a step") or real_admit(*a))
    headers = {"Content-Type": "application/x-protobuf", "X-Stacklens-App-Key": str(org["app_key"])}
    base_path = f"/api/{org['project_id']}/otlp/v1"
    with serve(current) as base:
        # 60 transactions of the 100 spike protection holds the project to this minute: converted, landed.
        taken = httpx.post(f"{base}{base_path}/traces", content=_roots(60), headers=headers, timeout=60)
        assert taken.status_code == 200, taken.content[:300]
        assert converted == ["traces"]
        # 60 more, and 60 log records: over what is left, refused before a span or record is converted.
        refused = httpx.post(f"{base}{base_path}/traces", content=_roots(60), headers=headers, timeout=60)
        assert refused.status_code == 429, refused.content[:300]
        status = status_pb2.Status.FromString(refused.content)
        assert status.code == code_pb2.RESOURCE_EXHAUSTED and "spike protection" in status.message
        assert refused.headers["Retry-After"]
        refused = httpx.post(f"{base}{base_path}/logs", content=_records(60), headers=headers, timeout=60)
        assert refused.status_code == 429, refused.content[:300]
        assert converted == ["traces"]  # neither refused export was converted
        # The check spent nothing: what is left still takes an export that fits.
        fits = httpx.post(f"{base}{base_path}/logs", content=_records(30), headers=headers, timeout=60)
        assert fits.status_code == 200, fits.content[:300]
        assert converted == ["traces", "logs"]
        # The refused items are counted, as a refusal after the conversion counted them.
        rows = httpx.get(f"{base}/api/outcomes", headers={"Authorization": f"Bearer {org['api_key']}"}).json()
        refusals = {
            (row["category"], row["reason"]): row["quantity"]
            for row in rows["rows"]
            if row["outcome"] == "rate_limited"
        }
        assert refusals == {("transaction", "spike_protection"): 60, ("log", "spike_protection"): 60}
