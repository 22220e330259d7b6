"""The issue's events-over-time chart: one bar per bucket, as wide as the bucket, named by its size."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dashboards.figures import events_over_time_figure

SINCE = datetime(2026, 11, 20, tzinfo=UTC)


def test_bars_per_hour_over_a_day() -> None:
    until = SINCE + timedelta(days=1)
    rows = [
        {"bucket": SINCE + timedelta(hours=2), "events": 3},
        {"bucket": "2026-11-20T05:00:00", "events": "7"},
    ]
    figure = events_over_time_figure(rows, SINCE, until)
    bar = figure["data"][0]
    assert bar["type"] == "bar"
    assert bar["x"] == ["2026-11-20T02:00:00+00:00", "2026-11-20T05:00:00"]
    assert bar["y"] == [3, 7]
    assert bar["width"] == [3600 * 1000 * 0.85] * 2
    assert figure["layout"]["title"]["text"] == "Events per hour"
    assert figure["layout"]["xaxis"]["range"] == [SINCE.isoformat(), until.isoformat()]


def test_an_empty_window_is_still_a_chart() -> None:
    figure = events_over_time_figure([], SINCE, SINCE + timedelta(days=30))
    assert figure["data"][0].get("x", []) == [] and figure["layout"]["title"]["text"] == "Events per day"
