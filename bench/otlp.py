"""OTLP/HTTP span ingest against `/api/ingest`: the same traces, the same real `stacklens serve`, one run.

    nice -n 10 .venv/bin/python bench/otlp.py                       # ~2 minutes: 2,000 requests' traces
    nice -n 10 .venv/bin/python bench/otlp.py --requests 20000      # a longer run

The corpus is made by OpenTelemetry's Python SDK: `--requests` instrumented API requests (a SERVER span with
the HTTP attributes, three to nine children — database queries, an http call, a cache read — and one request
in ten failing with an `exception` event whose stack is a real Python traceback), exported as the SDK's OTLP
encoder writes them. Each round sends those traces twice, with new trace ids each time (event ids derive from
them, so both land rather than deduplicate):

- as OTLP/HTTP: gzip protobuf `ExportTraceServiceRequest`s of `--per-request` requests' spans to
  `/api/<project id>/otlp/v1/traces` (the app key in `X-Stacklens-App-Key`), as an SDK's batch processor
  sends them (512 spans an export by default: about 64 requests);
- as `/api/ingest`: the very transactions and error events those spans become (the service's own OTLP
  conversion, :func:`stacklens.ingest.otlp.traces.trace_lines`, run here beforehand), gzip NDJSON batches of
  the same requests, with the API key — what a shipper would send for the same data.

Both from four concurrent clients. Events are the transactions and error events landed (the same number on
both roads). It prints events/s of both and the ratio OTLP / ingest (goal: OTLP within 10 % of `/api/ingest`,
ratio ≥ 0.9); medians over the rounds, which alternate which road goes first, so a burst of load from other
processes on a shared machine skews one round rather than one road.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

# bench/ingest.py, beside this file (bench/ is a folder of scripts, not a package).
sys.path.insert(0, str(Path(__file__).resolve().parent))
ingest_bench: Any = importlib.import_module("ingest")
sys.path.insert(0, str(ingest_bench.ROOT))

from stacklens.ingest.otlp.decode import PROTOBUF, read_traces  # noqa: E402 - after the path insert above
from stacklens.ingest.otlp.traces import trace_lines  # noqa: E402 - after the path insert above

CLIENTS = 4
QUERIES = [
    "SELECT * FROM orders WHERE id = $1",
    "SELECT * FROM order_lines WHERE order_id = $1",
    "SELECT * FROM customers WHERE id = $1",
]
ROUTES = ["/orders/{order_id}", "/carts/{cart_id}/items", "/products", "/checkout", "/users/{user_id}"]


def _load_order(order_id: int) -> None:
    raise LookupError(f"order {order_id} has no lines")


def build_requests(count: int, seed: int = 11) -> list[ExportTraceServiceRequest]:
    """One export per instrumented request (its spans as the SDK encodes them), in request order."""
    rng = random.Random(seed)
    memory = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create(
            {
                "service.name": "orders",
                "service.version": "4.2.0",
                "deployment.environment.name": "production",
            }
        )
    )
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("bench.web")
    exports = []
    for i in range(count):
        route = rng.choice(ROUTES)
        fails = rng.random() < 0.1
        attributes = {
            "http.request.method": rng.choice(["GET", "GET", "POST"]),
            "http.route": route,
            "url.path": route.replace("{order_id}", str(i))
            .replace("{cart_id}", "c9")
            .replace("{user_id}", "7"),
            "url.scheme": "https",
            "server.address": "shop.example",
            "http.response.status_code": 500 if fails else 200,
            "user_agent.original": "Mozilla/5.0 (X11; Linux x86_64) bench",
        }
        with tracer.start_as_current_span(route, kind=SpanKind.SERVER, attributes=attributes) as span:
            for n in range(rng.randint(3, 9)):
                kind = n % 3
                if kind == 0:
                    query = QUERIES[n % len(QUERIES)]
                    child: dict[str, str | int] = {"db.system.name": "postgresql", "db.query.text": query}
                    name, child_kind = query.split(" WHERE")[0], SpanKind.CLIENT
                elif kind == 1:
                    child = {
                        "http.request.method": "GET",
                        "url.full": f"https://inventory.internal/items/{rng.randint(1, 500)}",
                        "http.response.status_code": 200,
                    }
                    name, child_kind = "GET", SpanKind.CLIENT
                else:
                    child = {"cache.key": f"cart:{rng.randint(1, 99)}"}
                    name, child_kind = "cache.get", SpanKind.INTERNAL
                with tracer.start_as_current_span(name, kind=child_kind, attributes=child):
                    pass
            if fails:
                try:
                    _load_order(i)
                except LookupError as exc:
                    span.record_exception(exc)
                    span.set_status(Status(StatusCode.ERROR))
        exports.append(encode_spans(memory.get_finished_spans()))
        memory.clear()
    return exports


def _fresh(exports: list[ExportTraceServiceRequest], per_request: int) -> list[ExportTraceServiceRequest]:
    """The exports grouped ``per_request`` requests a body, every trace under a new trace id."""
    out = []
    for start in range(0, len(exports), per_request):
        merged = ExportTraceServiceRequest()
        for export in exports[start : start + per_request]:
            trace_id = uuid.uuid4().bytes
            for resource_spans in export.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        span.trace_id = trace_id
            merged.MergeFrom(export)
        out.append(merged)
    return out


def _post_all(base: str, requests: list[tuple[str, dict[str, str], bytes]]) -> float:
    """Seconds to post every request from CLIENTS threads; an answer but 200 (or a partial success) stops."""

    def send(chunk: list[tuple[str, dict[str, str], bytes]]) -> None:
        with httpx.Client(base_url=base, timeout=300) as http:
            for path, headers, body in chunk:
                answer = http.post(path, content=body, headers=headers)
                if answer.status_code != 200:
                    raise SystemExit(f"{path} answered {answer.status_code}: {answer.content[:300]!r}")
                if path.endswith("/traces") and answer.content:
                    raise SystemExit(f"a partial success: {answer.content[:300]!r}")

    chunks = [requests[i::CLIENTS] for i in range(CLIENTS)]
    started = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(send, chunks))
    return time.perf_counter() - started


def run(
    base: str,
    org: dict[str, Any],
    project: dict[str, Any],
    exports: list[ExportTraceServiceRequest],
    per_request: int,
    otlp_first: bool,
) -> dict[str, float]:
    app_key = str(project["app_key"])
    # /api/ingest: the lines the same spans become, under their own new trace ids.
    batches = [
        trace_lines(read_traces(e.SerializeToString(), PROTOBUF), app_key)
        for e in _fresh(exports, per_request)
    ]
    events = sum(len(b.lines) for b in batches)
    ingest_headers = {
        "Authorization": f"Bearer {org['api_key']}",
        "Content-Encoding": "gzip",
        "Content-Type": "application/x-ndjson",
    }
    api = [
        (
            "/api/ingest",
            {**ingest_headers, "Idempotency-Key": uuid.uuid4().hex},
            gzip.compress(b.body + b"\n", 6),
        )
        for b in batches
    ]
    path = f"/api/{project['project_id']}/otlp/v1/traces"
    otlp_headers = {"Content-Type": PROTOBUF, "Content-Encoding": "gzip", "X-Stacklens-App-Key": app_key}
    otlp = [
        (path, otlp_headers, gzip.compress(e.SerializeToString(), 6)) for e in _fresh(exports, per_request)
    ]
    if otlp_first:
        otlp_s, api_s = _post_all(base, otlp), _post_all(base, api)
    else:
        api_s, otlp_s = _post_all(base, api), _post_all(base, otlp)
    return {"api": events / api_s, "otlp": events / otlp_s, "ratio": api_s / otlp_s, "events": events}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--requests", type=int, default=2000, help="instrumented requests per run (default 2000)"
    )
    parser.add_argument(
        "--per-request",
        default="64,500",
        help="instrumented requests per HTTP request, comma-separated (64 ≈ the SDK's 512-span exports)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="stacklens-bench-otlp-"))
    port = ingest_bench._free_port()
    env = {
        **os.environ,
        "STACKLENS_DATA_DIR": str(work / "server"),
        "STACKLENS_RUN_SCHEDULES": "false",
        "STACKLENS_PORT": str(port),
        "PYTHONPATH": str(ingest_bench.ROOT),
    }
    for name in ("STACKLENS_WAREHOUSE_URL", "STACKLENS_DATABASE_URL", "STACKLENS_WAREHOUSE_DATABASE"):
        env.pop(name, None)
    org = ingest_bench._cli(
        env,
        "admin",
        "create-org",
        "--name",
        "Bench",
        "--owner-email",
        "bench@example.com",
        "--password",
        "bench-password-1",
        "--json",
    )
    project = ingest_bench._cli(env, "admin", "create-project", "--org", "Bench", "--name", "Shop", "--json")
    subprocess.run(
        [*ingest_bench.STACKLENS, "admin", "set-quota", "--org", "Bench", "--events-per-minute", "100000000"],
        env=env,
        cwd=ingest_bench.ROOT,
        check=True,
        capture_output=True,
    )
    print(f"building {args.requests} instrumented requests with opentelemetry-sdk ...", flush=True)
    exports = build_requests(args.requests)
    spans = sum(len(s.spans) for e in exports for r in e.resource_spans for s in r.scope_spans)
    print(f"{spans} spans, {spans / len(exports):.1f} a request", flush=True)
    server = subprocess.Popen(
        [*ingest_bench.STACKLENS, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        cwd=ingest_bench.ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{base}/api/health", timeout=1).status_code in (200, 503):
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            raise SystemExit("stacklens serve did not answer within 60 s")
        print(
            f"{'per request':>11} {'round':>5} {'events':>7} {'ingest ev/s':>12} {'otlp ev/s':>10} {'ratio':>6}"
        )
        for size in [int(s) for s in args.per_request.split(",")]:
            rounds = []
            for index in range(1, args.rounds + 1):
                figures = run(base, org, project, exports, size, otlp_first=index % 2 == 0)
                rounds.append(figures)
                print(
                    f"{size:>11} {index:>5} {figures['events']:>7.0f} {figures['api']:>12.0f} "
                    f"{figures['otlp']:>10.0f} {figures['ratio']:>6.2f}",
                    flush=True,
                )
            med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
            print(
                f"{size:>11} {'med':>5} {med['events']:>7.0f} {med['api']:>12.0f} {med['otlp']:>10.0f} "
                f"{med['ratio']:>6.2f}",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
