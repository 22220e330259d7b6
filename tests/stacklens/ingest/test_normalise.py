"""Normalisation of real sentry-sdk events/transactions and @sentry/browser-shaped payloads."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import sentry_sdk

from stacklens.ingest.fields import COMMON_COLUMNS, Origin
from stacklens.ingest.normalise import event_row, spans_rows, transaction_row
from stacklens.ingest.scrub import scrub_payload
from tests.stacklens.ingest.sdk_events import capture, sdk_client

ORIGIN = Origin(org_id=3, project_id=11, service=None, batch_id="b1", received_at=time.time())


class OutOfStock(Exception):
    pass


def reserve(sku: str) -> None:
    try:
        {"a": 1}[sku]
    except KeyError as exc:
        raise OutOfStock(f"no stock for {sku}") from exc


def row_of(payload: dict[str, Any], origin: Origin = ORIGIN) -> dict[str, Any]:
    payload = scrub_payload(payload)
    return event_row(payload, origin, json.dumps(payload).encode(), json.dumps(payload))


def test_python_error_event() -> None:
    def run() -> None:
        sentry_sdk.set_user({"id": "u-7", "email": "ada@example.com", "ip_address": "10.1.2.3"})
        sentry_sdk.set_tag("service", "checkout")
        reserve("zz")

    payload = capture(run)
    row = row_of(payload)
    assert row["event_id"].replace("-", "") == payload["event_id"]
    assert row["exception_types"] == ["KeyError", "OutOfStock"] and row["exception_type"] == "OutOfStock"
    assert row["title"] == "OutOfStock: no stock for zz"
    # The frame's module is this test module's import name (it depends on pytest's import mode).
    assert row["in_app_frames"][0] == f"{__name__}:reserve" and row["culprit"] == f"reserve in {__name__}"
    assert (row["user_id"], row["user_email"], row["user_key"]) == ("u-7", "ada@example.com", "u-7")
    assert row["user_ip"] == payload["user"].get("ip_address", "")  # the SDK keeps it only with PII on
    assert row["service"] == "checkout" and row["tags"]["service"] == "checkout"
    assert (row["release"], row["environment"], row["server_name"]) == ("shop@1.2.3", "production", "web-1")
    assert row["runtime_name"] in ("CPython", "") and row["sdk_name"] == "sentry.python"
    assert row["handled"] == 1 and row["grouping_version"] == "v2" and len(row["fingerprint"]) == 32
    assert row["timestamp"][:4] == time.strftime("%Y", time.gmtime())


def test_per_service_key_wins_over_the_tag() -> None:
    def run() -> None:
        sentry_sdk.set_tag("service", "checkout")
        reserve("q")

    origin = Origin(3, 11, "worker", "b1", time.time())
    assert row_of(capture(run), origin)["service"] == "worker"


def test_python_transaction_with_spans_and_status() -> None:
    with (
        sdk_client() as transport,
        sentry_sdk.start_transaction(op="http.server", name="/users/{user_id}") as txn,
    ):
        txn.set_http_status(404)
        with sentry_sdk.start_span(op="http.client", name="GET https://api.example/users/42") as span:
            span.set_data("http.response.status_code", 503)
            span.set_data("http.response_content_length", 1200)
        time.sleep(0.01)
    payload = next(p for t, p in transport.items if t == "transaction")
    raw = json.dumps(payload).encode()
    txn_row = transaction_row(payload, ORIGIN, raw, raw.decode())
    assert (txn_row["op"], txn_row["page"], txn_row["http_status"]) == (
        "http.server",
        "/users/{user_id}",
        404,
    )
    assert txn_row["duration_ms"] >= 10 and txn_row["trace_id"] == payload["contexts"]["trace"]["trace_id"]
    spans = spans_rows(payload, txn_row, ORIGIN)
    assert len(spans) == 1
    span_row = spans[0]
    assert (span_row["op"], span_row["status_code"], span_row["http_method"]) == ("http.client", 503, "GET")
    assert span_row["response_content_length"] == 1200 and span_row["decoded_content_length"] is None
    assert span_row["page"] == "/users/{user_id}" and span_row["transaction_event_id"] == txn_row["event_id"]


def browser_pageload() -> dict[str, Any]:
    """A pageload as @sentry/browser sends it (epoch-second floats, measurements, resource spans)."""
    start = 1795291567.25
    return {
        "type": "transaction",
        "event_id": "0f6c1a2b3c4d4e5f8a9b0c1d2e3f4a5b",
        "platform": "javascript",
        "transaction": "/products/1234",
        "transaction_info": {"source": "url"},
        "start_timestamp": start,
        "timestamp": start + 2.5,
        "release": "web@4.0.0",
        "environment": "production",
        "contexts": {"trace": {"op": "pageload", "trace_id": "a" * 32, "span_id": "b" * 16, "status": "ok"}},
        "request": {
            "url": "https://shop.example/products/1234?ref=mail",
            "headers": {
                "User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
            },
        },
        "measurements": {
            "ttfb": {"value": 120.5, "unit": "millisecond"},
            "fcp": {"value": 0.8, "unit": "second"},
            "lcp": {"value": 1450, "unit": "millisecond"},
            "cls": {"value": 0.04, "unit": ""},
        },
        "spans": [
            {
                "span_id": "c" * 16,
                "parent_span_id": "b" * 16,
                "trace_id": "a" * 32,
                "op": "resource.script",
                "description": "https://shop.example/static/app.3f9a1c2b.js",
                "start_timestamp": start + 0.1,
                "timestamp": start + 0.4,
                "data": {
                    "http.response_content_length": 48000,
                    "http.decoded_response_content_length": 190000,
                    "http.response_transfer_size": 48300,
                    "resource.render_blocking_status": "blocking",
                },
            },
            {
                "span_id": "d" * 16,
                "parent_span_id": "b" * 16,
                "op": "http.client",
                "description": "GET /api/cart/77",
                "start_timestamp": start + 0.5,
                "timestamp": start + 0.62,
                "data": {"http.method": "GET", "status_code": 500},
            },
        ],
    }


def test_browser_pageload_transaction() -> None:
    payload = browser_pageload()
    raw = json.dumps(payload).encode()
    row = transaction_row(payload, ORIGIN, raw, raw.decode())
    assert (row["op"], row["page"], row["duration_ms"]) == ("pageload", "/products/{id}", 2500.0)
    assert row["timestamp"] == "2026-11-21 20:06:07.250"
    assert row["measurements"] == {"ttfb": 120.5, "fcp": 800.0, "lcp": 1450.0, "cls": 0.04}
    assert (row["browser_name"], row["os_name"]) == ("Chrome", "Windows")
    script, api = spans_rows(payload, row, ORIGIN)
    assert (script["response_content_length"], script["decoded_content_length"], script["transfer_size"]) == (
        48000,
        190000,
        48300,
    )
    assert script["render_blocking_status"] == "blocking" and round(script["duration_ms"]) == 300
    assert (api["status_code"], api["http_method"], api["trace_id"]) == (500, "GET", "a" * 32)


def test_browser_error_event() -> None:
    payload = {
        "event_id": "1f6c1a2b3c4d4e5f8a9b0c1d2e3f4a5b",
        "platform": "javascript",
        "timestamp": 1795291567.5,
        "exception": {
            "values": [
                {
                    "type": "TypeError",
                    "value": "x is undefined",
                    "mechanism": {"type": "onerror", "handled": False},
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": "https://shop.example/static/app.3f9a1c2b.js",
                                "function": "render",
                                "lineno": 3,
                                "colno": 10,
                                "in_app": True,
                            }
                        ]
                    },
                }
            ]
        },
        "request": {
            "url": "https://shop.example/cart",
            "headers": {
                "User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1"
            },
        },
        "breadcrumbs": {"values": [{"category": "ui.click", "message": "button#pay"}]},
        "sdk": {"name": "sentry.javascript.browser", "version": "8.40.0"},
    }
    row = row_of(payload)
    assert row["handled"] == 0 and row["in_app_frames"] == ["app.js:render"]
    assert (row["browser_name"], row["browser_version"], row["os_name"], row["os_version"]) == (
        "Safari",
        "17.2",
        "iOS",
        "17.2",
    )
    assert row["timestamp"] == "2026-11-21 20:06:07.500" and row["request_url"] == "https://shop.example/cart"


# Resource spans of one asset as each @sentry/browser generation names its data (encoded 48,000 bytes,
# decoded 190,000, transferred 48,300; GET; 200).
BROWSER_SPAN_DATA = {
    "v10": {
        "http.response_content_length": 48000,
        "http.decoded_response_content_length": 190000,
        "http.response_transfer_size": 48300,
        "http.method": "GET",
        "http.response.status_code": 200,
    },
    "v11": {
        "http.response.body.size": 48000,
        "http.response.body.decoded_size": 190000,
        "http.response.size": 48300,
        "http.request.method": "GET",
        "http.response.status_code": 200,
    },
}


@pytest.mark.parametrize("generation", sorted(BROWSER_SPAN_DATA))
def test_resource_sizes_and_method_under_either_name(generation: str) -> None:
    payload = browser_pageload()
    payload["spans"][0]["data"] = {
        **BROWSER_SPAN_DATA[generation],
        "resource.render_blocking_status": "blocking",
    }
    payload["contexts"]["trace"]["data"] = {
        k: v for k, v in BROWSER_SPAN_DATA[generation].items() if "method" in k
    }
    del payload["request"]
    raw = json.dumps(payload).encode()
    row = transaction_row(payload, ORIGIN, raw, raw.decode())
    script = spans_rows(payload, row, ORIGIN)[0]
    sizes = (script["response_content_length"], script["decoded_content_length"], script["transfer_size"])
    assert sizes == (48000, 190000, 48300)
    assert (script["http_method"], script["status_code"], row["http_method"]) == ("GET", 200, "GET")


def test_sizes_out_of_range_or_not_numbers_are_unknown() -> None:
    payload = browser_pageload()
    payload["spans"][0]["data"] = {
        "http.response.body.size": 2**70,
        "http.response.body.decoded_size": "big",
        "http.response.size": True,
    }
    raw = json.dumps(payload).encode()
    row = transaction_row(payload, ORIGIN, raw, raw.decode())
    script = spans_rows(payload, row, ORIGIN)[0]
    assert (script["response_content_length"], script["decoded_content_length"], script["transfer_size"]) == (
        None,
        None,
        None,
    )


def test_events_and_transactions_fill_their_common_columns_alike() -> None:
    with sdk_client(server_name="web-7") as transport:
        sentry_sdk.set_user({"id": "u-9"})
        sentry_sdk.set_tag("service", "checkout")
        with sentry_sdk.start_transaction(op="http.server", name="/cart"):
            sentry_sdk.capture_message("cart is empty")
    payloads = {kind: payload for kind, payload in transport.items}
    event = row_of(payloads["event"])
    scrubbed = scrub_payload(payloads["transaction"])
    transaction = transaction_row(scrubbed, ORIGIN, json.dumps(scrubbed).encode(), json.dumps(scrubbed))
    for row in (event, transaction):
        assert set(COMMON_COLUMNS) <= set(row)
    shared = [c for c in COMMON_COLUMNS if c not in ("event_id", "payload", "tags")]
    assert {c: event[c] for c in shared} == {c: transaction[c] for c in shared}
    assert (
        event["service"] == "checkout" and event["server_name"] == "web-7" and event["transaction"] == "/cart"
    )
    assert event["user_key"] and event["release"] == "shop@1.2.3" and event["batch_id"] == ORIGIN.batch_id
