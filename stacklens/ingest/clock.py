"""Which event times the warehouse keeps, and the note left in a payload whose time was replaced.

Sentry's Relay does the same: a time the retention would already expire (or expire within a day), or one
more than a minute ahead of the receiving clock, is not a time the event can be stored under. Stored
under it, the event would be answered ``accepted`` and then deleted at once by the tables' TTL, or sit
in the future where no view looks (and, many months apart, make one insert touch too many partitions).
Such a time is replaced by the receive time for storage and partitioning; the payload keeps the original
and gains a Relay-style entry in ``errors`` (``past_timestamp`` / ``future_timestamp`` /
``invalid_timestamp``), which the event page shows as a note.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from stacklens.ingest import timeparse
from stacklens.ingest.fields import Origin

# A clock up to a minute ahead is ordinary drift; beyond it the time is not believed (Relay's default).
MAX_FUTURE_SECONDS = 60.0
# A time within a day of expiring would be gone before anyone looked at it (Relay keeps the same margin).
EXPIRY_MARGIN_SECONDS = 86_400.0

# The payload field each stored line type is timed by.
TIME_FIELD = {"event": "timestamp", "transaction": "start_timestamp"}


def time_window(received: float, retention_days: int) -> tuple[float, float]:
    """``(earliest, latest)`` epoch seconds a row received at ``received`` may be stored under."""
    return received - retention_days * 86_400.0 + EXPIRY_MARGIN_SECONDS, received + MAX_FUTURE_SECONDS


def kept_under(sent_at: float | None, received: datetime, retention_days: int) -> datetime:
    """The time something sent at ``sent_at`` (epoch seconds, None: not said) is kept under: that time when an
    event could be stored under it (:func:`time_window`), never ahead of ``received``; else ``received``.
    Feedback and attachments are timed so, and so leave with their events at the retention."""
    if sent_at is None:
        return received
    earliest, latest = time_window(received.timestamp(), retention_days)
    if not earliest <= sent_at <= latest:
        return received
    return min(received, datetime.fromtimestamp(sent_at, UTC).replace(tzinfo=received.tzinfo))


def given_time(payload: dict[str, Any], item_type: str, origin: Origin) -> tuple[Any, float | None]:
    """The time the line was sent with, as sent and in epoch seconds: the payload's field when readable,
    else the line's ``ts`` (the order :func:`stacklens.ingest.fields.timestamp_of` reads them in)."""
    value = payload.get(TIME_FIELD.get(item_type, "timestamp"))
    sent = timeparse.to_epoch(value)
    if sent is None and origin.line_ts:
        line_sent = timeparse.to_epoch(origin.line_ts)
        if line_sent is not None or value is None:
            return origin.line_ts, line_sent
    return value, sent


def time_shift(payload: dict[str, Any], item_type: str, origin: Origin) -> float:
    """Seconds to add to the line's own times: non-zero only when its time was replaced, so a
    transaction's spans move with it and keep their offsets."""
    _, sent = given_time(payload, item_type, origin)
    if sent is None or origin.earliest <= sent <= origin.latest:
        return 0.0
    return origin.received_at - sent


def note_replaced_time(payload: dict[str, Any], item_type: str, origin: Origin) -> bool:
    """Add the ``errors`` entry when the line's time will not be stored as sent; True when it did.

    A line with no time at all is stored under the receive time without a note (there was nothing to
    replace).
    """
    value, sent = given_time(payload, item_type, origin)
    if value is None:
        return False
    if sent is not None and origin.earliest <= sent <= origin.latest:
        return False
    if sent is None:
        kind = "invalid_timestamp"
    else:
        kind = "past_timestamp" if sent < origin.earliest else "future_timestamp"
    note = {
        "type": kind,
        "name": TIME_FIELD.get(item_type, "timestamp"),
        "value": value,
        "server_time": timeparse.format_ms(origin.received_at),
    }
    errors = payload.get("errors")
    payload["errors"] = [*errors, note] if isinstance(errors, list) else [note]
    return True
