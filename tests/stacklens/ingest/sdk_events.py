"""Events made by sentry-sdk itself: a real client whose transport keeps envelopes in memory.

Tests capture real exceptions and transactions through it, so normalisation and grouping are checked
against what the SDK really sends, not against hand-written payloads.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import sentry_sdk
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport


class MemoryTransport(Transport):
    """Keeps every envelope item as ``(type, payload)``."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.items: list[tuple[str, dict[str, Any]]] = []

    def capture_envelope(self, envelope: Envelope) -> None:
        for item in envelope.items:
            payload = item.payload.json
            if payload is None and item.payload.bytes:
                payload = json.loads(item.payload.bytes)
            self.items.append((item.type or "", payload))


@contextmanager
def sdk_client(**options: Any) -> Iterator[MemoryTransport]:
    """A sentry-sdk client bound to an isolation scope for the ``with`` block; yields its transport."""
    transport = MemoryTransport()
    settings: dict[str, Any] = {
        "dsn": "https://public@stacklens.invalid/1",
        "transport": transport,
        "default_integrations": False,
        "auto_enabling_integrations": False,
        "include_local_variables": True,
        "release": "shop@1.2.3",
        "environment": "production",
        "server_name": "web-1",
        "traces_sample_rate": 1.0,
    }
    settings.update(options)
    client = sentry_sdk.Client(**settings)
    with sentry_sdk.isolation_scope() as scope, sentry_sdk.new_scope():
        scope.set_client(client)
        try:
            yield transport
        finally:
            client.flush()
    client.close()


def capture(func: Callable[[], Any], **options: Any) -> dict[str, Any]:
    """Run ``func``, capture the exception it raises with sentry-sdk, return the event payload."""
    with sdk_client(**options) as transport:
        try:
            func()
        except Exception as exc:  # noqa: BLE001 - every exception is the point here
            sentry_sdk.capture_exception(exc)
        else:
            raise AssertionError("func did not raise")
    events = [p for t, p in transport.items if t == "event"]
    assert len(events) == 1, transport.items
    return events[0]


def capture_message(message: str, **options: Any) -> dict[str, Any]:
    with sdk_client(**options) as transport:
        sentry_sdk.capture_message(message)
    return next(p for t, p in transport.items if t == "event")
