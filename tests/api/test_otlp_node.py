"""OpenTelemetry's Node SDK (@opentelemetry/sdk-node, the http instrumentation, the OTLP/HTTP trace exporters
in JSON and protobuf, the OTLP/HTTP logs exporter, all from the npm registry) around a small instrumented http
API (tests/api/otel_node/app.js), configured only by the environment docs/opentelemetry.md gives, into a real
server: the server spans are API endpoints with their routes, the database and http client calls are spans of
the waterfall, the exception is an issue linked to its trace, and the request's logs carry the trace."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.sentry_live import _warehouse
from tests.stacklens.performance.perf_seed import build_facts

APP_DIR = Path(__file__).parent / "otel_node"


@pytest.fixture(scope="module")
def otel_node() -> Path:
    """The npm packages of tests/api/otel_node (``npm ci`` when node_modules is missing)."""
    npm = shutil.which("npm")
    assert npm, "npm is required (Node 20 + npm)"
    if not (APP_DIR / "node_modules" / "@opentelemetry" / "sdk-node").is_dir():
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=APP_DIR, check=True, capture_output=True, timeout=600
        )
    return APP_DIR


def _run_app(app_dir: Path, server: str, org: dict[str, Any], encoding: str) -> dict[str, Any]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"{server}/api/{org['project_id']}/otlp",
        "OTEL_EXPORTER_OTLP_HEADERS": f"x-stacklens-app-key={org['app_key']}",
        "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
        "OTEL_SERVICE_NAME": "orders-api",
        "OTEL_RESOURCE_ATTRIBUTES": "service.version=3.1.0,deployment.environment.name=production",
        "OTEL_METRICS_EXPORTER": "none",  # StackLens takes traces and logs (docs/opentelemetry.md)
        "STACKLENS_OTLP_ENCODING": encoding,
    }
    done = subprocess.run(
        ["node", "app.js"], cwd=app_dir, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # The SDK reports a refused export on stderr ("OTLPExporterError …"): every export must have landed.
    assert "error" not in done.stderr.lower(), done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["statuses"] == [200, 500], result
    return result


def _rows(sql: str, org_id: int) -> list[tuple[Any, ...]]:
    return list(_warehouse[0].query(sql, parameters={"org": org_id}).result_rows)


@pytest.mark.parametrize("encoding", ["json", "protobuf"])
def test_node_sdk_spans_logs_and_errors_land_where_users_look(
    dsn_server: str, make_org, otel_node: Path, encoding: str
) -> None:
    org = make_org()
    org_id = int(org["org_id"])
    traces = _run_app(otel_node, dsn_server, org, encoding)
    ok, failed = traces["ok"], traces["failed"]

    # The two requests' server spans, and the inventory call each made to the same app (a SERVER span of
    # the same trace under a remote parent): four transactions with the route, method, status and resource.
    rows = _rows(
        "SELECT trace_id, op, page, http_method, http_status, release, environment, service, toString(event_id) "
        "FROM transactions FINAL WHERE org_id = {org:UInt64} ORDER BY trace_id, page",
        org_id,
    )
    found = {(r[0], r[2]): r for r in rows}
    assert len(rows) == 4, rows
    for trace, status in ((ok, 200), (failed, 500)):
        orders = found[(trace, "/orders/:id")]
        assert orders[1:8] == (
            "http.server",
            "/orders/:id",
            "GET",
            status,
            "3.1.0",
            "production",
            "orders-api",
        )
        assert found[(trace, "/inventory/:sku")][1:5] == ("http.server", "/inventory/:sku", "GET", 200)
    failed_event = found[(failed, "/orders/:id")][8]

    # Its children are the waterfall's spans: the database call and the http call.
    bearer = {"Authorization": f"Bearer {org['api_key']}"}
    api = f"{dsn_server}/api/projects/{org['project']}"
    waterfall = httpx.get(f"{api}/performance/waterfall/{failed_event}", headers=bearer, timeout=30)
    assert waterfall.status_code == 200, waterfall.text
    body = waterfall.json()
    assert body["trace_id"] == failed and body["http_status"] == 500
    spans = {(s["op"], s["description"]) for s in body["spans"]}
    assert ("db", "SELECT * FROM orders WHERE id = $1") in spans, spans
    assert any(op == "http.client" and d.startswith("GET http://127.0.0.1:") for op, d in spans), spans
    assert any(d.endswith("/inventory/ab-1") for _, d in spans), spans

    # API endpoints, server side: the two routes with their calls and failures.
    now = datetime.now(UTC)
    build_facts(_warehouse[0], now - timedelta(hours=2), now + timedelta(hours=1))
    endpoints = httpx.get(f"{api}/performance/endpoints", params={"range": "24h"}, headers=bearer, timeout=30)
    assert endpoints.status_code == 200, endpoints.text
    server = sorted(
        (r["method"], r["path"], r["calls"], r["s5xx"])
        for r in endpoints.json()["rows"]
        if r["source"] == "server"
    )
    assert server == [("GET", "/inventory/:sku", 2, 0), ("GET", "/orders/:id", 2, 1)], server

    # The exception is an issue; its event is in the failed request's trace, its stack read from Node's.
    issues = httpx.get(f"{api}/issues", headers=bearer, timeout=30).json()["issues"]
    assert [i["title"][:9] for i in issues] == ["TypeError"], issues
    events = httpx.get(
        f"{dsn_server}/api/issues/{issues[0]['id']}/events", headers=bearer, timeout=30
    ).json()["events"]
    assert len(events) == 1, events
    event = httpx.get(f"{dsn_server}/api/events/{events[0]['event_id']}", headers=bearer, timeout=30).json()
    payload = event["payload"]
    assert payload["contexts"]["trace"]["trace_id"] == failed
    assert (payload["release"], payload["environment"]) == ("3.1.0", "production")
    exception = payload["exception"]["values"][0]
    assert exception["type"] == "TypeError" and "reduce" in exception["value"], exception
    functions = [frame.get("function") for frame in exception["stacktrace"]["frames"]]
    assert "totalOf" in functions, functions
    assert any(f.get("filename", "").endswith("app.js") for f in exception["stacktrace"]["frames"])

    # The request's log records carry its trace and the resource.
    records = httpx.get(f"{api}/logs", params={"trace_id": failed}, headers=bearer, timeout=30).json()["rows"]
    assert [(r["severity"], r["body"]) for r in records] == [
        ("error", "order 13 failed: " + exception["value"]),
        ("info", "loading order 13"),
    ], records
    assert {(r["service"], r["release"], r["environment"]) for r in records} == {
        ("orders-api", "3.1.0", "production")
    }
    assert records[1]["attributes"]["order.id"] == "13" and len(records[1]["span_id"]) == 16
    assert len(httpx.get(f"{api}/logs", headers=bearer, timeout=30).json()["rows"]) == 3  # and order 7's
