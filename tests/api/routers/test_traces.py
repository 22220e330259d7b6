"""One trace from every source through a real server (docs/traces.md): a browser page load (the envelope
@sentry/browser sends, with its fetch span) in one project, the server transaction sentry-python sends when it
continues that fetch's trace header, and the worker's OTLP spans (OpenTelemetry's own Python SDK) continuing
the server's queue span, with an OTLP log record and a span whose parent never arrived — one tree with
its services, errors and logs in place. The trace search finds it by service, operation and duration; another
organization gets 404."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from typing import Any

import httpx
from opentelemetry import trace as otel_trace
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, TraceFlags

from tests.api.sentry_live import envelope

SERVER_SCRIPT = """
import sys, sentry_sdk
sentry_sdk.init(dsn=sys.argv[1], traces_sample_rate=1.0, release="shop@1.0.0")
sentry_sdk.set_tag("service", "shop")
txn = sentry_sdk.continue_trace({"sentry-trace": sys.argv[2]}, op="http.server", name="/api/checkout")
with sentry_sdk.start_transaction(txn):
    with sentry_sdk.start_span(op="db", name="INSERT INTO orders VALUES (?)"):
        pass
    with sentry_sdk.start_span(op="queue.publish", name="order-mail") as publish:
        try:
            raise ValueError("postcode 99 999 has no shipping zone")
        except ValueError:
            event_id = sentry_sdk.capture_exception()
print(event_id, publish.span_id, txn.span_id)
sentry_sdk.flush(30)
"""


def _dsn(server: str, app_key: str, project_id: int) -> str:
    return server.replace("http://", f"http://{app_key}@") + f"/{project_id}"


def _browser_pageload(trace_id: str, root: str, fetch: str) -> dict[str, Any]:
    """A page load as @sentry/browser sends it: its root span and its fetch of the checkout API."""
    now = time.time()
    return {
        "event_id": uuid.uuid4().hex,
        "type": "transaction",
        "platform": "javascript",
        "transaction": "/checkout",
        "transaction_info": {"source": "url"},
        "start_timestamp": now - 2.0,
        "timestamp": now,
        "release": "web@1.0.0",
        "request": {"url": "https://shop.example/checkout"},
        "contexts": {"trace": {"trace_id": trace_id, "span_id": root, "op": "pageload", "status": "ok"}},
        "spans": [
            {
                "trace_id": trace_id,
                "span_id": fetch,
                "parent_span_id": root,
                "op": "http.client",
                "description": "POST https://shop.example/api/checkout",
                "start_timestamp": now - 1.5,
                "timestamp": now - 0.2,
                "data": {"http.method": "POST", "http.response.status_code": 200},
            },
            {
                "trace_id": trace_id,
                "span_id": uuid.uuid4().hex[:16],
                "parent_span_id": root,
                "op": "resource.script",
                "description": "https://shop.example/static/app.js",
                "start_timestamp": now - 1.9,
                "timestamp": now - 1.7,
            },
        ],
        "sdk": {"name": "sentry.javascript.browser", "version": "10.0.0"},
    }


def _worker(server: str, org: dict[str, Any], trace_id: str, publish: str) -> None:
    """The worker's job as OpenTelemetry exports it: a CONSUMER span continuing the server's publish span,
    a database span under it and a log record in it; and a mailer span whose parent was never exported."""
    base = f"{server}/api/{org['project_id']}/otlp/v1"
    headers = {"x-stacklens-app-key": str(org["app_key"])}
    parent = SpanContext(int(trace_id, 16), int(publish, 16), is_remote=True, trace_flags=TraceFlags(1))
    for service, parent_context in (
        ("worker", parent),
        ("mailer", SpanContext(int(trace_id, 16), 0xDEADBEEF0001, is_remote=True, trace_flags=TraceFlags(1))),
    ):
        provider = TracerProvider(resource=Resource.create({"service.name": service}))
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{base}/traces", headers=headers)))
        logs = LoggerProvider(resource=Resource.create({"service.name": service}))
        logs.add_log_record_processor(
            SimpleLogRecordProcessor(OTLPLogExporter(f"{base}/logs", headers=headers))
        )
        tracer = provider.get_tracer("jobs")
        context = otel_trace.set_span_in_context(NonRecordingSpan(parent_context))
        with tracer.start_as_current_span(f"{service} job", context=context, kind=SpanKind.CONSUMER):
            with tracer.start_as_current_span("SELECT customer", attributes={"db.system.name": "postgresql"}):
                time.sleep(0.01)
            if service == "worker":
                logs.get_logger("jobs").emit(body="mail for order 7 queued", severity_text="INFO")
        provider.shutdown()
        logs.shutdown()


def _wait_trace(server: str, key: str, trace_id: str, spans: int, logs: int) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    answer: dict[str, Any] = {}
    while time.monotonic() < deadline:
        response = httpx.get(f"{server}/api/traces/{trace_id}", headers={"Authorization": f"Bearer {key}"})
        if response.status_code == 200:
            answer = response.json()
            if answer["span_count"] >= spans and len(answer["logs"]) >= logs and answer["errors"]:
                return answer
        time.sleep(0.3)
    raise AssertionError(f"the trace did not land: {answer}")


def test_one_trace_from_browser_server_and_otlp_worker(dsn_server: str, make_org) -> None:
    from stacklens.control.db import session_scope
    from stacklens.control.projects import create_project
    from stacklens.settings import get_settings

    org = make_org()
    with session_scope(get_settings()) as session:
        storefront, storefront_key = create_project(session, int(org["org_id"]), "Storefront", "javascript")
        storefront_id = storefront.id
    trace_id, root, fetch = uuid.uuid4().hex, uuid.uuid4().hex[:16], uuid.uuid4().hex[:16]
    pageload = _browser_pageload(trace_id, root, fetch)
    body = envelope([({"type": "transaction"}, json.dumps(pageload).encode())])
    sent = httpx.post(
        f"{dsn_server}/api/{storefront_id}/envelope/", params={"sentry_key": storefront_key}, content=body
    )
    assert sent.status_code == 200, sent.text

    env = {k: v for k, v in os.environ.items() if not k.startswith("SENTRY_")}
    dsn = _dsn(dsn_server, str(org["app_key"]), int(org["project_id"]))
    result = subprocess.run(
        [sys.executable, "-c", SERVER_SCRIPT, dsn, f"{trace_id}-{fetch}-1"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    event_id, publish, server_root = result.stdout.split()
    _worker(dsn_server, org, trace_id, publish)

    # 3 browser + 3 server + 2 worker + 2 mailer spans
    trace = _wait_trace(dsn_server, str(org["api_key"]), trace_id, spans=10, logs=1)
    spans = {s["span_id"]: s for s in trace["spans"]}
    assert trace["span_count"] == 10 and trace["trace_id"] == trace_id
    assert {s["name"] for s in trace["services"]} == {"storefront (browser)", "shop", "worker", "mailer"}
    assert [s["index"] for s in trace["services"]] == [0, 1, 2, 3]
    assert trace["roots"] == [root] and trace["spans"][0]["span_id"] == root
    assert spans[root]["service"] == "storefront (browser)" and spans[root]["is_transaction"]
    server = spans[server_root]
    assert (server["parent_span_id"], server["depth"], server["service"]) == (fetch, 2, "shop")
    assert server["op"] == "http.server" and server["project"] == org["project"]
    consumer = next(s for s in trace["spans"] if s["description"] == "worker job")
    assert (consumer["parent_span_id"], consumer["depth"], consumer["service"]) == (publish, 4, "worker")
    assert spans[publish]["parent_span_id"] == server_root
    order = [s["span_id"] for s in trace["spans"]]
    assert (
        order.index(root) < order.index(fetch) < order.index(server_root) < order.index(consumer["span_id"])
    )
    mailer = next(s for s in trace["spans"] if s["description"] == "mailer job")
    assert mailer["orphan"] and trace["orphans"] == [mailer["span_id"]] and mailer["depth"] == 0
    assert order[-2:] == [mailer["span_id"], mailer["children"][0]], "orphan subtrees come last"
    assert root in trace["critical_path"] and not mailer["critical"]
    assert [e["event_id"] for e in trace["errors"]] == [event_id]
    assert trace["errors"][0]["span_id"] in spans and spans[trace["errors"][0]["span_id"]]["error_ids"]
    assert [log["body"] for log in trace["logs"]] == ["mail for order 7 queued"]
    assert trace["logs"][0]["span_id"] == consumer["span_id"] and consumer["log_count"] == 1

    bearer = {"Authorization": f"Bearer {org['api_key']}"}
    search = f"{dsn_server}/api/projects/{org['project']}/traces"
    for params in ({}, {"service": "worker"}, {"operation": "db"}, {"operation": "/api/checkout"}):
        rows = httpx.get(search, params=params, headers=bearer).json()["rows"]
        assert [r["trace_id"] for r in rows] == [trace_id], params
    row = httpx.get(search, headers=bearer).json()["rows"][0]
    assert set(row["services"]) == {"storefront (browser)", "shop", "worker", "mailer"} and row["spans"] == 10
    assert row["errors"] == 1 and row["root"] == "/checkout" and row["duration_ms"] > 0
    for params in ({"service": "nope"}, {"min_duration": "600000"}, {"status": "internal_error"}):
        assert httpx.get(search, params=params, headers=bearer).json()["rows"] == [], params
    bad = httpx.get(search, params={"min_duration": "soon"}, headers=bearer)
    assert bad.status_code == 400 and "min_duration" in bad.json()["detail"]

    other = make_org("Other")
    theirs = {"Authorization": f"Bearer {other['api_key']}"}
    assert httpx.get(f"{dsn_server}/api/traces/{trace_id}", headers=theirs).status_code == 404
    assert httpx.get(f"{dsn_server}/api/projects/{org['project']}/traces", headers=theirs).status_code == 404
    invalid = httpx.get(f"{dsn_server}/api/traces/not-a-trace", headers=bearer)
    assert invalid.status_code == 400 and "trace_id" in invalid.json()["detail"]
