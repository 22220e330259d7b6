"""Sentry timestamps (RFC 3339 text or epoch seconds) to epoch seconds, and back to ClickHouse text."""

from __future__ import annotations

import calendar
import math
import time
from datetime import datetime
from typing import Any

# Before 2000 or after 2100 is a broken clock or a wrong unit (ms sent as s), not an event time.
_MIN_EPOCH = 946_684_800.0
_MAX_EPOCH = 4_102_444_800.0


def to_epoch(value: Any) -> float | None:
    """Epoch seconds, or ``None`` when the value is missing or not a plausible time."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and value:
        text = value.strip()
        try:
            seconds = float(text)
        except ValueError:
            try:
                parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
            except ValueError:
                return None
            # Sentry sends UTC; a time without an offset is UTC too.
            seconds = parsed.timestamp() if parsed.tzinfo is not None else _naive_utc(parsed)
    else:
        return None
    if not math.isfinite(seconds) or not _MIN_EPOCH <= seconds <= _MAX_EPOCH:
        return None
    return seconds


def _naive_utc(parsed: datetime) -> float:
    return calendar.timegm(parsed.timetuple()) + parsed.microsecond / 1e6


def format_ms(seconds: float) -> str:
    """``YYYY-MM-DD hh:mm:ss.fff`` in UTC, what ``DateTime64(3, 'UTC')`` parses from JSON."""
    whole = math.floor(seconds)
    millis = int(round((seconds - whole) * 1000))
    if millis == 1000:
        whole, millis = whole + 1, 0
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(whole)) + f".{millis:03d}"
