"""What the player's timeline marks and the breadcrumbs beside it: clicks, navigations and Sentry's
breadcrumbs read from the rrweb events, errors from the warehouse; each at its offset into the replay."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from stacklens.replay.recording import event_ms

MAX_MARKS = 500  # a long session clicks a lot; the timeline stays readable and the page small
_INCREMENTAL, _META, _CUSTOM = 3, 4, 5
_MOUSE_INTERACTION, _CLICK = 2, 2


@dataclass(frozen=True)
class Mark:
    offset: float  # seconds from the replay's first event
    kind: str  # "click", "navigation", "error" or "breadcrumb"
    label: str
    link: str = ""

    @property
    def clock(self) -> str:
        minutes, seconds = divmod(int(self.offset), 60)
        return f"{minutes}:{seconds:02d}"


def segment_marks(events: list[dict[str, Any]]) -> list[tuple[float, str, str]]:
    """``(epoch ms, kind, label)`` of the marks in one segment's events: worked out once, at ingest, and
    kept beside the segment, so the replay page need not read every rrweb event again."""
    out = []
    for event in events:
        at = event_ms(float(event.get("timestamp") or 0))
        mark = _mark(event, 0.0)
        if mark is not None:
            out.append((at, mark.kind, mark.label))
    return out


def read_marks(segments: list[list[Any]], first_ms: float) -> list[Mark]:
    """The marks of every segment (as :func:`segment_marks` kept them), as offsets from ``first_ms``."""
    marks = [
        Mark(max(0.0, (float(at) - first_ms) / 1000.0), str(kind), str(label))
        for segment in segments
        for at, kind, label in segment
    ]
    marks.sort(key=lambda m: m.offset)
    return _without_echoes(marks)[:MAX_MARKS]


def _without_echoes(marks: list[Mark]) -> list[Mark]:
    """rrweb records a click and the SDK adds a ``ui.click`` breadcrumb for it: keep the breadcrumb, which
    names the element, and drop the bare click recorded within a few milliseconds of it."""
    named = [m.offset for m in marks if m.kind == "click" and m.label != "Click"]
    return [
        m
        for m in marks
        if not (m.kind == "click" and m.label == "Click" and any(abs(m.offset - t) < 0.1 for t in named))
    ]


def _mark(event: dict[str, Any], offset: float) -> Mark | None:
    kind, data = event.get("type"), event.get("data")
    if not isinstance(data, dict):
        return None
    if kind == _META and isinstance(data.get("href"), str):
        return Mark(offset, "navigation", data["href"][:300])
    if kind == _INCREMENTAL and data.get("source") == _MOUSE_INTERACTION and data.get("type") == _CLICK:
        return Mark(offset, "click", "Click")
    if kind == _CUSTOM and data.get("tag") == "breadcrumb":
        payload = data.get("payload")
        crumb: dict[str, Any] = payload if isinstance(payload, dict) else {}
        category = str(crumb.get("category") or "breadcrumb")[:60]
        message = str(crumb.get("message") or "")[:300]
        if category == "ui.click":
            return Mark(offset, "click", message or "Click")
        if category == "navigation":
            details = crumb.get("data")
            to = details.get("to") if isinstance(details, dict) else ""
            return Mark(offset, "navigation", str(to or message)[:300])
        return Mark(offset, "breadcrumb", f"{category}: {message}" if message else category)
    return None


def error_marks(errors: list[dict[str, Any]], first_ms: float, link_base: str) -> list[Mark]:
    """The replay's errors as marks linking to their issue pages."""
    out = []
    for error in errors:
        when: datetime = error["timestamp"]
        aware = when if when.tzinfo else when.replace(tzinfo=UTC)  # the warehouse's times are UTC
        offset = max(0.0, aware.timestamp() - first_ms / 1000.0)
        link = f"{link_base}/issues/{error['issue_id']}?event={error['event_id'].replace('-', '')}"
        out.append(Mark(offset, "error", str(error.get("title") or "Error")[:300], link))
    return out
