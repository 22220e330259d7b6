"""Which envelope items become log lines, and the JSON payload each one carries."""

from __future__ import annotations

import base64
import json
from typing import Any

from sentry_sdk.envelope import Item

# Errors, transactions, standalone spans (the browser's INP span), replay items and release-health sessions
# are what the service ingests; client reports are kept in the files too (the shipper delivers them, the
# service counts and skips them); a `log` item (sentry-python's `enable_logs`) becomes one line per record.
# Attachments, profiles and metrics are not written.
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
        "log",
    }
)


class UnreadableItem(ValueError):
    """An item's payload is not what its type promises (e.g. an event that is not a JSON object)."""


def item_payload(item: Item, envelope_headers: Any = None) -> Any:
    """The JSON value a log line carries for ``item``.

    Event-like items carry the SDK's payload unchanged. A ``replay_recording`` item is
    ``{"segment_id": n}\\n`` followed by the rrweb recording, JSON, zlib or gzip; it becomes
    ``{"replay_id": "<id>", "segment_id": n, "recording_base64": "<bytes as sent>"}``: a log line is text,
    the bytes stay exactly as the SDK compressed them, and the replay id (which only the envelope header
    carries) travels with them so the line stands alone.
    """
    kind = item.type
    if kind == "replay_recording":
        replay_id = envelope_headers.get("event_id") if isinstance(envelope_headers, dict) else None
        return _replay_recording(item.get_bytes(), replay_id)
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


def _replay_recording(raw: bytes, replay_id: Any) -> dict[str, Any]:
    header, sep, body = raw.partition(b"\n")
    if not sep:
        raise UnreadableItem("replay_recording item has no segment header line")
    try:
        meta = json.loads(header)
    except ValueError as exc:
        raise UnreadableItem(f"replay_recording header is not JSON: {exc}") from exc
    if not isinstance(meta, dict):
        raise UnreadableItem("replay_recording header is not a JSON object")
    if isinstance(replay_id, str) and "replay_id" not in meta:
        meta["replay_id"] = replay_id
    return {**meta, "recording_base64": base64.b64encode(body).decode("ascii")}


def lost_quantities(item: Item) -> list[tuple[str, int]]:
    """(data category, quantity) pairs to count when ``item`` is dropped, as sentry-sdk counts them."""
    category = item.data_category
    if category == "transaction":
        event = item.get_transaction_event() or {}
        spans = event.get("spans") if isinstance(event, dict) else None
        # A dropped transaction also loses its spans: sentry counts them as spans + 1 (the root span).
        return [("transaction", 1), ("span", len(spans or []) + 1)]
    return [(category, 1)]
