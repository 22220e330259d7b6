"""Envelope items as log lines: event-like payloads as sent, replay recordings with their replay id, and what
a dropped item counts as lost."""

from __future__ import annotations

import base64
import json
import zlib

import pytest
from sentry_sdk.envelope import Item, PayloadRef

from stacklens_sdk.items import UnreadableItem, item_payload, lost_quantities


def test_event_like_items_carry_their_json_object() -> None:
    event = {"event_id": "a" * 32, "message": "boom"}
    assert item_payload(Item(payload=PayloadRef(json=event), type="event")) == event
    assert item_payload(Item(payload=json.dumps(event).encode(), type="event")) == event
    with pytest.raises(UnreadableItem, match="event item is not JSON"):
        item_payload(Item(payload=b"{not json", type="event"))
    with pytest.raises(UnreadableItem, match="not a JSON object"):
        item_payload(Item(payload=b"[1, 2]", type="log"))


def test_a_replay_recording_keeps_its_bytes_and_gains_the_replay_id() -> None:
    body = zlib.compress(b'[{"type": 4}]')
    item = Item(payload=b'{"segment_id": 3}\n' + body, type="replay_recording")
    line = item_payload(item, {"event_id": "r" * 32})
    assert line == {
        "segment_id": 3,
        "replay_id": "r" * 32,
        "recording_base64": base64.b64encode(body).decode(),
    }
    with pytest.raises(UnreadableItem, match="no segment header line"):
        item_payload(Item(payload=b'{"segment_id": 3}', type="replay_recording"))


def test_a_dropped_transaction_loses_its_spans_too() -> None:
    transaction = {"type": "transaction", "spans": [{"span_id": "1"}, {"span_id": "2"}]}
    assert lost_quantities(Item(payload=PayloadRef(json=transaction), type="transaction")) == [
        ("transaction", 1),
        ("span", 3),
    ]
    assert lost_quantities(Item(payload=PayloadRef(json={}), type="event")) == [("error", 1)]
