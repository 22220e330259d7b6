"""The performance pages' figures: what plotly is told about the axes."""

from __future__ import annotations

from dashboards.performance_figures import series_figure


def _axis(rows: list[dict[str, object]]) -> dict[str, object]:
    figure = series_figure(rows, "day", "p95_ms", "calls", "p95 per day", "ms")
    return figure["layout"]["xaxis"]


def test_a_single_day_keeps_day_ticks_with_a_day_either_side() -> None:
    axis = _axis([{"day": "2026-11-23", "p95_ms": 16.0, "calls": 1215}])
    assert axis["type"] == "date"
    assert axis["range"] == ["2026-11-22", "2026-11-24"]
    assert axis["dtick"] == 86_400_000


def test_several_days_leave_the_range_to_plotly() -> None:
    axis = _axis(
        [
            {"day": "2026-11-22", "p95_ms": 12.0, "calls": 40},
            {"day": "2026-11-23", "p95_ms": 16.0, "calls": 1215},
        ]
    )
    assert axis["type"] == "date"
    assert "range" not in axis and "dtick" not in axis


def test_iso_weeks_are_categories() -> None:
    figure = series_figure(
        [{"iso_week": "2026-W47", "load_p75": 900.0, "views": 30}],
        "iso_week",
        "load_p75",
        "views",
        "Load time p75 per ISO week",
        "ms",
    )
    assert figure["layout"]["xaxis"]["type"] == "category"
