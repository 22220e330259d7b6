"""Real sentry-sdk events landed through the ingest normaliser and scrubber into the test's warehouse."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

import sentry_sdk
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport

from stacklens.ingest.fields import Origin
from stacklens.ingest.normalise import event_row
from stacklens.ingest.scrub import scrub_payload
from stacklens.settings import get_settings
from stacklens.warehouse.client import get_warehouse


class _Keep(Transport):
    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.events: list[dict[str, Any]] = []

    def capture_envelope(self, envelope: Envelope) -> None:
        for item in envelope.items:
            if item.type == "event":
                self.events.append(json.loads(item.get_bytes()))


def sdk_event(
    func: Callable[[], Any],
    *,
    user: dict[str, Any] | None = None,
    tags: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
    crumbs: list[dict[str, Any]] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """The payload sentry-sdk makes for the exception ``func`` raises."""
    transport = _Keep()
    client = sentry_sdk.Client(
        dsn="https://public@example.invalid/1",
        transport=transport,
        include_local_variables=True,
        default_integrations=False,
        **options,
    )
    with sentry_sdk.isolation_scope() as scope:
        scope.set_client(client)
        if user:
            scope.set_user(user)
        for key, value in (tags or {}).items():
            scope.set_tag(key, value)
        for key, value in (extra or {}).items():
            scope.set_extra(key, value)
        for crumb in crumbs or []:
            scope.add_breadcrumb(crumb)
        try:
            func()
        except Exception as exc:  # noqa: BLE001 - the point is to capture it
            scope.capture_exception(exc)
    client.flush()
    return transport.events[0]


def land(
    org_id: int, project_id: int, payloads: list[dict[str, Any]], received_at: float | None = None
) -> list[dict[str, Any]]:
    """Scrub, normalise and insert ``payloads`` (received now, or at ``received_at``: an epoch time); return
    the rows as stored."""
    rows = []
    for payload in payloads:
        payload = scrub_payload(payload)
        raw = json.dumps(payload)
        origin = Origin(
            org_id=org_id,
            project_id=project_id,
            service=None,
            batch_id=uuid.uuid4().hex,
            received_at=time.time() if received_at is None else received_at,
        )
        rows.append(event_row(payload, origin, raw.encode(), raw))
    body = "\n".join(json.dumps(row) for row in rows).encode()
    # The test's settings (the `settings` fixture makes them the process's for the test's duration).
    get_warehouse(get_settings()).raw_insert("events", insert_block=body, fmt="JSONEachRow")
    return rows
