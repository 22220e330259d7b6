"""rrweb recordings as the browser SDK sends them, for the replay tests: a page's full snapshot, then clicks,
a navigation breadcrumb and mouse moves, cut into segments of the SDK's envelope shape."""

from __future__ import annotations

import json
import uuid
import zlib
from typing import Any

from tests.api.sentry_live import envelope


def snapshot(start_ms: int, title: str = "Checkout", text: str = "Order summary") -> list[dict[str, Any]]:
    """A meta event and a full snapshot of a small page (rrweb event types 4 and 2)."""
    body = {
        "type": 2,
        "tagName": "body",
        "attributes": {},
        "id": 5,
        "childNodes": [
            {
                "type": 2,
                "tagName": "h1",
                "attributes": {"id": "title"},
                "id": 6,
                "childNodes": [{"type": 3, "textContent": title, "id": 7}],
            },
            {
                "type": 2,
                "tagName": "p",
                "attributes": {},
                "id": 8,
                "childNodes": [{"type": 3, "textContent": text, "id": 9}],
            },
            {
                "type": 2,
                "tagName": "button",
                "attributes": {"id": "pay"},
                "id": 10,
                "childNodes": [{"type": 3, "textContent": "Pay", "id": 11}],
            },
        ],
    }
    html = {
        "type": 2,
        "tagName": "html",
        "attributes": {},
        "id": 2,
        "childNodes": [{"type": 2, "tagName": "head", "attributes": {}, "id": 3, "childNodes": []}, body],
    }
    return [
        {
            "type": 4,
            "timestamp": start_ms,
            "data": {"href": "http://shop.test/checkout", "width": 800, "height": 600},
        },
        {
            "type": 2,
            "timestamp": start_ms + 1,
            "data": {
                "node": {
                    "type": 0,
                    "childNodes": [
                        {"type": 1, "name": "html", "publicId": "", "systemId": "", "id": 1},
                        html,
                    ],
                    "id": 0,
                },
                "initialOffset": {"left": 0, "top": 0},
            },
        },
    ]


def activity(start_ms: int, seconds: int) -> list[dict[str, Any]]:
    """Mouse moves every 100 ms and a click every 5 s, with a click breadcrumb (a Sentry custom event)."""
    events: list[dict[str, Any]] = []
    for tick in range(seconds * 10):
        at = start_ms + tick * 100
        events.append(
            {
                "type": 3,
                "timestamp": at,
                "data": {
                    "source": 1,
                    "positions": [{"x": 100 + tick % 300, "y": 200 + tick % 50, "id": 10, "timeOffset": 0}],
                },
            }
        )
        if tick % 50 == 25:
            events.append(
                {"type": 3, "timestamp": at, "data": {"source": 2, "type": 2, "id": 10, "x": 120, "y": 210}}
            )
            events.append(
                {
                    "type": 5,
                    "timestamp": at,
                    "data": {
                        "tag": "breadcrumb",
                        "payload": {
                            "timestamp": at / 1000,
                            "type": "default",
                            "category": "ui.click",
                            "message": "body > button#pay",
                        },
                    },
                }
            )
    return events


def recording_item(
    replay_id: str, segment_id: int, events: list[dict[str, Any]], compress: str = "zlib"
) -> tuple[dict[str, Any], bytes]:
    body = json.dumps(events).encode()
    if compress == "zlib":
        body = zlib.compress(body)
    elif compress == "gzip":
        import gzip

        body = gzip.compress(body)
    return {"type": "replay_recording"}, json.dumps({"segment_id": segment_id}).encode() + b"\n" + body


def replay_event(replay_id: str, segment_id: int, start: float, at: float, **extra: Any) -> dict[str, Any]:
    return {
        "type": "replay_event",
        "replay_id": replay_id,
        "event_id": replay_id,
        "segment_id": segment_id,
        "replay_type": "session",
        "timestamp": at,
        "replay_start_timestamp": start,
        "urls": ["http://shop.test/checkout"] if segment_id == 0 else [],
        "error_ids": [],
        "trace_ids": [],
        "platform": "javascript",
        "environment": "production",
        "sdk": {"name": "sentry.javascript.browser", "version": "11.12.0"},
        "request": {
            "url": "http://shop.test/checkout",
            "headers": {
                "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36"
            },
        },
        "user": {"id": "u-42", "email": "ada@example.test"},
        **extra,
    }


def replay_envelope(
    replay_id: str,
    segment_id: int,
    events: list[dict[str, Any]],
    start: float,
    *,
    compress: str = "zlib",
    with_event: bool = True,
) -> bytes:
    items = []
    if with_event:
        at = max(e["timestamp"] for e in events) / 1000
        items.append(
            ({"type": "replay_event"}, json.dumps(replay_event(replay_id, segment_id, start, at)).encode())
        )
    items.append(recording_item(replay_id, segment_id, events, compress))
    return envelope(items, {"event_id": replay_id, "sent_at": "2026-11-23T00:00:00Z"})


def new_replay_id() -> str:
    return uuid.uuid4().hex
