"""OTLP/HTTP logs from OpenTelemetry's own Python SDK (LoggingHandler → OTLPLogExporter, protobuf, gzip) and
from a JSON body written by the specification, into a real server: records land in `logs` with their
severity, body, attributes, trace and resource; secrets are scrubbed; a resend lands nothing twice; bad
records are refused alone in partial_success; the logs API finds them by its filters, as CSV too, and never
across organizations."""

from __future__ import annotations

import csv
import gzip
import io
import json
import time
from typing import Any

import httpx
from google.rpc import code_pb2, error_details_pb2, status_pb2
from opentelemetry._logs import SeverityNumber
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

from tests.api.sentry_live import _warehouse

RESOURCE = {"service.name": "billing", "service.version": "2.0.1", "deployment.environment.name": "staging"}


def _rows(sql: str, org_id: int) -> list[tuple[Any, ...]]:
    return list(_warehouse[0].query(sql, parameters={"org": org_id}).result_rows)


class _Logger:
    """What a logging bridge does: each call emits one record through the SDK's logs API (in the current
    span's context, so the record carries its trace and span ids)."""

    def __init__(self, url: str, app_key: str) -> None:
        self.provider = LoggerProvider(resource=Resource.create(RESOURCE))
        exporter = OTLPLogExporter(
            endpoint=url, headers={"x-stacklens-app-key": app_key}, compression=Compression.Gzip
        )
        self.provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
        self.logger = self.provider.get_logger("billing.jobs")

    def _emit(self, number: SeverityNumber, text: str, body: str, attributes: dict[str, Any]) -> None:
        self.logger.emit(
            timestamp=time.time_ns(),
            severity_number=number,
            severity_text=text,
            body=body,
            attributes=attributes,
        )
        time.sleep(0.002)  # distinct times: the test reads them in order

    def warning(self, body: str, **attributes: Any) -> None:
        self._emit(SeverityNumber.WARN, "WARN", body, attributes)

    def error(self, body: str, **attributes: Any) -> None:
        self._emit(SeverityNumber.ERROR, "ERROR", body, attributes)

    def info(self, body: str, **attributes: Any) -> None:
        self._emit(SeverityNumber.INFO, "INFO", body, attributes)


def test_python_sdk_logs_land_scrubbed_once_and_the_api_finds_them(dsn_server: str, make_org) -> None:
    org, other = make_org(), make_org("Other")
    url = f"{dsn_server}/api/{org['project_id']}/otlp/v1/logs"
    logger = _Logger(url, str(org["app_key"]))
    tracer = TracerProvider().get_tracer("billing")
    with tracer.start_as_current_span("charge") as span:
        trace_id = format(span.get_span_context().trace_id, "032x")
        logger.warning(
            "charge of order 42 retried, card 4111 1111 1111 1111", **{"order.id": 42, "password": "hunter2"}
        )
        logger.error("payment provider refused order 42")
    logger.info("nightly settlement done")
    logger.provider.shutdown()

    org_id = int(org["org_id"])
    rows = _rows(
        "SELECT severity, severity_number, severity_text, body, attributes['order.id'], attributes['password'], "
        "trace_id, service, release, environment, source FROM logs WHERE org_id = {org:UInt64} ORDER BY timestamp",
        org_id,
    )
    assert [r[:3] for r in rows] == [("warn", 13, "WARN"), ("error", 17, "ERROR"), ("info", 9, "INFO")]
    warn = rows[0]
    assert warn[3] == "charge of order 42 retried, card [FILTERED]", "a card number is scrubbed"
    assert (warn[4], warn[5]) == ("42", "[FILTERED]"), "a sensitive attribute name filters its value"
    assert warn[6] == trace_id and rows[1][6] == trace_id and rows[2][6] == ""
    assert all(r[7:] == ("billing", "2.0.1", "staging", "otlp") for r in rows)

    bearer = {"Authorization": f"Bearer {org['api_key']}"}
    api = f"{dsn_server}/api/projects/{org['project']}/logs"
    newest = httpx.get(api, headers=bearer)
    assert newest.status_code == 200, newest.text
    assert newest.json()["rows"][0]["body"] == "nightly settlement done", "newest first"
    record = newest.json()["rows"][2]
    assert set(record) >= {
        "timestamp",
        "severity",
        "body",
        "attributes",
        "trace_id",
        "span_id",
        "service",
        "release",
        "environment",
    }
    assert record["attributes"]["order.id"] == "42" and len(record["span_id"]) == 16
    found = httpx.get(api, params={"query": "ORDER 42", "severity": "error"}, headers=bearer).json()["rows"]
    assert [r["body"] for r in found] == ["payment provider refused order 42"]
    by_attribute = httpx.get(api, params={"query": "42", "severity": "warn"}, headers=bearer).json()["rows"]
    assert len(by_attribute) == 1
    assert len(httpx.get(api, params={"trace_id": trace_id}, headers=bearer).json()["rows"]) == 2
    assert httpx.get(api, params={"service": "nope"}, headers=bearer).json()["rows"] == []
    page1 = httpx.get(api, params={"limit": 2}, headers=bearer).json()
    page2 = httpx.get(api, params={"limit": 2, "cursor": page1["next_cursor"]}, headers=bearer).json()
    assert len(page1["rows"]) == 2 and len(page2["rows"]) == 1 and page2["next_cursor"] is None
    assert page2["rows"][0]["body"].startswith("charge of order 42")
    bad = httpx.get(api, params={"severity": "loud"}, headers=bearer)
    assert bad.status_code == 400 and "severity" in bad.json()["detail"], bad.text
    assert httpx.get(api, params={"trace_id": "xyz"}, headers=bearer).status_code == 400
    assert httpx.get(api, params={"cursor": "garbage"}, headers=bearer).status_code == 400

    exported = httpx.get(api, params={"format": "csv", "severity": "warn,error"}, headers=bearer)
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(exported.text)))
    assert [r["severity"] for r in table] == ["error", "warn"]
    assert json.loads(table[1]["attributes"])["order.id"] == "42"

    # Another organization's API key sees nothing of this project.
    elsewhere = httpx.get(api, headers={"Authorization": f"Bearer {other['api_key']}"})
    assert elsewhere.status_code == 404, elsewhere.text


def _record(time_ns: int, body: str, **extra: Any) -> dict[str, Any]:
    return {
        "timeUnixNano": str(time_ns),
        "severityNumber": 9,
        "severityText": "Information",
        "body": {"stringValue": body},
        "attributes": [{"key": "http.route", "value": {"stringValue": "/invoices/{id}"}}],
        **extra,
    }


def test_json_export_refuses_bad_records_alone_and_lands_nothing_twice(dsn_server: str, make_org) -> None:
    org = make_org()
    now_ns = time.time_ns()
    body = {
        "resourceLogs": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "invoices"}}]},
                "scopeLogs": [
                    {
                        "scope": {"name": "invoices.api"},
                        "logRecords": [
                            _record(now_ns, "invoice 7 sent", traceId="5b8efff798038103d269b633813fc60c"),
                            _record(now_ns, "short trace id", traceId="5b8efff7"),
                            _record(now_ns, "bad span id", spanId="not-hex!"),
                            _record(now_ns, "unknown severity", severityNumber=99),
                            # 400 days old: past the log retention, stored under the receive time.
                            _record(now_ns - 400 * 86_400 * 10**9, "from an old clock"),
                            _record(now_ns + 86_400 * 10**9, "from a fast clock"),
                            _record(now_ns, "deep " + "x" * 20_000, unknownField={"ignored": True}),
                        ],
                    }
                ],
            }
        ]
    }
    url = f"{dsn_server}/api/{org['project_id']}/otlp/v1/logs"
    headers = {"Content-Type": "application/json", "X-Stacklens-App-Key": str(org["app_key"])}
    answer = httpx.post(url, content=json.dumps(body), headers=headers)
    assert answer.status_code == 200, answer.text
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedLogRecords"] == "3", partial
    assert "trace_id is 4 bytes" in partial["errorMessage"]
    assert "spanId 'not-hex!' is not hex" in partial["errorMessage"]
    assert "severity_number" in partial["errorMessage"]

    org_id = int(org["org_id"])
    rows = _rows(
        "SELECT body, severity, service, timestamp, attributes['stacklens.sent_timestamp'], "
        "attributes['stacklens.trimmed'], trace_id FROM logs WHERE org_id = {org:UInt64} ORDER BY body",
        org_id,
    )
    assert [r[0][:10] for r in rows] == ["deep xxxxx", "from a fas", "from an ol", "invoice 7 "]
    deep, fast, old, sent = rows
    assert len(deep[0]) == 8192 and deep[5] == "body", "a value too long is cut and marked"
    for replaced in (old, fast):
        assert replaced[4] and abs(replaced[3].timestamp() - now_ns / 1e9) < 120, "a time replaced, kept"
    assert sent[1:3] == ("info", "invoices") and sent[6] == "5b8efff798038103d269b633813fc60c"

    # The same export again (gzip, protobuf answer asked by content type stays JSON): nothing lands twice.
    again = httpx.post(
        url,
        content=gzip.compress(json.dumps(body).encode()),
        headers={**headers, "Content-Encoding": "gzip"},
    )
    assert again.status_code == 200 and again.json()["partialSuccess"]["rejectedLogRecords"] == "3"
    assert _rows("SELECT count() FROM logs WHERE org_id = {org:UInt64}", org_id) == [(4,)]

    # Protobuf answers in protobuf; an unreadable body is 400; a bad key 403 before anything is read.
    proto = {"Content-Type": "application/x-protobuf", "X-Stacklens-App-Key": str(org["app_key"])}
    empty = httpx.post(url, content=b"", headers=proto)
    assert empty.status_code == 200 and empty.headers["content-type"] == "application/x-protobuf"
    assert not ExportLogsServiceResponse.FromString(empty.content).HasField("partial_success")
    garbage = httpx.post(url, content=b"\xff\xff\xff not protobuf", headers=proto)
    assert garbage.status_code == 400 and garbage.headers["content-type"] == "application/x-protobuf"
    refusal = status_pb2.Status.FromString(garbage.content)
    assert refusal.code == code_pb2.INVALID_ARGUMENT and "ExportLogsServiceRequest" in refusal.message
    assert refusal.details[0].Is(error_details_pb2.BadRequest.DESCRIPTOR)
    bomb = gzip.compress(b"\0" * (65 * 1024 * 1024))
    refused = httpx.post(
        url,
        content=bomb,
        headers={**proto, "Content-Encoding": "gzip", "X-Stacklens-App-Key": "stacklens_app_not_a_key"},
    )
    assert refused.status_code == 403
    assert status_pb2.Status.FromString(refused.content).code == code_pb2.PERMISSION_DENIED


def test_the_quota_answers_429_with_retry_after(dsn_server: str, make_org, settings) -> None:
    from stacklens.control import accounts
    from stacklens.control.db import session_scope

    org = make_org()
    with session_scope(settings) as session:
        accounts.set_quota(session, org["org_id"], events_per_minute=3)
    url = f"{dsn_server}/api/{org['project_id']}/otlp/v1/logs"
    headers = {"Content-Type": "application/json", "X-Stacklens-App-Key": str(org["app_key"])}
    answers = []
    for batch in range(3):  # two records an export: the third export is over the quota
        records = [_record(time.time_ns(), f"export {batch} record {i}") for i in range(2)]
        body = {"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}
        answers.append(httpx.post(url, content=json.dumps(body), headers=headers))
    limited = [a for a in answers if a.status_code == 429]
    assert limited and answers[0].status_code == 200, [a.status_code for a in answers]
    assert int(limited[0].headers["Retry-After"]) >= 1
    # A JSON export is refused in JSON: google.rpc.Status with RetryInfo saying what Retry-After says.
    refusal = limited[0].json()
    assert refusal["code"] == code_pb2.RESOURCE_EXHAUSTED and refusal["message"].startswith("Rate Limited")
    assert refusal["details"] == [
        {
            "@type": "type.googleapis.com/google.rpc.RetryInfo",
            "retryDelay": f"{limited[0].headers['Retry-After']}s",
        }
    ]
