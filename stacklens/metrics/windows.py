"""What a time window is, defined once for every figure of the product.

A named range (``14d``: "the last 14 days") is **rolling**: it ends now and starts the range's length before,
as Sentry's stats periods do; it is never a run of calendar days. Every window, named or given as
``since``/``until``, is cut at whole UTC minutes (start rounded down, end rounded up) and is closed-open,
``since <= t < until``: the performance states hold one-minute periods, so a window is a single read of the
periods that tile it, and the error side cuts its windows the same way so that a "14d" of the issue list, the
issue page, its chart, the API, Explore, alert rules and release pages hold the same events.

Rounding to whole days instead (the issue list once counted from midnight 15 calendar days back) made
"Events (14d)" hold up to a day more than the issue page's 14-day chart; rounding to whole hours would widen a
"last 24 hours" by up to two hours.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

MINUTE = timedelta(minutes=1)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# How a window is cut, in words: the label pages put beside a figure over a window.
RULE = "rolling window, whole UTC minutes, up to now"


def utc(value: datetime) -> datetime:
    """``value`` as an aware UTC time (the engine answers naive UTC times)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def floor(value: datetime, step: timedelta = MINUTE) -> datetime:
    """``value`` rounded down to a multiple of ``step`` (a minute, an hour or a day) since the Unix epoch,
    in UTC."""
    return EPOCH + step * ((utc(value) - EPOCH) // step)


def ceil(value: datetime, step: timedelta = MINUTE) -> datetime:
    """``value`` rounded up to a multiple of ``step`` since the Unix epoch, in UTC."""
    low = floor(value, step)
    return low if low == utc(value) else low + step


@dataclass(frozen=True)
class Window:
    """A closed-open UTC window ``[since, until)`` in whole minutes."""

    since: datetime
    until: datetime

    def __contains__(self, moment: datetime) -> bool:
        return self.since <= utc(moment) < self.until

    @property
    def naive(self) -> tuple[datetime, datetime]:
        """``(since, until)`` as naive UTC times (what the engine's ``DateTime64(3, 'UTC')`` parameters
        take)."""
        return self.since.replace(tzinfo=None), self.until.replace(tzinfo=None)


def cut(since: datetime, until: datetime) -> Window:
    """The window ``[since, until)`` widened to whole UTC minutes."""
    return Window(floor(since), ceil(until))


def rolling(length: timedelta, now: datetime | None = None) -> Window:
    """The named range of ``length`` ending at ``now``: ``[now − length, now)`` widened to whole minutes."""
    end = utc(now or datetime.now(UTC))
    return cut(end - length, end)


def describe(length: timedelta) -> str:
    """The label of a named range's window: ``last 14 days (rolling, to the minute)``."""
    days, rest = divmod(length, timedelta(days=1))
    if not rest and days:
        amount = f"{days} day" + ("s" if days != 1 else "")
    else:
        hours = int(length / timedelta(hours=1))
        amount = f"{hours} hour" + ("s" if hours != 1 else "")
    return f"last {amount} (rolling, to the minute)"
