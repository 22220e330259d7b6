"""Filter parsing: ranges and windows, every bad value named, a query string read by name, the whole hours and
days of a window, yes/no options."""

from __future__ import annotations

import pytest

from stacklens.errors import InvalidInput
from stacklens.view_filters import BadFilter, ViewFilters, flag
from tests.stacklens.performance.perf_seed import NOW


def test_range_and_window() -> None:
    week = ViewFilters.parse(now=NOW)
    assert week.range == "7d" and (week.until - week.since).days == 7
    window = ViewFilters.parse(since="2026-11-01T00:00:00Z", until="2026-11-02", now=NOW)
    assert window.params() == {"since": "2026-11-01T00:00:00Z", "until": "2026-11-02T00:00:00Z"}


def test_windows_are_widened_to_whole_minutes() -> None:
    window = ViewFilters.parse(since="2026-11-01T10:15:42.5Z", until="2026-11-01T11:20:01Z", now=NOW)
    assert window.describe()["since"] == "2026-11-01T10:15:00Z"
    assert window.describe()["until"] == "2026-11-01T11:21:00Z"
    # A named range: until is the minute after now, since the minute of now - range (nothing of it left out).
    day = ViewFilters.parse(range="24h", now=NOW.replace(minute=7, second=30))
    assert day.until == NOW.replace(minute=8) and day.since == NOW.replace(day=19, minute=7)
    # A window built from another (the sparklines' last 7 days) is whole minutes too.
    built = ViewFilters(since=NOW.replace(second=59), until=NOW.replace(second=1))
    assert (built.since, built.until) == (NOW, NOW.replace(minute=1))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"range": "1y"}, "range"),
        ({"since": "last week"}, "since"),
        ({"until": "2026-11-01"}, "since"),
        ({"since": "2026-11-02", "until": "2026-11-01"}, "until"),
        ({"since": "2026-01-01", "until": "2026-11-01"}, "since"),
        ({"range": "7d", "since": "2026-11-01"}, "range"),
        ({"browser": "x" * 300}, "browser"),
        ({"environment": "a\nb"}, "environment"),
    ],
)
def test_bad_values_name_the_field(kwargs, field) -> None:
    with pytest.raises(BadFilter) as caught:
        ViewFilters.parse(now=NOW, **kwargs)
    assert caught.value.field == field and str(caught.value).startswith(f"{field}: ")


def test_a_query_string_is_read_by_name() -> None:
    # What every page, API view and download passes: the query string's values by name, others ignored.
    query = {"range": "24h", "browser": "Firefox", "environment": "prod", "format": "csv", "page": "/cart"}
    assert ViewFilters.from_query(query, now=NOW) == ViewFilters.parse(
        range="24h", browser="Firefox", environment="prod", now=NOW
    )
    assert ViewFilters.from_query({}, now=NOW) == ViewFilters.parse(now=NOW)
    with pytest.raises(BadFilter) as refused:
        ViewFilters.from_query({"since": "2026-11-01", "release": "x\n"}, now=NOW)
    assert refused.value.field == "release"


def test_whole_hours_and_days_of_a_window() -> None:
    def parts(since: str, until: str) -> str:
        """The window's whole hours (start, end) and whole days (start, end), as "day hour:minute"."""
        found = ViewFilters.parse(since=since, until=until).whole_hours()
        return ", ".join(
            found[k].strftime("%d %H:%M") for k in ("whole_start", "whole_end", "day_start", "day_end")
        )

    # whole days, whole hours and partial hours on both sides
    assert parts("2026-11-06T12:17:30Z", "2026-11-19T09:42:10Z") == "06 13:00, 19 09:00, 07 00:00, 19 00:00"
    # whole hours inside one day, no whole day
    assert parts("2026-11-18T03:20:00Z", "2026-11-18T22:05:00Z") == "18 04:00, 18 22:00, 18 22:00, 18 22:00"
    # inside one hour: minutes alone
    assert parts("2026-11-19T10:05:00Z", "2026-11-19T10:55:00Z") == "19 10:55, 19 10:55, 19 10:55, 19 10:55"
    assert parts("2026-11-06T00:00:00Z", "2026-11-08T00:00:00Z") == "06 00:00, 08 00:00, 06 00:00, 08 00:00"


def test_yes_and_no_spellings_and_anything_else_refused() -> None:
    assert [flag("compare", v) for v in ("1", "TRUE", " yes ", "on")] == [True] * 4
    assert [flag("compare", v) for v in ("0", "false", "No", "off", "")] == [False] * 5
    with pytest.raises(InvalidInput, match="compare: must be true or false, not 'maybe'"):
        flag("compare", "maybe")
