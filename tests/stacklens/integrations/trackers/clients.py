"""A tracker client against the fake-tracker server (its waits recorded, never slept), and a description."""

from __future__ import annotations

from stacklens.integrations.document import Document
from stacklens.integrations.trackers import tracker_for
from stacklens.integrations.trackers.base import Connection, Tracker
from stacklens.outbound import AllowList, OutboundClient
from tests.stacklens.integrations.fake_trackers import FakeTrackers


def client(fake: FakeTrackers, kind: str, token: str, email: str = "", timeout: float = 5.0) -> Tracker:
    outbound = OutboundClient(allow=AllowList.parse("127.0.0.1"), timeout_s=timeout)
    tracker = tracker_for(Connection(kind, fake.url, token, email), outbound)
    waits: list[float] = []
    tracker.sleep = waits.append
    tracker.waits = waits  # type: ignore[attr-defined]
    return tracker


def doc() -> Document:
    return (
        Document()
        .heading("Error")
        .facts([("Error", "ZeroDivisionError: division by zero"), ("Culprit", "app.checkout in total")])
        .code("ZeroDivisionError: division by zero\n  at total (app/checkout.py:12)")
        .link("Open the issue in StackLens", "https://stacklens.example.com/orgs/acme/projects/web/issues/7")
        .paragraph("StackLens reference: stacklensabc123")
    )
