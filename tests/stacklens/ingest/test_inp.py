"""Standalone INP spans land as ``transactions`` rows, once; other spans stay skipped.

``browser_inp_span.json`` is a log line the SDK's tunnel wrote for @sentry/browser 11.12.0 in headless
Chromium after a click whose handler blocked ~300 ms (the browser end-to-end test's page), app key replaced.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.ingest.fields import Origin
from stacklens.ingest.inp import holds_inp, inp_event_id, inp_rows
from stacklens.ingest.service import Attribution, ingest_batch
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations

FIXTURE = Path(__file__).parent / "browser_inp_span.json"
ORIGIN = Origin(org_id=3, project_id=11, service=None, batch_id="b1", received_at=time.time())


def observed_line(app_key: str | None = None) -> dict[str, Any]:
    line = json.loads(FIXTURE.read_text())
    if app_key is not None:
        line["app_key"] = app_key
    return line


def v1_span() -> dict[str, Any]:
    """The shape @sentry/browser 8–10 sent: one span with the value as a measurement."""
    return {
        "op": "ui.interaction.keydown",
        "description": "body > input#search",
        "span_id": "1234567890abcdef",
        "trace_id": "0123456789abcdef0123456789abcdef",
        "start_timestamp": 1795296490.0,
        "timestamp": 1795296490.25,
        "data": {
            "transaction": "/orders/1234",
            "sentry.op": "ui.interaction.keydown",
            "user_agent.original": "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0",
        },
        "measurements": {"inp": {"value": 0.25, "unit": "second"}},
        "release": "shop-web@1.4.1",
        "environment": "production",
    }


def non_inp_payload() -> dict[str, Any]:
    payload = observed_line()["payload"]
    span = payload["items"][0]
    span["attributes"]["sentry.op"]["value"] = "http.client"
    del span["attributes"]["browser.web_vital.inp.value"]
    return payload


def test_the_observed_v2_span_becomes_one_row() -> None:
    payload = observed_line()["payload"]
    assert holds_inp(payload)
    (row,) = inp_rows(payload, ORIGIN)
    assert row["op"] == "ui.interaction.click"
    assert row["measurements"] == {"inp": 304.0}
    assert row["page"] == "/" and row["transaction"] == "/" and row["url"] == ""
    assert row["duration_ms"] == pytest.approx(304.0, abs=0.5)
    assert row["timestamp"] == "2026-11-21 21:28:10.443"
    assert (row["release"], row["environment"], row["platform"]) == ("shop-web@1.4.2", "test", "javascript")
    assert (row["browser_name"], row["os_name"]) == ("Chrome", "Linux")
    assert row["trace_id"] == "71e5bf93dd9046b6a4778e47cb3f3fbc"
    assert row["event_id"] == inp_event_id("71e5bf93dd9046b6a4778e47cb3f3fbc", "adb3f64895c9f7e5")
    assert (row["org_id"], row["project_id"], row["service"]) == (3, 11, "")


def test_v1_span_page_url_and_units() -> None:
    span = v1_span()
    (row,) = inp_rows(span, Origin(3, 11, "storefront", "b1", time.time()))
    assert row["measurements"] == {"inp": 250.0}, "seconds become ms"
    assert row["page"] == "/orders/{id}", "the route is normalised"
    assert row["op"] == "ui.interaction.keydown" and row["service"] == "storefront"
    assert (row["browser_name"], row["release"]) == ("Firefox", "shop-web@1.4.1")
    span["data"]["url.full"] = "https://shop.example/cart/77?step=2"
    assert inp_rows(span, ORIGIN)[0]["page"] == "/cart/{id}", "a page URL wins over the route name"


def test_spans_without_inp_are_not_stored() -> None:
    assert not holds_inp(non_inp_payload()) and inp_rows(non_inp_payload(), ORIGIN) == []
    no_value = copy.deepcopy(v1_span())
    del no_value["measurements"]
    assert not holds_inp(no_value)
    assert not holds_inp({"items": "nonsense"}) and not holds_inp({})


def test_sensitive_span_attributes_are_filtered_before_they_are_stored() -> None:
    payload = observed_line()["payload"]
    attributes = payload["items"][0]["attributes"]
    attributes["password"] = {"value": "hunter2", "type": "string"}
    attributes["http.request.header.authorization"] = {"value": "Bearer abc", "type": "string"}
    attributes["note"] = {"value": "card 4111 1111 1111 1111", "type": "string"}
    (row,) = inp_rows(payload, ORIGIN)
    stored = json.loads(orjson.dumps(row["payload"]))["attributes"]
    assert stored["password"] == "[FILTERED]"
    assert stored["http.request.header.authorization"] == "[FILTERED]"
    assert "4111" not in stored["note"]["value"]
    assert stored["browser.web_vital.inp.value"]["value"] == 304


def test_an_inp_span_without_span_id_is_refused() -> None:
    span = v1_span()
    del span["span_id"]
    with pytest.raises(ValueError, match="span_id"):
        inp_rows(span, ORIGIN)


def inp_rows_in(settings: Settings, org_id: int) -> list[tuple[Any, ...]]:
    return (
        get_warehouse(settings)
        .query(
            "SELECT op, page, measurements['inp'], round(duration_ms), release, environment, project_id "
            "FROM transactions WHERE org_id = {org:UInt64} AND op LIKE 'ui.interaction%'",
            parameters={"org": org_id},
        )
        .result_rows
    )


def test_service_lands_inp_once_and_skips_other_spans(settings: Settings) -> None:
    apply_migrations(settings, up_to=99)
    key = "stacklens_app_REPLACEDBYTHETEST0000000000"
    body = b"\n".join(
        json.dumps(line).encode()
        for line in (
            observed_line(),
            {**observed_line(), "payload": non_inp_payload()},
            {"v": 1, "type": "span", "app_key": key, "payload": v1_span()},
        )
    )

    def land() -> Any:
        return ingest_batch(
            settings,
            41,
            body,
            header_app_key=None,
            idempotency_key=None,
            resolve=lambda raw: Attribution(7, None, 1) if raw == key else None,
            take_events=lambda n: None,
        )

    first = land()
    assert (first.accepted, first.duplicates, first.skipped, first.rejected) == (2, 0, 1, [])
    again = land()  # a resend (new batch id): the span ids make the rows the same rows
    assert (again.accepted, again.duplicates, again.skipped) == (0, 2, 1)
    assert sorted(inp_rows_in(settings, 41)) == [
        ("ui.interaction.click", "/", 304.0, 304.0, "shop-web@1.4.2", "test", 7),
        ("ui.interaction.keydown", "/orders/{id}", 250.0, 250.0, "shop-web@1.4.1", "production", 7),
    ]


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    apply_migrations(settings, up_to=99)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def test_post_api_ingest_lands_the_observed_span(client: TestClient, settings: Settings, make_org) -> None:
    org, other = make_org(), make_org("Other")
    body = json.dumps(observed_line(org["app_key"])).encode()

    def post() -> Any:
        return client.post(
            "/api/ingest",
            content=body,
            headers={"Authorization": f"Bearer {org['api_key']}", "Content-Type": "application/x-ndjson"},
        )

    response = post()
    assert response.status_code == 200, response.text
    assert (response.json()["accepted"], response.json()["skipped"]) == (1, 0)
    assert post().json()["duplicates"] == 1
    assert inp_rows_in(settings, org["org_id"]) == [
        ("ui.interaction.click", "/", 304.0, 304.0, "shop-web@1.4.2", "test", org["project_id"])
    ]
    assert inp_rows_in(settings, other["org_id"]) == []
    # The stored payload is the span itself, for the event view.
    (payload,) = (
        get_warehouse(settings)
        .query(
            "SELECT payload FROM transactions WHERE org_id = {org:UInt64}",
            parameters={"org": org["org_id"]},
        )
        .result_rows[0]
    )
    assert json.loads(payload)["span_id"] == "adb3f64895c9f7e5"
