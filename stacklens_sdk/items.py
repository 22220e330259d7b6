"""Which envelope items become log lines, and the JSON payload each one carries."""

from __future__ import annotations

import base64
import json
from typing import Any

from sentry_sdk.envelope import Item

# Errors and transactions are what the service ingests today; standalone spans (the browser's INP span),
# replay items, release-health sessions and client reports are kept in the files for later (the shipper
# delivers them, the service counts and skips them). Attachments, profiles, logs and metrics are not written.
WRITTEN_TYPES = frozenset(
    {
        "event",
        "transaction",
        "span",
        "replay_event",
        "replay_recording",
        "session",
        "sessions",
        "client_report",
    }
)


class UnreadableItem(ValueError):
    """An item's payload is not what its type promises (e.g. an event that is not a JSON object)."""


def item_payload(item: Item) -> Any:
    """The JSON value a log line carries for ``item``.

    Event-like items carry the SDK's payload unchanged. A ``replay_recording`` item is
    ``{"segment_id": n}\\n`` followed by the rrweb recording, JSON or zlib-compressed; it becomes
    ``{"segment_id": n, "recording": <JSON>}`` or ``{"segment_id": n, "recording_base64": "<bytes>"}``
    because a log line is text.
    """
    kind = item.type
    if kind == "replay_recording":
        return _replay_recording(item.get_bytes())
    if item.payload.json is not None:
        payload = item.payload.json
    else:
        try:
            payload = json.loads(item.get_bytes())
        except ValueError as exc:
            raise UnreadableItem(f"{kind} item is not JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise UnreadableItem(f"{kind} item is not a JSON object")
    return payload


def _replay_recording(raw: bytes) -> dict[str, Any]:
    header, sep, body = raw.partition(b"\n")
    if not sep:
        raise UnreadableItem("replay_recording item has no segment header line")
    try:
        meta = json.loads(header)
    except ValueError as exc:
        raise UnreadableItem(f"replay_recording header is not JSON: {exc}") from exc
    if not isinstance(meta, dict):
        raise UnreadableItem("replay_recording header is not a JSON object")
    try:
        recording = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return {**meta, "recording_base64": base64.b64encode(body).decode("ascii")}
    return {**meta, "recording": recording}


def lost_quantities(item: Item) -> list[tuple[str, int]]:
    """(data category, quantity) pairs to count when ``item`` is dropped, as sentry-sdk counts them."""
    category = item.data_category
    if category == "transaction":
        event = item.get_transaction_event() or {}
        spans = event.get("spans") if isinstance(event, dict) else None
        # A dropped transaction also loses its spans: sentry counts them as spans + 1 (the root span).
        return [("transaction", 1), ("span", len(spans or []) + 1)]
    return [(category, 1)]
