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
    client = sentry_sdk.Client(dsn="http://key@127.0.0.1:9/1", transport=kept, traces_sample_rate=1.0)
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
