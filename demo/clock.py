"""Demo history: move captured events back in time so trends and release impact have weeks to show.

The backfill replays shop traffic for past days. Each replayed request carries the moment and release it
stands for (the ``X-Demo-Clock`` header, honoured only by a shop started for the backfill); the shop puts it
in a ``demo_clock`` context, and :func:`apply_demo_clock` (an SDK ``before_send`` hook) removes that context
and shifts every timestamp of the event by the same amount, spans and breadcrumbs included;
:func:`move_request_session` moves the request's release-health session there too.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from typing import Any

import sentry_sdk

CLOCK_HEADER = "x-demo-clock"
CONTEXT = "demo_clock"
# The demo clock of the request being handled, for its log records: sentry-python's log hook sees the record
# only (no event contexts), so the shop's middleware also puts the clock here.
REQUEST_CLOCK: ContextVar[str | None] = ContextVar("demo_request_clock", default=None)
LOG_RETENTION_DAYS = 30  # the service's default (stacklens.settings.Settings.log_retention_days)
# The service stores a record under its own time only when that time is more than a day inside the retention
# when it is received (stacklens.ingest.clock.time_window), and a record reaches it some time after the shop
# wrote it (the shipper's batches; a test posts the whole history's files after the backfill, minutes later
# on a loaded machine). A record is sent only when it is this much further inside: one written at the edge
# was stored under its arrival time.
LOG_DELIVERY_MARGIN = timedelta(hours=1)


def encode_clock(at: datetime, release: str) -> str:
    return f"{at.astimezone(UTC).isoformat()}|{release}"


def decode_clock(value: str) -> tuple[datetime, str]:
    at, _, release = value.partition("|")
    return datetime.fromisoformat(at), release


def _shift(value: Any, delta: timedelta) -> Any:
    if isinstance(value, datetime):
        return value + delta
    if isinstance(value, int | float):
        return value + delta.total_seconds()
    if isinstance(value, str):
        try:
            return (datetime.fromisoformat(value.replace("Z", "+00:00")) + delta).isoformat()
        except ValueError:
            return value
    return value


def _as_datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float):
        return datetime.fromtimestamp(value, UTC)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


def move_request_session(value: str) -> None:
    """Move the current request's session to the demo clock's moment and release.

    sentry-python makes each request of a web app a session (request mode) when the request starts, with the
    process's release and the current time, and counts it in the minute it started; a history request must
    count in its own minute and release, as its events do. The session sits on the request's isolation scope
    (``_session``: sentry-sdk offers no public setter).
    """
    at, release = decode_clock(value)
    session = getattr(sentry_sdk.get_isolation_scope(), "_session", None)
    if session is not None:
        session.update(started=at, timestamp=at, release=release or None)


def apply_demo_clock(event: dict[str, Any], _hint: Any = None) -> dict[str, Any]:
    """``before_send`` / ``before_send_transaction``: honour a ``demo_clock`` context, if any."""
    clock = (event.get("contexts") or {}).pop(CONTEXT, None)
    if not clock:
        return event
    at, release = decode_clock(clock["value"])
    captured = _as_datetime(event.get("timestamp")) or datetime.now(UTC)
    delta = at - captured
    for key in ("timestamp", "start_timestamp"):
        if key in event:
            event[key] = _shift(event[key], delta)
    for span in event.get("spans") or []:
        for key in ("timestamp", "start_timestamp"):
            if key in span:
                span[key] = _shift(span[key], delta)
    crumbs = event.get("breadcrumbs")
    values = crumbs.get("values") if isinstance(crumbs, dict) else crumbs
    for crumb in values or []:
        if "timestamp" in crumb:
            crumb["timestamp"] = _shift(crumb["timestamp"], delta)
    if release:
        event["release"] = release
    return event


def apply_demo_clock_to_log(log: dict[str, Any], _hint: Any = None) -> dict[str, Any] | None:
    """``before_send_log``: a history request's log records carry its moment and release, as its events do.

    Records of days the logs' retention (``STACKLENS_LOG_RETENTION_DAYS``, 30 by default) no longer keeps are
    not sent: a real application's logs of five weeks ago would have expired, and the service would store them
    under the time they arrived.
    """
    clock = REQUEST_CLOCK.get()
    if not clock:
        return log
    at, release = decode_clock(clock)
    kept_days = int(os.environ.get("STACKLENS_LOG_RETENTION_DAYS") or LOG_RETENTION_DAYS)
    if at < datetime.now(UTC) - timedelta(days=kept_days - 1) + LOG_DELIVERY_MARGIN:
        return None
    log["time_unix_nano"] = int(at.timestamp() * 1_000_000_000)
    if release:
        attributes = log.setdefault("attributes", {})
        attributes["sentry.release"] = release
    return log
