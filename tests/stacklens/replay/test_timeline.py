"""The replay's timeline: navigations, clicks, breadcrumbs and errors as marks at their offsets."""

from __future__ import annotations

from datetime import UTC, datetime

from stacklens.replay.timeline import Mark, error_marks, read_marks, segment_marks

FIRST_MS = 1_763_640_000_000.0  # 2025-11-20T12:00:00Z


def _breadcrumb(at_ms: float, category: str, message: str = "", data: dict | None = None) -> dict:
    payload = {"category": category, "message": message, **({"data": data} if data else {})}
    return {"type": 5, "timestamp": at_ms, "data": {"tag": "breadcrumb", "payload": payload}}


def test_marks_of_a_segment_and_their_offsets() -> None:
    events = [
        {"type": 4, "timestamp": FIRST_MS, "data": {"href": "https://shop.example/cart"}},
        {"type": 3, "timestamp": FIRST_MS + 65_000, "data": {"source": 2, "type": 2}},  # an rrweb click
        _breadcrumb(FIRST_MS + 65_030, "ui.click", "button#pay"),  # the SDK's breadcrumb for the same click
        _breadcrumb(FIRST_MS + 70_000, "navigation", data={"to": "/thanks"}),
        _breadcrumb(FIRST_MS + 71_000, "console", "ready"),
        {"type": 2, "timestamp": FIRST_MS, "data": {}},  # a full snapshot: no mark
    ]
    kept = segment_marks(events)
    assert [kind for _, kind, _ in kept] == ["navigation", "click", "click", "navigation", "breadcrumb"]
    marks = read_marks([kept[:2], kept[2:]], FIRST_MS)
    # The bare click is the breadcrumb's echo: only the named one stays.
    assert [(m.clock, m.kind, m.label) for m in marks] == [
        ("0:00", "navigation", "https://shop.example/cart"),
        ("1:05", "click", "button#pay"),
        ("1:10", "navigation", "/thanks"),
        ("1:11", "breadcrumb", "console: ready"),
    ]


def test_errors_link_to_their_issue() -> None:
    errors = [
        {
            "timestamp": datetime(2025, 11, 20, 12, 2, 5),  # the warehouse's naive UTC
            "issue_id": 42,
            "event_id": "0b8f-77",
            "title": "TypeError: x is undefined",
        }
    ]
    assert error_marks(errors, FIRST_MS, "/orgs/acme/projects/shop") == [
        Mark(125.0, "error", "TypeError: x is undefined", "/orgs/acme/projects/shop/issues/42?event=0b8f77")
    ]
    assert datetime(2025, 11, 20, 12, tzinfo=UTC).timestamp() * 1000 == FIRST_MS
