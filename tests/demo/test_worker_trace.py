"""The demo's order-mail job continues the trace the shop handed it (docs/traces.md): the worker's
`queue.process` transaction, sent by the real sentry-python client, carries the checkout's trace id with the
shop's queue.publish span as its parent, and its smtp span under it; a job without trace headers starts a
trace of its own."""

from __future__ import annotations

import random
import uuid
from typing import Any

import sentry_sdk
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport

from demo import traffic


class _Kept(Transport):
    def __init__(self) -> None:
        super().__init__()
        self.transactions: list[dict[str, Any]] = []

    def capture_envelope(self, envelope: Envelope) -> None:
        for item in envelope.items:
            if item.type == "transaction" and item.payload.json is not None:
                self.transactions.append(item.payload.json)


def test_the_mail_job_continues_the_checkout_trace() -> None:
    kept = _Kept()
    # No integrations: the default ones would patch httpx, threading, … for the rest of the test process.
    client = sentry_sdk.Client(
        dsn="http://key@127.0.0.1:9/1",
        transport=kept,
        traces_sample_rate=1.0,
        default_integrations=False,
        auto_enabling_integrations=False,
    )
    trace_id, publish = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    with sentry_sdk.isolation_scope() as scope:
        scope.set_client(client)
        traffic.send_order_mail(
            random.Random(3), 4200, lambda exc: None, trace={"sentry-trace": f"{trace_id}-{publish}-1"}
        )
        traffic.send_order_mail(random.Random(4), 4200, lambda exc: None, trace={})
    client.flush(timeout=5)
    continued, fresh = kept.transactions
    context = continued["contexts"]["trace"]
    assert (context["trace_id"], context["parent_span_id"], context["op"]) == (
        trace_id,
        publish,
        "queue.process",
    )
    assert continued["transaction"] == "order-mail"
    assert [s["op"] for s in continued["spans"]] == ["smtp"]
    assert continued["spans"][0]["parent_span_id"] == context["span_id"]
    assert fresh["contexts"]["trace"]["trace_id"] != trace_id and not fresh["contexts"]["trace"].get(
        "parent_span_id"
    )


def test_the_checkout_page_places_its_order_in_the_page_loads_trace() -> None:
    """A live load of the checkout page sends its fetch of POST /api/checkout for real, with the fetch span's
    trace header; the page load posted to the tunnel holds that span, and the order's mail job carries the
    trace the shop answered."""
    import json
    from datetime import UTC, datetime

    import httpx

    from demo.delivery import Tally

    seen: dict[str, Any] = {"checkout": [], "tunnel": []}

    def shop(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/checkout":
            seen["checkout"].append(request.headers.get("sentry-trace"))
            parent = request.headers["sentry-trace"].split("-")
            job = {"sentry-trace": f"{parent[0]}-{'ab' * 8}-1"}
            return httpx.Response(
                200, json={"order_id": "o1", "total_cents": 4200, "mail_job": {"trace": job}}
            )
        seen["tunnel"].append(request.content)
        return httpx.Response(200, json={})

    site = traffic.Site("http://key@127.0.0.1:9/1", "https://shop.example", "production")
    # The driver's SDK sends no trace headers of its own (trace_propagation_targets=[]), as in demo.driver.
    quiet = sentry_sdk.Client(
        dsn="http://key@127.0.0.1:9/1", trace_propagation_targets=[], default_integrations=False
    )
    with (
        sentry_sdk.isolation_scope() as scope,
        httpx.Client(base_url="http://shop.test", transport=httpx.MockTransport(shop)) as client,
    ):
        scope.set_client(quiet)
        now = datetime.now(UTC)
        orders = [
            traffic.page_load(
                client, random.Random(seed), site, traffic.CURRENT_RELEASE, now, Tally(), now.date()
            )
            for seed in range(40)
        ]
    placed = [o for o in orders if o is not None]
    assert placed and len(placed) == len(seen["checkout"]), "every checkout page load placed its order"
    trace_id, span_id, _ = seen["checkout"][0].split("-")
    loads = [
        json.loads(line) for body in seen["tunnel"] for line in body.splitlines()[1:] if b'"spans"' in line
    ]
    load = next(p for p in loads if p["contexts"]["trace"]["trace_id"] == trace_id)
    fetch = next(s for s in load["spans"] if s["span_id"] == span_id)
    assert fetch["op"] == "http.client" and fetch["description"].endswith("/api/checkout")
    assert fetch["data"]["http.response.status_code"] == 200
    assert placed[0].trace == {"sentry-trace": f"{trace_id}-{'ab' * 8}-1"} and placed[0].total_cents == 4200
