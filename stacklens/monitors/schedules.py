"""A cron monitor's schedule: a crontab in a time zone, or an interval; validated, stepped and put in words.

Sentry's ``monitor_config.schedule`` is ``{"type": "crontab", "value": "0 * * * *"}`` or ``{"type":
"interval", "value": 2, "unit": "hour"}``. A crontab is read in the monitor's ``timezone`` (an IANA name,
through :mod:`zoneinfo`), so ``0 9 * * *`` in ``Europe/Berlin`` is 08:00 UTC in winter and 07:00 UTC in
summer; an interval counts from the last check-in, as Sentry counts it.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

from croniter import croniter

from stacklens.monitors.errors import MonitorInputError

CRONTAB = "crontab"
INTERVAL = "interval"
UNITS = ("minute", "hour", "day", "week", "month", "year")
_UNIT_DELTA = {
    "minute": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
    "week": timedelta(weeks=1),
}
# Sentry's nicknames; croniter reads them too.
_NICKNAMES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


@dataclass(frozen=True)
class Schedule:
    """A validated schedule: a crontab (``value`` the five fields) or an interval (``every`` ``unit``s)."""

    type: str
    value: str
    unit: str = ""

    @property
    def every(self) -> int:
        return int(self.value) if self.type == INTERVAL else 0

    def as_json(self) -> dict[str, Any]:
        if self.type == INTERVAL:
            return {"type": INTERVAL, "value": self.every, "unit": self.unit}
        return {"type": CRONTAB, "value": self.value}


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    # Reading the zone database's names walks its files (~30 ms): once per process.
    return frozenset(available_timezones()) | {"UTC"}


def parse_timezone(value: object, field: str = "timezone") -> str:
    """An IANA time zone name (``Europe/Berlin``); ``UTC`` when empty."""
    if value is None or value == "":
        return "UTC"
    if not isinstance(value, str) or value not in _zones():
        raise MonitorInputError(
            field, f"{value!r} is not a time zone; use an IANA name such as UTC or Europe/Berlin"
        )
    return value


def parse_schedule(value: object, unit: object = None, field: str = "schedule") -> Schedule:
    """A schedule from ``{"type", "value", "unit"}``, a crontab string, or ``[value, unit]`` (the API's
    older form); :class:`MonitorInputError` naming ``field`` otherwise."""
    if isinstance(value, str):
        return _crontab(value, field)
    if isinstance(value, list) and len(value) == 2:
        return _interval(value[0], value[1], field)
    if not isinstance(value, dict):
        raise MonitorInputError(
            field,
            'write it as {"type": "crontab", "value": "0 * * * *"} or '
            '{"type": "interval", "value": 2, "unit": "hour"}',
        )
    kind = value.get("type") or (CRONTAB if isinstance(value.get("value"), str) else None)
    if kind == CRONTAB:
        raw = value.get("value")
        if not isinstance(raw, str):
            raise MonitorInputError(field, "a crontab schedule's value is text such as '0 * * * *'")
        return _crontab(raw, field)
    if kind == INTERVAL:
        return _interval(value.get("value"), value.get("unit", unit), field)
    raise MonitorInputError(field, f"unknown schedule type {kind!r}; use crontab or interval")


def _crontab(raw: str, field: str) -> Schedule:
    text = " ".join(raw.split())
    text = _NICKNAMES.get(text.lower(), text)
    # Five fields exactly: croniter also reads a sixth (seconds), which no Sentry SDK sends and which would
    # make a typo such as an extra "*" mean something else.
    if len(text.split(" ")) != 5 or not croniter.is_valid(text):
        raise MonitorInputError(
            field,
            f"{raw!r} is not a crontab; write five fields (minute 0-59, hour 0-23, day 1-31, "
            "month 1-12, weekday 0-6), e.g. '0 * * * *'",
        )
    return Schedule(CRONTAB, text)


def _interval(value: object, unit: object, field: str) -> Schedule:
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip().isdigit():
        raise MonitorInputError(field, f"an interval's value is a whole number of units (got {value!r})")
    every = int(str(value).strip())
    if not 1 <= every <= 10_000:
        raise MonitorInputError(field, "an interval's value is between 1 and 10000")
    if unit not in UNITS:
        raise MonitorInputError(field, f"an interval's unit is one of {', '.join(UNITS)} (got {unit!r})")
    return Schedule(INTERVAL, str(every), str(unit))


def next_expected(schedule: Schedule, timezone: str, after: datetime) -> datetime:
    """When the next run is due after ``after`` (UTC): the crontab's next time in the monitor's zone, or
    ``after`` plus the interval."""
    after = after.astimezone(UTC)
    if schedule.type == INTERVAL:
        if schedule.unit in ("month", "year"):
            return _add_months(after, schedule.every * (12 if schedule.unit == "year" else 1))
        return after + _UNIT_DELTA[schedule.unit] * schedule.every
    return _next_run(schedule.value, timezone, after.replace(second=0, microsecond=0))


@lru_cache(maxsize=4096)
def _next_run(crontab: str, timezone: str, minute: datetime) -> datetime:
    """A crontab's next time after ``minute``: the same for every moment of that minute (a crontab's
    resolution), so a minute's check-ins and a tick's monitors of one schedule parse it once (croniter's
    parse is ~1 ms: most of a check-in's own work)."""
    local = minute.astimezone(ZoneInfo(timezone))
    following = croniter(crontab, local).get_next(datetime)
    assert isinstance(following, datetime)
    return following.astimezone(UTC)


def _add_months(moment: datetime, months: int) -> datetime:
    """The same day and time ``months`` later; the 31st of a shorter month is its last day."""
    index = moment.month - 1 + months
    year, month = moment.year + index // 12, index % 12 + 1
    return moment.replace(year=year, month=month, day=min(moment.day, calendar.monthrange(year, month)[1]))


def schedule_of(schedule_type: str, value: str, unit: str) -> Schedule | None:
    """The stored schedule's columns as a :class:`Schedule` (None: the monitor has none yet)."""
    return Schedule(schedule_type, value, unit) if schedule_type in (CRONTAB, INTERVAL) else None


_WEEKDAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


def in_words(schedule: Schedule | None, timezone: str = "UTC") -> str:
    """The schedule as a person says it: "every 2 hours", "every day at 09:00 (Europe/Berlin)", else the
    crontab itself with its zone."""
    if schedule is None:
        return "no schedule yet"
    if schedule.type == INTERVAL:
        n = schedule.every
        return f"every {schedule.unit}" if n == 1 else f"every {n} {schedule.unit}s"
    minute, hour, day, month, weekday = schedule.value.split(" ")
    zone = "" if timezone == "UTC" else f" ({timezone})"
    if schedule.value == "* * * * *":
        return "every minute"
    if minute.startswith("*/") and (hour, day, month, weekday) == ("*", "*", "*", "*"):
        return f"every {minute[2:]} minutes"
    if minute.isdigit() and hour.startswith("*/") and (day, month, weekday) == ("*", "*", "*"):
        return (
            f"every {hour[2:]} hours at minute {int(minute)}{zone}"
            if int(minute)
            else f"every {hour[2:]} hours{zone}"
        )
    if minute.isdigit() and (hour, day, month, weekday) == ("*", "*", "*", "*"):
        return f"every hour at minute {int(minute)}"
    if minute.isdigit() and hour.isdigit() and (day, month) == ("*", "*"):
        at = f"{int(hour):02d}:{int(minute):02d}"
        if weekday == "*":
            return f"every day at {at}{zone}"
        if weekday.isdigit() and int(weekday) < 7:
            return f"every {_WEEKDAYS[int(weekday)]} at {at}{zone}"
    return f"cron {schedule.value}{zone}"


def minutes(value: object, field: str, default: int, minimum: int, maximum: int = 40_320) -> int:
    """A whole number of minutes (``checkin_margin``, ``max_runtime``) within bounds; ``default`` when
    absent. 40,320 minutes is Sentry's bound (28 days)."""
    return whole(value, field, default, minimum, maximum)


def whole(value: object, field: str, default: int, minimum: int, maximum: int) -> int:
    """A whole number within ``minimum``..``maximum``, or :class:`MonitorInputError` naming ``field``."""
    if value is None or value == "":
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise MonitorInputError(field, f"must be a whole number (got {value!r})")
    try:
        number = int(value)
    except ValueError:
        raise MonitorInputError(field, f"must be a whole number (got {value!r})") from None
    if number < minimum:
        raise MonitorInputError(
            field, f"must not be negative (got {number})" if minimum == 0 else f"must be at least {minimum}"
        )
    if number > maximum:
        raise MonitorInputError(field, f"must be at most {maximum}")
    return number


def grace(minutes_: int) -> timedelta:
    return timedelta(minutes=minutes_)
