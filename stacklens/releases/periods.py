"""Which periods of the session states (``session_periods``, migration 0170) tile a window: the minutes of its
partial edge hours, its other whole hours, and its whole UTC days — as aligned blocks of 2–16 days for a
total, single days for a chart that shows days. The window's bounds are whole minutes (as every performance
window is cut, :class:`stacklens.view_filters.ViewFilters`), so the periods cover it exactly, each once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

MINUTE, HOUR, DAY = timedelta(minutes=1), timedelta(hours=1), timedelta(days=1)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
BLOCKS = (
    16,
    8,
    4,
    2,
    1,
)  # days per block, largest first; a block starts on a multiple of its days since 1970

Period = tuple[str, datetime]  # (grain, start) as session_periods keys its rows


def floor(value: datetime, step: timedelta) -> datetime:
    return EPOCH + step * ((value.astimezone(UTC) - EPOCH) // step)


def ceil(value: datetime, step: timedelta) -> datetime:
    down = floor(value, step)
    return down if down == value else down + step


def _grain(days: int) -> str:
    return "day" if days == 1 else f"days_{days}"


def tile(since: datetime, until: datetime, blocks: bool = True, whole: timedelta = DAY) -> list[Period]:
    """The (grain, start) periods covering [since, until) (whole minutes): minutes at the partial edge
    hours, the other whole hours, and the whole days (``whole`` = DAY; blocks of days with ``blocks``) —
    with ``whole`` = HOUR no day at all (a chart per hour)."""
    since, until = floor(since, MINUTE), ceil(until, MINUTE)
    out: list[Period] = []
    hour_start, hour_end = ceil(since, HOUR), floor(until, HOUR)
    if hour_end <= hour_start:
        return [("minute", since + MINUTE * i) for i in range((until - since) // MINUTE)]
    day_start, day_end = ceil(hour_start, DAY), floor(hour_end, DAY)
    if whole == HOUR or day_end <= day_start:
        day_start = day_end = hour_end
    day = (day_start - EPOCH).days
    while day < (day_end - EPOCH).days:
        span = next(
            s for s in (BLOCKS if blocks else (1,)) if day % s == 0 and day + s <= (day_end - EPOCH).days
        )
        out.append((_grain(span), EPOCH + DAY * day))
        day += span
    for start, end, step, grain in (
        (hour_start, day_start, HOUR, "hour"),
        (day_end, hour_end, HOUR, "hour"),
        (since, hour_start, MINUTE, "minute"),
        (hour_end, until, MINUTE, "minute"),
    ):
        out.extend((grain, start + step * i) for i in range((end - start) // step))
    return out
