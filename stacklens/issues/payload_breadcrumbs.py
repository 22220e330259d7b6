"""An event payload's breadcrumbs and times for the issue view (:mod:`stacklens.issues.payload_view`): each
breadcrumb's time, category and message as text, the categories present, and the note shown when the
event's own time was replaced at ingest."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypedDict

from stacklens.issues.payload_view import Payload, as_dict, as_list, as_text
from stacklens_contract.words import BREADCRUMB_CATEGORIES


class TimeNote(TypedDict):
    """Why the event is stored under its receive time: the time it was sent with, why that was replaced, and
    the time it is stored under."""

    sent: str
    why: str
    stored: str


class Breadcrumb(TypedDict):
    time: str
    category: str
    level: str
    message: str


def _when(value: Any) -> str:
    """One format for every SDK: Python sends ISO 8601 text, JavaScript epoch seconds."""
    moment: datetime | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            moment = datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError):
            return ""
    elif isinstance(value, str) and value:
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] if moment else ""


def _crumb_message(category: str, message: Any, data: Payload) -> str:
    """What a person reads: the message, else the data in words (``/ → /cart``, ``GET /api → 500``)."""
    if message not in (None, ""):
        return as_text(message)
    if category == "navigation" and ("from" in data or "to" in data):
        return f"{as_text(data.get('from'))} → {as_text(data.get('to'))}"
    if "url" in data and (category.startswith("http") or category in ("fetch", "xhr")):
        words = " ".join(as_text(data[k]) for k in ("method", "url") if data.get(k))
        status = data.get("status_code")
        return f"{words} → {as_text(status)}" if status not in (None, "") else words
    return ", ".join(f"{key}={as_text(value)}" for key, value in data.items())


# The Relay-style entries ingest adds to ``errors`` when it stores an event under its receive time
# (stacklens/ingest/clock.py), and why, in the reader's words.
_REPLACED_TIME = {
    "past_timestamp": "older than this service keeps events (its retention, less a day)",
    "future_timestamp": "more than a minute ahead of the service's clock",
    "invalid_timestamp": "not a time the service could read",
}


def time_note(payload: Payload) -> TimeNote | None:
    """The note for an event stored under its receive time instead of the time it was sent with."""
    for entry in as_list(payload.get("errors")):
        if isinstance(entry, dict) and entry.get("type") in _REPLACED_TIME:
            return {
                "sent": _when(entry.get("value")),
                "why": _REPLACED_TIME[str(entry["type"])],
                "stored": as_text(entry.get("server_time")),
            }
    return None


def breadcrumbs(payload: Payload) -> list[Breadcrumb]:
    crumbs: list[Breadcrumb] = []
    for crumb in as_list(payload.get("breadcrumbs")):
        crumb = as_dict(crumb)
        category = as_text(crumb.get("category") or crumb.get("type") or "default")
        crumbs.append(
            {
                "time": _when(crumb.get("timestamp")),
                "category": category,
                "level": as_text(crumb.get("level") or "info"),
                "message": _crumb_message(category, crumb.get("message"), as_dict(crumb.get("data"))),
            }
        )
    crumbs.sort(key=lambda c: c["time"])
    return crumbs


def breadcrumb_categories(crumbs: list[Breadcrumb]) -> list[str]:
    """The filter's choices: the spec's categories, then other top-level ones the event has (``ui.click``
    is filtered under ``ui``)."""
    seen = list(BREADCRUMB_CATEGORIES)
    for crumb in crumbs:
        top = crumb["category"].split(".", 1)[0]
        if top and top not in seen:
            seen.append(top)
    return seen
