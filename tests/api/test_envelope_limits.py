"""What one envelope or event may make the server do, through a real uvicorn server: items per envelope
bounded as Relay bounds them, and JSON nested deeper than the limit refused with 400 — the keep-alive
connection answering the next envelope normally."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest

from stacklens.ingest.jsondepth import MAX_JSON_DEPTH
from tests.api.routers.test_ingest import transaction_payload
from tests.api.sentry_live import envelope, event_item, fresh_event, stored


def _port(answer: httpx.Response) -> int:
    """The client's side of the connection the answer came on (the same port: the same connection)."""
    return int(answer.extensions["network_stream"].get_extra_info("client_addr")[1])


def test_items_are_bounded_per_envelope_as_relay_bounds_them(dsn_server: str, make_org) -> None:
    org = make_org()
    url = f"{dsn_server}/api/{org['project_id']}/envelope/"
    key = {"sentry_key": org["app_key"]}
    # 10,000 small events in 1.4 MB, as the probe sent them.
    many = [{"event_id": uuid.uuid4().hex, "message": f"m{i}", "level": "error"} for i in range(10_000)]
    body = envelope([event_item(event) for event in many])
    assert 1_000_000 < len(body) < 2_000_000

    def refused(items: list[tuple[dict[str, Any], bytes]], words: str) -> None:
        answer = httpx.post(url, params=key, content=envelope(items), timeout=60)
        assert answer.status_code == 413, answer.text[:300]
        assert words in answer.json()["detail"], answer.text[:300]
        assert answer.headers["x-sentry-error"] and answer.headers["access-control-allow-origin"] == "*"

    answer = httpx.post(url, params=key, content=body, timeout=60)
    assert answer.status_code == 413, answer.text[:300]
    assert answer.json()["detail"] == (
        "the envelope carries more than 1 event-like item (event, transaction, security report, replay event,"
        " feedback) (item 2 is 'event'); send each event in an envelope of its own, as Sentry SDKs do"
    )
    assert stored(org["org_id"], many[0]["event_id"]) == 0, "a refused envelope lands nothing"
    refused(
        [event_item(fresh_event()), ({"type": "transaction"}, json.dumps(transaction_payload()).encode())],
        "item 2 is 'transaction'",
    )

    session = ({"type": "session"}, b'{"status": "ok"}')
    attachment = ({"type": "attachment", "filename": "a.txt"}, b"x")
    report = ({"type": "client_report"}, b'{"discarded_events": []}')
    refused([session] * 101, "more than 100 session items")
    refused([attachment] * 101, "more than 100 attachments")
    refused([report] * 11, "more than 10 client reports")
    refused([({"type": "check_in"}, b"{}")] * 2, "more than 1 check-in")
    refused([({"type": "a_future_type"}, b"{}")] * 1_001, "more than 1000 items")

    # At the bounds, an envelope lands: one event beside 100 sessions, 100 attachments, 10 client reports.
    event = fresh_event()
    answer = httpx.post(
        url,
        params=key,
        content=envelope([event_item(event)] + [session] * 100 + [attachment] * 100 + [report] * 10),
    )
    assert answer.status_code == 200 and answer.json() == {"id": event["event_id"]}, answer.text[:300]
    assert stored(org["org_id"], event["event_id"]) == 1


@pytest.mark.parametrize("depth", [2_000, 10_000])
def test_deep_json_is_400_naming_the_limit_and_the_connection_stays(
    dsn_server: str, make_org, depth: int
) -> None:
    org = make_org()
    envelope_url = f"/api/{org['project_id']}/envelope/"
    store_url = f"/api/{org['project_id']}/store/"
    key = {"sentry_key": org["app_key"]}
    deep_array = b"[" * depth + b"]" * depth
    deep_object = b'{"a":' * depth + b"1" + b"}" * depth
    limit = f"nests deeper than {MAX_JSON_DEPTH} levels"
    deep_event = json.dumps({**fresh_event(), "extra": "DEEP"}).encode().replace(b'"DEEP"', deep_array)
    cases: list[tuple[str, dict[str, str], bytes, dict[str, str], str]] = [
        (envelope_url, key, deep_array + b"\n", {}, f"the envelope header {limit}"),
        (envelope_url, {}, deep_object + b"\n", {}, f"the envelope header {limit}"),  # no key: read first
        (envelope_url, key, b"{}\n" + deep_object + b"\n{}\n", {}, f"item 1's header {limit}"),
        (envelope_url, key, envelope([({"type": "event"}, deep_event)]), {}, f"item 1: the JSON {limit}"),
        (
            envelope_url,
            key,
            envelope([({"type": "transaction"}, deep_object)]),
            {},
            f"item 1: the JSON {limit}",
        ),
        (store_url, key, deep_event, {}, f"the event {limit}"),
        (store_url, key, deep_event, {"Content-Type": "application/json"}, f"the JSON body {limit}"),
    ]
    with httpx.Client(base_url=dsn_server, timeout=30) as http:
        first = http.post(envelope_url, params=key, content=envelope([event_item(fresh_event())]))
        assert first.status_code == 200
        port = _port(first)
        for url, params, body, headers, words in cases:
            answer = http.post(url, params=params, content=body, headers=headers)
            assert answer.status_code == 400, (url, words, answer.status_code, answer.text[:300])
            assert answer.json()["detail"].endswith(words), (words, answer.text[:300])
            assert answer.headers["access-control-allow-origin"] == "*", "browser SDKs can read why"
            assert _port(answer) == port, "the same keep-alive connection"
            good = fresh_event()
            after = http.post(
                url,
                params=key,
                content=envelope([event_item(good)]) if url == envelope_url else json.dumps(good),
            )
            assert after.status_code == 200 and after.json() == {"id": good["event_id"]}, after.text[:300]
            assert _port(after) == port, "the connection answers the next request normally"
