"""Every day and ISO week of a window, so a chart shows a gap where a day or week has no samples."""

from __future__ import annotations

from datetime import UTC, datetime

from stacklens.performance.calendar import day_slots, fill, week_slots


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_days_touched_by_a_window() -> None:
    assert day_slots(_at("2026-11-01T10:00"), _at("2026-11-03T00:00")) == ["2026-11-01", "2026-11-02"]
    assert day_slots(_at("2026-11-01T10:00"), _at("2026-11-03T00:00:01")) == [
        "2026-11-01",
        "2026-11-02",
        "2026-11-03",
    ]
    assert day_slots(_at("2026-11-01T10:00"), _at("2026-11-01T11:00")) == ["2026-11-01"]


def test_iso_weeks_across_a_new_year() -> None:
    # 2026-12-31 is a Thursday of ISO week 53; 2027-01-04 starts week 1.
    assert week_slots(_at("2026-12-27T00:00"), _at("2027-01-05T00:00")) == [
        "2026-W52",
        "2026-W53",
        "2027-W01",
    ]


def test_fill_keeps_slot_order_and_leaves_gaps_empty() -> None:
    rows = [{"day": "2026-11-02", "p75": 1800.0}]
    assert fill(rows, "day", ["2026-11-01", "2026-11-02"]) == [
        {"day": "2026-11-01"},
        {"day": "2026-11-02", "p75": 1800.0},
    ]
