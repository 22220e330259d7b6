"""`POST /api/ingest` through the real app, the real control store and the real embedded warehouse."""

from __future__ import annotations

import gzip
import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import sentry_sdk
import zstandard
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.keys.lifecycle import create_app_key, current_app_key, revoke_app_key
from stacklens.ingest.front_door import settle_spooled
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.stacklens.ingest.sdk_events import capture, sdk_client


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    apply_migrations(settings, up_to=99)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def fail_checkout(order_id: int) -> None:
    raise RuntimeError(f"checkout failed for order {order_id}")


def error_payload(order_id: int = 1) -> dict[str, Any]:
    return capture(lambda: fail_checkout(order_id))


def transaction_payload() -> dict[str, Any]:
    with (
        sdk_client() as transport,
        sentry_sdk.start_transaction(op="http.server", name="/orders/{order_id}") as txn,
    ):
        txn.set_http_status(200)
        with sentry_sdk.start_span(op="db", name="SELECT * FROM orders"):
            pass
    return next(p for t, p in transport.items if t == "transaction")


def line(payload: dict[str, Any], app_key: str | None, item_type: str = "event") -> bytes:
    obj: dict[str, Any] = {"v": 1, "type": item_type, "ts": "2026-11-21T19:22:03.123Z", "payload": payload}
    if app_key is not None:
        obj["app_key"] = app_key
    return json.dumps(obj).encode()


def post(client: TestClient, api_key: str, body: bytes, **headers: str) -> Any:
    return client.post(
        "/api/ingest",
        content=body,
        headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/x-ndjson", **headers},
    )


def count(settings: Settings, table: str, org_id: int) -> int:
    settle_spooled(settings)  # read as the API reads: after the rows answered before
    return (
        get_warehouse(settings)
        .query(
            "SELECT uniqExact(event_id) FROM {table:Identifier} WHERE org_id = {org:UInt64}",
            parameters={"org": org_id, "table": table},
        )
        .result_rows[0][0]
    )


def test_events_and_transactions_land_with_gzip(client: TestClient, settings: Settings, make_org) -> None:
    org = make_org()
    body = b"\n".join(
        [
            line(error_payload(1), org["app_key"]),
            line(error_payload(2), None),
            line(transaction_payload(), org["app_key"], "transaction"),
        ]
    )
    response = post(
        client,
        org["api_key"],
        gzip.compress(body),
        **{"Content-Encoding": "gzip", "X-Stacklens-App-Key": org["app_key"]},
    )
    assert response.status_code == 200, response.text
    answer = response.json()
    assert (answer["accepted"], answer["duplicates"], answer["rejected"]) == (3, 0, [])
    rows = (
        get_warehouse(settings)
        .query(
            "SELECT project_id, issue_id, grouping_version, exception_type, title, release, environment FROM events "
            "WHERE org_id = {org:UInt64}",
            parameters={"org": org["org_id"]},
        )
        .result_rows
    )
    assert len(rows) == 2 and rows[0][1] == rows[1][1], "two orders, one bug: one issue"
    assert rows[0][0] == org["project_id"] and rows[0][2:4] == ("v2", "RuntimeError")
    assert rows[0][5:] == ("shop@1.2.3", "production")
    txn = (
        get_warehouse(settings)
        .query(
            "SELECT op, page, http_status FROM transactions WHERE org_id = {org:UInt64}",
            parameters={"org": org["org_id"]},
        )
        .result_rows
    )
    assert txn == [("http.server", "/orders/{order_id}", 200)]
    spans = (
        get_warehouse(settings)
        .query(
            "SELECT op, description, page FROM spans WHERE org_id = {org:UInt64}",
            parameters={"org": org["org_id"]},
        )
        .result_rows
    )
    assert spans == [("db", "SELECT * FROM orders", "/orders/{order_id}")]


def browser_pageload(sizes: dict[str, int], method_key: str) -> dict[str, Any]:
    """A pageload with one resource span whose data uses the given attribute names."""
    start = 1795291567.25
    return {
        "event_id": uuid.uuid4().hex,
        "platform": "javascript",
        "transaction": "/products/12",
        "start_timestamp": start,
        "timestamp": start + 1.5,
        "contexts": {"trace": {"op": "pageload", "trace_id": "a" * 32, "span_id": "b" * 16}},
        "request": {"url": "https://shop.example/products/12", "headers": {"Cookie": "sid=1"}},
        "spans": [
            {
                "span_id": "c" * 16,
                "op": "resource.script",
                "description": "https://shop.example/app.js",
                "start_timestamp": start + 0.1,
                "timestamp": start + 0.3,
                "data": {**sizes, method_key: "GET", "resource.render_blocking_status": "blocking"},
            }
        ],
    }


def test_browser_span_sizes_land_under_either_generation_of_names(
    client: TestClient, settings: Settings, make_org
) -> None:
    org = make_org()
    v10 = {
        "http.response_content_length": 100,
        "http.decoded_response_content_length": 300,
        "http.response_transfer_size": 120,
    }
    v11 = {"http.response.body.size": 100, "http.response.body.decoded_size": 300, "http.response.size": 120}
    body = b"\n".join(
        [
            line(browser_pageload(v10, "http.method"), org["app_key"], "transaction"),
            line(browser_pageload(v11, "http.request.method"), org["app_key"], "transaction"),
        ]
    )
    response = post(client, org["api_key"], body)
    assert response.status_code == 200 and response.json()["accepted"] == 2, response.text
    spans = (
        get_warehouse(settings)
        .query(
            "SELECT response_content_length, decoded_content_length, transfer_size, http_method, "
            "render_blocking_status FROM spans WHERE org_id = {org:UInt64}",
            parameters={"org": org["org_id"]},
        )
        .result_rows
    )
    assert spans == [(100, 300, 120, "GET", "blocking")] * 2
    payloads = (
        get_warehouse(settings)
        .query(
            "SELECT payload FROM transactions WHERE org_id = {org:UInt64}", parameters={"org": org["org_id"]}
        )
        .result_rows
    )
    stored = [json.loads(p) for (p,) in payloads]
    assert all(p["request"]["headers"]["Cookie"] == "[FILTERED]" for p in stored), "scrubbed JSON object text"


def test_zstd_and_per_service_key(client: TestClient, settings: Settings, make_org) -> None:
    org = make_org()
    with session_scope(settings) as session:
        worker_key = create_app_key(session, org["project_id"], "worker")
    body = zstandard.ZstdCompressor().compress(line(error_payload(), worker_key))
    response = post(client, org["api_key"], body, **{"Content-Encoding": "zstd"})
    assert response.status_code == 200 and response.json()["accepted"] == 1
    service = (
        get_warehouse(settings)
        .query("SELECT service FROM events WHERE org_id = {org:UInt64}", parameters={"org": org["org_id"]})
        .result_rows
    )
    assert service == [("worker",)]


def test_same_batch_three_times_lands_once(client: TestClient, settings: Settings, make_org) -> None:
    org = make_org()
    body = b"\n".join(line(error_payload(i), org["app_key"]) for i in range(5)) + b"\nnot json\n"
    key = uuid.uuid4().hex
    answers = [post(client, org["api_key"], body, **{"Idempotency-Key": key}).json() for _ in range(3)]
    assert answers[0] == answers[1] == answers[2]
    assert answers[0]["accepted"] == 5 and answers[0]["batch_id"] == key
    assert answers[0]["rejected"][0]["line"] == 6
    assert count(settings, "events", org["org_id"]) == 5
    raw = (
        get_warehouse(settings)
        .query("SELECT count() FROM events WHERE org_id = {org:UInt64}", parameters={"org": org["org_id"]})
        .result_rows[0][0]
    )
    assert raw == 5, "not even an unmerged duplicate row"


def test_same_event_in_two_batches_lands_once(client: TestClient, settings: Settings, make_org) -> None:
    org = make_org()
    shared = line(error_payload(1), org["app_key"])
    first = post(client, org["api_key"], shared + b"\n" + line(error_payload(2), org["app_key"]))
    second = post(
        client, org["api_key"], line(error_payload(3), org["app_key"]) + b"\n" + shared + b"\n" + shared
    )
    assert first.json()["accepted"] == 2
    assert (second.json()["accepted"], second.json()["duplicates"]) == (1, 2)
    assert count(settings, "events", org["org_id"]) == 3


@pytest.mark.parametrize(
    ("body", "encoding", "status", "words"),
    [
        (b"", None, 400, "empty"),
        (b"\n\n  \n", None, 400, "empty"),
        (gzip.compress(b'{"v":1}\n' * 100, mtime=0)[:-20], "gzip", 400, "truncated"),
        (b"\x1f\x8b not gzip", "gzip", 400, "not valid gzip"),
        (b"whatever", "br", 415, "not supported"),
        (b"not json\n{}\n", None, 400, "no line of the batch could be read"),
    ],
)
def test_malformed_bodies_get_4xx_with_a_message(
    client: TestClient, make_org, body, encoding, status, words
) -> None:
    org = make_org()
    headers = {"Content-Encoding": encoding} if encoding else {}
    response = post(client, org["api_key"], body, **headers)
    assert response.status_code == status, response.text
    assert words in response.json()["detail"]


def test_decompression_bomb_stops_at_the_limit(client: TestClient, make_org) -> None:
    org = make_org()
    bomb = gzip.compress(b"\n" * (80 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 200_000
    response = post(client, org["api_key"], bomb, **{"Content-Encoding": "gzip"})
    assert response.status_code == 413 and "decompressed body exceeds" in response.json()["detail"]
    zbomb = zstandard.ZstdCompressor().compress(b"a" * (80 * 1024 * 1024))
    response = post(client, org["api_key"], zbomb, **{"Content-Encoding": "zstd"})
    assert response.status_code == 413


def test_bad_lines_are_rejected_and_good_lines_still_land(
    client: TestClient, settings: Settings, make_org
) -> None:
    org = make_org()
    good = line(error_payload(), org["app_key"])
    deep = b'{"v":1,"type":"event","payload":{"extra":' + b"[" * 10_000 + b"]" * 10_000 + b"}}"
    huge = b'{"v":1,"type":"event","payload":{"n":' + b"9" * 5000 + b"}}"
    lines = [
        good,
        b'{"v":1,"type":"event","payload":{"bad":"\xff\xfe"}}',
        deep,
        huge,
        b'{"v":1,"type":"event","payload":"a string"}',
        b'{"v":1,"type":5,"payload":{}}',
        b'{"v":2,"type":"event","payload":{}}',
        b"[1,2,3]",
        b'{"v":1,"type":"event","payload":{"timestamp":{"x":1},"exception":"boom","tags":7,"user":[1],"request":"r"}}',
        b'{"v":1,"type":"client_report","payload":{}}',
        b'{"v":1,"type":"event","payload":{"n":NaN}}',
    ]
    response = post(client, org["api_key"], b"\n".join(lines), **{"X-Stacklens-App-Key": org["app_key"]})
    assert response.status_code == 200, response.text
    answer = response.json()
    errors = {r["line"]: r["error"] for r in answer["rejected"]}
    assert "UTF-8" in errors[2] and "deeper than" in errors[3]
    assert "payload" in errors[5] and "type" in errors[6] and "version" in errors[7] and "object" in errors[8]
    assert "NaN" in errors[11]
    assert set(errors) == {2, 3, 5, 6, 7, 8, 11}
    # Line 4's 5,000-digit number is kept as its text (issue #13), line 9's odd fields are read leniently.
    assert (answer["accepted"], answer["skipped"]) == (3, 1)
    assert count(settings, "events", org["org_id"]) == 3


def test_application_not_found(
    client: TestClient, settings: Settings, make_org, caplog: pytest.LogCaptureFixture
) -> None:
    org, other = make_org("Acme"), make_org("Globex")
    for app_key in ("stacklens_app_" + "x" * 24, other["app_key"], org["api_key"], None):
        with caplog.at_level(logging.WARNING, logger="api.routers.ingest"):
            caplog.clear()
            response = post(
                client, org["api_key"], line(error_payload(), app_key), **{"Idempotency-Key": "b-7"}
            )
        assert response.status_code == 404, (app_key, response.text)
        assert response.json()["error"] == "Application Not Found"
        # The operator sees the refused batch, its organization and the reason.
        [record] = [r for r in caplog.records if r.name == "api.routers.ingest"]
        assert record.levelno == logging.WARNING
        assert record.getMessage().startswith(
            f"ingest: refused a batch of organization {org['org_id']} (Idempotency-Key b-7) with 404 "
            "Application Not Found: no line of the batch belongs to a project of this organization"
        )
    assert count(settings, "events", org["org_id"]) == count(settings, "events", other["org_id"]) == 0
    # One attributable line is enough: the other line is rejected and the batch lands.
    mixed = line(error_payload(1), other["app_key"]) + b"\n" + line(error_payload(2), org["app_key"])
    answer = post(client, org["api_key"], mixed).json()
    assert answer["accepted"] == 1 and "Application Not Found" in answer["rejected"][0]["error"]
    assert count(settings, "events", other["org_id"]) == 0


def test_invalid_api_key(client: TestClient, make_org) -> None:
    org = make_org()
    for key in (org["app_key"], "stacklens_api_" + "Z" * 32, org["api_key"] + " "):
        response = post(client, key, line(error_payload(), org["app_key"]))
        assert response.status_code == 401 and response.json()["error"] == "Invalid API Key"


def test_rate_limited(client: TestClient, settings: Settings, make_org) -> None:
    org = make_org()
    with session_scope(settings) as session:
        accounts.set_quota(session, org["org_id"], events_per_minute=3)
    body = b"\n".join(line(error_payload(i), org["app_key"]) for i in range(2))
    assert post(client, org["api_key"], body).status_code == 200
    response = post(client, org["api_key"], body)
    assert response.status_code == 429 and response.json()["error"] == "Rate Limited"
    assert int(response.headers["Retry-After"]) >= 1
    assert count(settings, "events", org["org_id"]) == 2


def test_a_resent_batch_is_answered_as_the_first_time_and_costs_no_quota(
    client: TestClient, settings: Settings, make_org
) -> None:
    """The replay look-up is the front door's (one for its whole accept group); quotas are spent there only
    for a batch that did not land before."""
    org = make_org()
    with session_scope(settings) as session:
        accounts.set_quota(session, org["org_id"], events_per_minute=3)
    body = b"\n".join(line(error_payload(i), org["app_key"]) for i in range(2))
    key = uuid.uuid4().hex
    answers = [post(client, org["api_key"], body, **{"Idempotency-Key": key}) for _ in range(4)]
    assert [a.status_code for a in answers] == [200] * 4
    assert answers[0].json() == answers[3].json() and answers[0].json()["accepted"] == 2
    # One event of the quota is left: the three resends spent nothing.
    one = line(error_payload(7), org["app_key"])
    assert post(client, org["api_key"], one, **{"Idempotency-Key": uuid.uuid4().hex}).status_code == 200
    refused = post(client, org["api_key"], one, **{"Idempotency-Key": uuid.uuid4().hex})
    assert refused.status_code == 429 and refused.json()["error"] == "Rate Limited"
    assert int(refused.headers["Retry-After"]) >= 1
    assert count(settings, "events", org["org_id"]) == 3
    # Its app key revoked since, the resend of a landed batch is still answered as the first time.
    with session_scope(settings) as session:
        app_key = current_app_key(session, org["project_id"])
        assert app_key is not None
        revoke_app_key(session, app_key.id)
    again = post(client, org["api_key"], body, **{"Idempotency-Key": key})
    assert again.status_code == 200 and again.json() == answers[0].json()


def test_warehouse_down_is_503(settings: Settings, make_org, caplog: pytest.LogCaptureFixture) -> None:
    org = make_org()
    down = settings.model_copy(update={"warehouse_url": "http://127.0.0.1:9/"})
    with (
        TestClient(create_app(down)) as test_client,
        caplog.at_level(logging.ERROR, logger="api.routers.ingest"),
    ):
        response = post(test_client, org["api_key"], line(error_payload(), org["app_key"]))
    assert response.status_code == 503 and response.json()["error"] == "Service Unavailable"
    [record] = [r for r in caplog.records if r.name == "api.routers.ingest"]
    assert record.levelno == logging.ERROR
    message = record.getMessage()
    assert message.startswith(
        f"ingest: answered 503 to organization {org['org_id']}, the warehouse is unavailable"
    )
    assert "127.0.0.1:9" in message


def test_batch_log_counts_every_line_including_rejected_ones(
    client: TestClient, settings: Settings, make_org
) -> None:
    org = make_org()
    lines = [
        line(error_payload(1), org["app_key"]),
        b"not json",
        line(error_payload(2), org["app_key"]),
        b'{"v":1,"type":"client_report","payload":{}}',
        line(error_payload(3), "stacklens_app_" + "z" * 24),
        b"",
    ]
    response = post(client, org["api_key"], b"\n".join(lines), **{"Idempotency-Key": "log-1"})
    answer = response.json()
    assert (answer["accepted"], answer["skipped"], len(answer["rejected"])) == (2, 1, 2), answer
    logged = (
        get_warehouse(settings)
        .query(
            "SELECT lines, accepted, skipped, rejected FROM ingest_batches FINAL "
            "WHERE org_id = {org:UInt64} AND batch_id = 'log-1'",
            parameters={"org": org["org_id"]},
        )
        .result_rows
    )
    assert logged[0][:3] == (5, 2, 1), "five lines: two landed, one skipped, two rejected (blank ones aside)"
    assert [r["line"] for r in json.loads(logged[0][3])] == [2, 5]


def test_a_lone_surrogate_in_a_message_does_not_cost_the_event(
    client: TestClient, settings: Settings, make_org
) -> None:
    org = make_org()
    payload = error_payload(4)
    payload["message"] = "cut emoji \ud83d"
    body = json.dumps({"v": 1, "type": "event", "app_key": org["app_key"], "payload": payload}).encode()
    assert b"\\ud83d" in body
    response = post(client, org["api_key"], body)
    assert response.status_code == 200 and response.json()["accepted"] == 1, response.text
    assert count(settings, "events", org["org_id"]) == 1
