"""The performance views' shared pieces: yes/no parameters, JSON-ready values, CSV of rows."""

from __future__ import annotations

import csv
import io
from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from stacklens.errors import InvalidInput
from stacklens.performance.views import VIEWS, flag, plain, to_csv


def test_yes_and_no_spellings_and_anything_else_refused() -> None:
    assert [flag("compare", v) for v in ("1", "TRUE", " yes ", "on")] == [True] * 4
    assert [flag("compare", v) for v in ("0", "false", "No", "off", "")] == [False] * 5
    with pytest.raises(InvalidInput, match="compare: must be true or false, not 'maybe'"):
        flag("compare", "maybe")


def test_plain_values_are_utc_iso_8601() -> None:
    paris = timezone(timedelta(hours=1))
    assert plain(datetime(2026, 11, 20, 13, 0, 0, 123456, tzinfo=paris)) == "2026-11-20T12:00:00.123Z"
    assert plain(datetime(2026, 11, 20, 12)) == "2026-11-20T12:00:00.000Z"  # a naive time is UTC
    assert plain({"day": date(2026, 11, 20), "at": [datetime(2026, 1, 1, tzinfo=UTC)], 7: "x"}) == {
        "day": "2026-11-20",
        "at": ["2026-01-01T00:00:00.000Z"],
        "7": "x",
    }


def test_csv_of_rows() -> None:
    assert to_csv([]) == ""
    text = to_csv(
        [{"page": "=cmd", "p75": 1800.5, "days": [1, 2]}, {"page": "/cart", "p75": None, "days": []}]
    )
    assert list(csv.reader(io.StringIO(text))) == [
        ["page", "p75", "days"],
        ["'=cmd", "1800.5", "[1, 2]"],
        ["/cart", "", "[]"],
    ]
    assert VIEWS[0] == "overview" and "recommendations" in VIEWS
