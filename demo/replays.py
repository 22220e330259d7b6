"""Session replays as `@sentry/browser`'s Replay integration sends them, for the demo shop's browser errors.

A recording is rrweb events: a meta event and a full snapshot of the cart page (text masked as the SDK masks
it by default: every letter an asterisk), then mouse moves, clicks with their ``ui.click`` breadcrumbs,
DOM changes as items are added, and a navigation. It is cut into segments of ten seconds, each sent as the SDK
sends it: a ``replay_event`` and a zlib-compressed ``replay_recording`` in one envelope.
"""

from __future__ import annotations

import json
import random
import re
import uuid
import zlib
from datetime import UTC, datetime

SEGMENT_SECONDS = 10
_MASK = re.compile(r"\S")


def _masked(text: str) -> str:
    return _MASK.sub("*", text)


def _node(node_id: int, tag: str, attrs: dict[str, str], children: list[dict]) -> dict:
    return {"type": 2, "tagName": tag, "attributes": attrs, "childNodes": children, "id": node_id}


def _text(node_id: int, text: str) -> dict:
    return {"type": 3, "textContent": _masked(text), "id": node_id}


def cart_snapshot(products: int = 6) -> tuple[dict, int]:
    """The cart page's DOM as rrweb serialises it, and the id of its "Checkout" button."""
    ids = iter(range(10, 100_000))
    rows = []
    for n in range(products):
        rows.append(
            _node(
                next(ids),
                "li",
                {"class": "item"},
                [
                    _text(next(ids), f"Product {n + 1} · Organic cotton shirt, size M"),
                    _node(next(ids), "button", {"class": "add-to-cart"}, [_text(next(ids), "Add to cart")]),
                ],
            )
        )
    checkout = next(ids)
    style = "body{font-family:sans-serif;margin:2rem;color:#1f2328} .item{padding:.6rem;border-bottom:1px solid #d0d7de;list-style:none} button{padding:.3rem .8rem;margin-left:1rem} h1{color:#0b5cad}"
    body = _node(
        5,
        "body",
        {},
        [
            _node(6, "h1", {}, [_text(7, "Demo shop · Your cart")]),
            _node(8, "ul", {"id": "items"}, rows),
            _node(checkout, "button", {"id": "checkout"}, [_text(next(ids), "Checkout")]),
        ],
    )
    head = _node(
        3, "head", {}, [_node(4, "style", {}, [{"type": 3, "textContent": style, "isStyle": True, "id": 9}])]
    )
    html = _node(2, "html", {"lang": "en"}, [head, body])
    document = {
        "type": 0,
        "childNodes": [{"type": 1, "name": "html", "publicId": "", "systemId": "", "id": 1}, html],
        "id": 0,
    }
    return document, checkout


def session_events(
    rng: random.Random, origin: str, start_ms: int, seconds: int, move_every_ms: int = 100, products: int = 6
) -> list[dict]:
    """A visitor on the cart page for ``seconds``: moves, clicks, items added, a navigation at the end."""
    document, checkout = cart_snapshot(products)
    events: list[dict] = [
        {"type": 4, "timestamp": start_ms, "data": {"href": f"{origin}/cart", "width": 1280, "height": 800}},
        {
            "type": 2,
            "timestamp": start_ms + 2,
            "data": {"node": document, "initialOffset": {"left": 0, "top": 0}},
        },
    ]
    x, y, next_id = 300, 200, 200_000
    for at in range(start_ms + 50, start_ms + seconds * 1000, move_every_ms):
        x = max(0, min(1200, x + rng.randint(-40, 40)))
        y = max(0, min(760, y + rng.randint(-25, 25)))
        events.append(
            {
                "type": 3,
                "timestamp": at,
                "data": {"source": 1, "positions": [{"x": x, "y": y, "id": 5, "timeOffset": 0}]},
            }
        )
        if rng.random() < move_every_ms / 4000:  # a click every ~4 s: an item goes into the cart
            target = rng.choice([12 + 4 * n for n in range(6)])
            events.append(
                {
                    "type": 3,
                    "timestamp": at + 1,
                    "data": {"source": 2, "type": 2, "id": target, "x": x, "y": y},
                }
            )
            events.append(
                {
                    "type": 5,
                    "timestamp": at + 2,
                    "data": {
                        "tag": "breadcrumb",
                        "payload": {
                            "timestamp": (at + 2) / 1000,
                            "type": "default",
                            "category": "ui.click",
                            "message": "li.item > button.add-to-cart",
                        },
                    },
                }
            )
            next_id += 2
            added = {
                "parentId": 8,
                "nextId": None,
                "node": _node(
                    next_id, "li", {"class": "item added"}, [_text(next_id + 1, "Added to your cart")]
                ),
            }
            events.append(
                {
                    "type": 3,
                    "timestamp": at + 30,
                    "data": {"source": 0, "texts": [], "attributes": [], "removes": [], "adds": [added]},
                }
            )
    end = start_ms + seconds * 1000
    events.append(
        {"type": 3, "timestamp": end - 5, "data": {"source": 2, "type": 2, "id": checkout, "x": x, "y": y}}
    )
    events.append(
        {
            "type": 5,
            "timestamp": end - 4,
            "data": {
                "tag": "breadcrumb",
                "payload": {
                    "timestamp": (end - 4) / 1000,
                    "type": "default",
                    "category": "ui.click",
                    "message": "body > button#checkout",
                },
            },
        }
    )
    events.append(
        {
            "type": 5,
            "timestamp": end,
            "data": {
                "tag": "breadcrumb",
                "payload": {
                    "timestamp": end / 1000,
                    "type": "default",
                    "category": "navigation",
                    "data": {"from": "/cart", "to": "/checkout"},
                },
            },
        }
    )
    return events


def replay_envelopes(
    dsn: str,
    replay_id: str,
    events: list[dict],
    *,
    origin: str,
    release: str,
    environment: str,
    user_agent: str,
    user_id: str | None,
    error_ids: list[str],
    segment_seconds: int = SEGMENT_SECONDS,
) -> list[bytes]:
    """One envelope per ten-second segment: the replay event and its zlib-compressed recording."""
    start = events[0]["timestamp"]
    segments: dict[int, list[dict]] = {}
    for event in events:
        segments.setdefault(int((event["timestamp"] - start) // (segment_seconds * 1000)), []).append(event)
    bodies = []
    for index, (segment_id, part) in enumerate(sorted(segments.items())):
        replay_event = {
            "type": "replay_event",
            "replay_id": replay_id,
            "event_id": replay_id,
            "segment_id": index,
            "replay_type": "session",
            "timestamp": part[-1]["timestamp"] / 1000,
            "replay_start_timestamp": start / 1000,
            "urls": [f"{origin}/cart"] if segment_id == 0 else [],
            "error_ids": error_ids if index == len(segments) - 1 else [],
            "trace_ids": [],
            "platform": "javascript",
            "release": release,
            "environment": environment,
            "sdk": {"name": "sentry.javascript.browser", "version": "10.27.0"},
            "request": {"url": f"{origin}/cart", "headers": {"User-Agent": user_agent}},
            **({"user": {"id": user_id}} if user_id else {}),
        }
        recording = (
            json.dumps({"segment_id": index}).encode()
            + b"\n"
            + zlib.compress(json.dumps(part, separators=(",", ":")).encode())
        )
        event_body = json.dumps(replay_event).encode()
        header = {
            "event_id": replay_id,
            "sent_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "dsn": dsn,
        }
        bodies.append(
            b"\n".join(
                [
                    json.dumps(header).encode(),
                    json.dumps({"type": "replay_event", "length": len(event_body)}).encode(),
                    event_body,
                    json.dumps({"type": "replay_recording", "length": len(recording)}).encode(),
                    recording,
                ]
            )
            + b"\n"
        )
    return bodies


def new_replay_id(seed: str) -> str:
    """A replay id derived from the error it leads to, so the demo's seeded traffic stays reproducible."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"replay:{seed}").hex
