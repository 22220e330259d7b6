"""Values as JSON carries them: times in UTC as ISO 8601, nested maps and lists converted."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

from stacklens.json_values import plain


def test_plain_values_are_utc_iso_8601() -> None:
    paris = timezone(timedelta(hours=1))
    assert plain(datetime(2026, 11, 20, 13, 0, 0, 123456, tzinfo=paris)) == "2026-11-20T12:00:00.123Z"
    assert plain(datetime(2026, 11, 20, 12)) == "2026-11-20T12:00:00.000Z"  # a naive time is UTC
    assert plain({"day": date(2026, 11, 20), "at": [datetime(2026, 1, 1, tzinfo=UTC)], 7: "x"}) == {
        "day": "2026-11-20",
        "at": ["2026-01-01T00:00:00.000Z"],
        "7": "x",
    }
