"""What each answer of the service means to the shipper, Retry-After, network failures by the spec's names,
and the body's compression."""

from __future__ import annotations

import gzip

import httpx
import pytest
import zstandard

from shipper.transport import (
    RETRY_AFTER_CAP,
    Answer,
    Outcome,
    classify,
    compress,
    network_error_name,
    parse_retry_after,
    retry_reason,
)


@pytest.mark.parametrize(
    ("status", "body", "outcome", "message"),
    [
        (200, {"accepted": 3}, Outcome.OK, "ok"),
        (401, {"error": "Invalid API Key"}, Outcome.AUTH, "Invalid API Key"),
        (
            404,
            {"error": "Application Not Found", "detail": "no project web"},
            Outcome.APP,
            "Application Not Found: no project web",
        ),
        (413, {"error": "Payload Too Large"}, Outcome.TOO_LARGE, "Payload Too Large"),
        (409, {"error": "Idempotency-Key reused"}, Outcome.BAD_REQUEST, "Idempotency-Key reused"),
        (415, {"error": "Unsupported encoding"}, Outcome.ENCODING, "Unsupported encoding"),
        (503, {"error": "Service Unavailable"}, Outcome.RETRY, "503 Service Unavailable"),
        # Any other 4xx is final for these bytes: split down to the line and dead-lettered, never retried for
        # ever; 408 and 429 say "later", not "no".
        (403, {"error": "Forbidden"}, Outcome.BAD_REQUEST, "403 Forbidden"),
        (410, {"error": "Gone"}, Outcome.BAD_REQUEST, "410 Gone"),
        (408, {"error": "Request Timeout"}, Outcome.RETRY, "408 Request Timeout"),
    ],
)
def test_each_answer_has_one_meaning(status: int, body: dict, outcome: Outcome, message: str) -> None:
    answer = classify(httpx.Response(status, json=body))
    assert (answer.outcome, answer.message) == (outcome, message)


def test_a_rate_limit_is_retried_after_what_the_service_asked() -> None:
    answer = classify(httpx.Response(429, json={"error": "Rate Limited"}, headers={"Retry-After": "7"}))
    assert answer.outcome is Outcome.RETRY and answer.retry_after == 7.0
    assert retry_reason(answer) == "429 Rate Limited, Retry-After 7s"
    assert retry_reason(Answer(Outcome.RETRY, "Connection refused")) == "Connection refused"
    assert classify(httpx.Response(200, text="not json")).body == {}


def test_retry_after_in_seconds_or_as_a_date_capped() -> None:
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("999999") == RETRY_AFTER_CAP
    assert parse_retry_after("Fri, 20 Nov 2026 12:00:30 GMT", now=1_795_176_000.0) == 30.0
    assert parse_retry_after("Fri, 20 Nov 2026 11:00:00 GMT", now=1_795_176_000.0) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_network_failures_by_the_specs_names() -> None:
    assert network_error_name(httpx.ConnectTimeout("timed out")) == "Connection timeout"
    refused = httpx.ConnectError("all connection attempts failed")
    refused.__cause__ = ConnectionRefusedError(111, "refused")
    assert network_error_name(refused) == "Connection refused"
    assert (
        network_error_name(httpx.ConnectError("certificate verify failed: self signed"))
        == "SSL certificate error"
    )
    assert network_error_name(httpx.ReadError("")) == "Network error (ReadError: no detail)"


def test_bodies_are_compressed_as_configured() -> None:
    body = b'{"line": 1}\n' * 100
    assert gzip.decompress(compress(body, "gzip")) == body
    assert zstandard.ZstdDecompressor().decompress(compress(body, "zstd"), max_output_size=len(body)) == body
    assert compress(body, "gzip") == compress(body, "gzip")  # no timestamp: the same bytes each time
