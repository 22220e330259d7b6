"""Sentry timestamps (RFC 3339 text or epoch seconds) to epoch seconds, and back to ClickHouse text."""

from __future__ import annotations

import calendar
import math
import time
from datetime import datetime
from functools import lru_cache
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
        # RFC 3339 text has a dash after the year, epoch text has none past its sign: test first, because a
        # failed float() raises, and raising costs more than the parse (spans carry two times each).
        if "-" in text[1:] or ":" in text:
            try:
                parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
            except ValueError:
                return None
            # Sentry sends UTC; a time without an offset is UTC too.
            seconds = parsed.timestamp() if parsed.tzinfo is not None else _naive_utc(parsed)
        else:
            try:
                seconds = float(text)
            except ValueError:
                return None
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
    millis = round((seconds - whole) * 1000)
    if millis == 1000:
        whole, millis = whole + 1, 0
    minute, second = divmod(whole, 60)
    return f"{_minute_text(minute)}:{second:02d}.{millis:03d}"


@lru_cache(maxsize=4096)
def _minute_text(minute: int) -> str:
    """``YYYY-MM-DD hh:mm`` of a minute since the epoch: the times of one batch share a few minutes."""
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(minute * 60))
