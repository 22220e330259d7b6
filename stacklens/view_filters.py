"""The filters every view takes (docs/reference.md) — performance, logs, releases, Explore and the pages and
downloads over them: a time window given as `range` (24h, 7d, 14d, 30d, 90d) or as `since`/`until`
(ISO 8601), and `environment`, `release`, `browser`; and the state-table periods that tile the window.

Parsing lives here, once, so a page and the API answer the same numbers for the same query string and refuse
the same bad values with the same message (naming the field) — the yes/no options beside the filters too
(:func:`flag`: the recommendations' ``include_old_releases``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.errors import InvalidInput
from stacklens.metrics import windows

RANGES: dict[str, timedelta] = {
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "14d": timedelta(days=14),
    "30d": timedelta(days=30),
    "90d": timedelta(days=90),
}
DEFAULT_RANGE = "7d"
# The release views open on the window Release health opens on (stacklens/releases/health.py): a week shows
# the current release alone, and the demo's headline regression (shop@1.3.0, one to two weeks old) and the
# release before it would not be on the page a new user opens first (issue #47). Stated on each page beside
# the range.
RELEASE_VIEWS_DEFAULT_RANGE = "30d"
VIEW_DEFAULT_RANGES: dict[str, str] = {
    "trends": RELEASE_VIEWS_DEFAULT_RANGE,
    "releases": RELEASE_VIEWS_DEFAULT_RANGE,
}


def default_range(view: str) -> str:
    """The range a view opens on when the query names no window: 30d for the release views, else 7d."""
    return VIEW_DEFAULT_RANGES.get(view, DEFAULT_RANGE)


# Every query reads the state rows of the window only; 90 days bounds what one page view can cost.
MAX_WINDOW = timedelta(days=90)
MAX_VALUE_LENGTH = 256
# The grains of the state tables (`pageload_periods`, `resource_request_periods`, `endpoint_call_periods`:
# their `grain` Enum16, whose value is the period's length in minutes): a minute, an hour, a UTC day and the
# aligned blocks of 2, 4, 8 and 16 days — a block of `span` days starts on a multiple of `span` days since
# 1970-01-01.
GRAIN_MINUTES: dict[str, int] = {
    "minute": 1,
    "hour": 60,
    "day": 1440,
    "days_2": 2880,
    "days_4": 5760,
    "days_8": 11520,
    "days_16": 23040,
}
DAY_SPANS = (16, 8, 4, 2, 1)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Windows are widened to whole UTC minutes (since down, until up): the state tables also hold one-minute
# periods for the partial hours at a window's edges, so a window is a single read of the periods that tile it
# (docs/performance.md, "Windows").
MINUTE = timedelta(minutes=1)
Period = tuple[str, datetime]  # (grain, start): one row key of the state tables


def day_grain(span: int) -> str:
    """The grain of a block of ``span`` days: ``day`` for one, ``days_<span>`` for more."""
    return "day" if span == 1 else f"days_{span}"


class BadFilter(InvalidInput):
    """A filter value that cannot be used; the message names the field and says what is accepted."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.field = name


def _parse_time(name: str, value: str) -> datetime:
    text = value.strip()
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise BadFilter(name, f"{value!r} is not an ISO 8601 time such as 2026-11-20T00:00:00Z") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _plain(name: str, value: str) -> str:
    if len(value) > MAX_VALUE_LENGTH:
        raise BadFilter(name, f"at most {MAX_VALUE_LENGTH} characters")
    if any(ord(ch) < 32 for ch in value):
        raise BadFilter(name, "control characters are not allowed")
    return value


COMPARE = ("", "previous")  # the values of ``compare``
TRUE, FALSE = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


def flag(name: str, value: str) -> bool:
    """A yes/no query parameter (``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off``, empty = no);
    InvalidInput naming ``name`` for anything else."""
    text = value.strip().lower()
    if text in TRUE or text in FALSE:
        return text in TRUE
    raise InvalidInput(f"{name}: must be true or false, not {value[:40]!r}")


@dataclass(frozen=True)
class ViewFilters:
    """A validated filter set of a view: a closed-open UTC window [since, until) in whole minutes (widened to
    them when given with seconds) and exact-match dimensions ('' = any)."""

    since: datetime
    until: datetime
    range: str = ""  # the named range when the window came from one, else ''
    environment: str = ""
    release: str = ""
    browser: str = ""
    # "previous": the charts that can also draw the same span just before the window ('' = none).
    compare: str = ""

    def __post_init__(self) -> None:
        # Every window, parsed or built from another, holds whole minutes: what the minute periods tile
        # (stacklens.metrics.windows, the one definition of a window).
        window = windows.cut(self.since, self.until)
        object.__setattr__(self, "since", window.since)
        object.__setattr__(self, "until", window.until)

    @classmethod
    def parse(
        cls,
        *,
        range: str = "",
        since: str = "",
        until: str = "",
        environment: str = "",
        release: str = "",
        browser: str = "",
        compare: str = "",
        now: datetime | None = None,
        default: str = DEFAULT_RANGE,
    ) -> ViewFilters:
        """Validate raw query-string values; raises :class:`BadFilter` naming the first bad field.
        ``default``: the range when neither ``range`` nor ``since``/``until`` is given
        (:func:`default_range`)."""
        now = (now or datetime.now(UTC)).astimezone(UTC)
        if range and (since or until):
            raise BadFilter("range", "give either range or since/until, not both")
        if since or until:
            if not since:
                raise BadFilter("since", "required with until (ISO 8601)")
            start = _parse_time("since", since)
            end = _parse_time("until", until) if until else now
            if end <= start:
                raise BadFilter("until", "must be after since")
            if end - start > MAX_WINDOW:
                raise BadFilter("since", "the window may span at most 90 days")
            named = ""
        else:
            named = range or default
            if named not in RANGES:
                raise BadFilter("range", f"{named!r} is not one of {', '.join(RANGES)}")
            end = now
            start = now - RANGES[named]
        if compare not in COMPARE:
            raise BadFilter("compare", "must be 'previous' (the same span just before the window) or empty")
        return cls(
            since=start,
            until=end,
            range=named,
            environment=_plain("environment", environment),
            release=_plain("release", release),
            browser=_plain("browser", browser),
            compare=compare,
        )

    @classmethod
    def from_query(
        cls, query: Mapping[str, str], now: datetime | None = None, default: str = DEFAULT_RANGE
    ) -> ViewFilters:
        """Validate the filters of a query string (``request.query_params``, or any mapping of names to
        values), as every performance page, API view and download takes them: a missing parameter is '',
        others are not looked at. Raises :class:`BadFilter` naming the first bad field."""
        return cls.parse(
            range=query.get("range", ""),
            since=query.get("since", ""),
            until=query.get("until", ""),
            environment=query.get("environment", ""),
            release=query.get("release", ""),
            browser=query.get("browser", ""),
            compare=query.get("compare", ""),
            now=now,
            default=default,
        )

    def previous(self) -> ViewFilters:
        """The same filters over the span of the same length that ends where this window begins (what "compare
        with the previous period" draws beside it)."""
        span = self.until - self.since
        return replace(self, since=self.since - span, until=self.since, range="", compare="")

    def sql(self, org_id: int, project_id: int) -> dict[str, Any]:
        """The query parameters every performance query takes."""
        return {
            "org_id": org_id,
            "project_id": project_id,
            "since": self.since,
            "until": self.until,
            "environment": self.environment,
            "release": self.release,
            "browser": self.browser,
        }

    def whole_hours(self) -> dict[str, datetime]:
        """The parts of the window the per-hour and per-day states answer: ``whole_start`` / ``whole_end``
        bound its whole UTC hours (both ``until`` when it holds none; the partial hours at its edges are
        read as minutes) and ``day_start`` / ``day_end`` its whole UTC days within them (both ``whole_end``
        when none)."""
        start = _ceil(self.since, timedelta(hours=1))
        end = _floor(self.until, timedelta(hours=1))
        if end <= start:
            start = end = self.until
        day_start, day_end = _ceil(start, timedelta(days=1)), _floor(end, timedelta(days=1))
        if day_end <= day_start:
            day_start = day_end = end
        return {"whole_start": start, "whole_end": end, "day_start": day_start, "day_end": day_end}

    def periods(self, per_day: bool = False, minutes: bool = False) -> dict[str, list[Period]]:
        """``periods``: the window's whole hours (:meth:`whole_hours`) as the (grain, start) rows of the
        state tables that tile them: its whole days as the fewest aligned blocks of days (a 30-day window:
        at most 8 instead of 30 days; ``per_day`` keeps single days, for a view that shows each day), the
        other whole hours one by one (``hour``); with ``minutes`` also the minutes of its partial edge
        hours (``minute``), so the periods tile the whole window (at most 118 minutes)."""
        bounds = self.whole_hours()
        days = tile_days(bounds["day_start"], bounds["day_end"], (1,) if per_day else DAY_SPANS)
        out: list[Period] = [(day_grain(span), first) for span, first in days]
        for start, end in (
            (bounds["whole_start"], bounds["day_start"]),
            (bounds["day_end"], bounds["whole_end"]),
        ):
            hour = start
            while hour < end:
                out.append(("hour", hour))
                hour += timedelta(hours=1)
        if minutes:
            # A window without a whole hour has whole_start = whole_end = until: all its minutes come first.
            for start, end in ((self.since, bounds["whole_start"]), (bounds["whole_end"], self.until)):
                minute = start
                while minute < end:
                    out.append(("minute", minute))
                    minute += MINUTE
        return {"periods": out}

    def params(self) -> dict[str, str]:
        """The filters as query-string values (for links that keep the view)."""
        window = (
            {"range": self.range} if self.range else {"since": _iso(self.since), "until": _iso(self.until)}
        )
        dims = {
            "environment": self.environment,
            "release": self.release,
            "browser": self.browser,
            "compare": self.compare,
        }
        return {**window, **{k: v for k, v in dims.items() if v}}

    def describe(self) -> dict[str, str]:
        """The filters as the API echoes them: the resolved window and every dimension."""
        return {
            "range": self.range,
            "since": _iso(self.since),
            "until": _iso(self.until),
            "environment": self.environment,
            "release": self.release,
            "browser": self.browser,
        }


_floor, _ceil = windows.floor, windows.ceil


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def tile_days(
    start: datetime, end: datetime, spans: tuple[int, ...] = DAY_SPANS
) -> list[tuple[int, datetime]]:
    """The UTC days [start, end) (midnights) as (span, first day) blocks, each starting on a multiple of
    its span days since 1970-01-01: from each day on, the largest span that starts there and fits."""
    first, last = (start - EPOCH).days, (end - EPOCH).days
    out: list[tuple[int, datetime]] = []
    day = first
    while day < last:
        span = next(s for s in spans if day % s == 0 and day + s <= last)
        out.append((span, EPOCH + timedelta(days=day)))
        day += span
    return out
