"""The performance pages' figures: what plotly is told about the axes, gaps (a day without samples is None,
never 0), empty charts (they say so, over the window's dates) and log-axis ticks; the sparklines' gaps."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from dashboards.performance_figures import (
    NO_DATA,
    distribution_figure,
    series_figure,
    span_label,
    waterfall_figure,
)
from dashboards.rendering import sparkline_runs
from stacklens.metrics.units import log_ticks
from stacklens.performance.calendar import day_slots, week_slots


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


@pytest.mark.parametrize(
    ("description", "op", "label"),
    [
        ("GET https://shop.test/api/products/0", "http.client", "GET /api/products/0"),
        ("POST https://shop.test/api/cart?id=3", "http.client", "POST /api/cart"),
        ("https://shop.test/static/app.js?v=2", "resource.script", "app.js"),
        ("https://fonts.other.test/css/", "resource.css", "css"),
        ("", "browser.domContentLoadedEvent", "browser.domContentLoadedEvent"),
        ("GET https://shop.test/api/" + "a" * 60, "http.client", "…" + ("/api/" + "a" * 60)[-39:]),
    ],
)
def test_waterfall_rows_name_files_and_api_calls(description: str, op: str, label: str) -> None:
    assert span_label(description, op) == label


def test_waterfall_labels_api_calls_by_method_and_path() -> None:
    span = {"start_ms": 10.0, "duration_ms": 5.0, "type": "API", "render_blocking": ""}
    figure = waterfall_figure(
        {
            "phases": [],
            "markers": [],
            "spans": [
                {**span, "description": "GET https://shop.test/api/products/12", "op": "http.client"},
                {
                    **span,
                    "description": "https://shop.test/img/p1.png",
                    "op": "resource.img",
                    "type": "Images",
                },
            ],
        }
    )
    assert list(figure["data"][0]["y"]) == ["1. GET /api/products/12", "2. p1.png"]


def test_a_day_without_samples_is_a_gap_not_zero() -> None:
    slots = day_slots(datetime(2026, 11, 20, tzinfo=UTC), datetime(2026, 11, 24, tzinfo=UTC))
    assert slots == ["2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23"]
    rows = [
        {"day": date(2026, 11, 20), "load_p75": 900.0, "views": 30},
        {"day": date(2026, 11, 23), "load_p75": 950.0, "views": 30},
        {"day": date(2026, 11, 22), "load_p75": None, "views": 4},  # loads, but no value of this metric
    ]
    figure = series_figure(rows, "day", "load_p75", "views", "Load time p75 per day", "ms", slots)
    (trace,) = figure["data"]
    assert trace["x"] == slots and trace["y"] == [900.0, None, None, 950.0]
    assert trace["connectgaps"] is False
    assert figure["layout"]["xaxis"]["range"] == ["2026-11-19 12:00", "2026-11-23 12:00"]
    assert "annotations" not in figure["layout"]


def test_an_empty_chart_says_so_over_the_window_not_january_2000() -> None:
    slots = day_slots(datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 8, tzinfo=UTC))
    figure = series_figure([], "day", "inp_p75", "inp_n", "INP p75 per day", "ms", slots)
    assert [a["text"] for a in figure["layout"]["annotations"]] == [NO_DATA]
    assert figure["data"][0]["y"] == [None] * 7
    assert figure["layout"]["xaxis"]["range"] == ["2026-10-31 12:00", "2026-11-07 12:00"]
    assert figure["layout"]["yaxis"]["showticklabels"] is False
    alone = series_figure([], "day", "inp_p75", "inp_n", "INP p75 per day", "ms")
    assert alone["layout"]["xaxis"] == {"visible": False}  # no window known: no invented dates either
    weeks = week_slots(datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 17, tzinfo=UTC))
    assert weeks == ["2026-W44", "2026-W45", "2026-W46", "2026-W47"]


def test_log_axes_tick_at_round_times() -> None:
    assert log_ticks(80, 3000) == [100, 200, 500, 1000, 2000]
    assert log_ticks(630, 3200) == [1000, 2000, 3000]  # too narrow for 1-2-5: 1-2-3-5
    assert log_ticks(120, 380) == [200, 300]  # and narrower: every digit
    buckets = [{"from": 10 ** (b / 10), "to": 10 ** ((b + 1) / 10), "loads": 3} for b in range(19, 35)]
    axis = distribution_figure(buckets, "Load time distribution", "ms")["layout"]["xaxis"]
    assert axis["type"] == "log"
    assert axis["ticktext"] == ["100 ms", "200 ms", "500 ms", "1 s", "2 s"]
    assert axis["tickvals"] == [100, 200, 500, 1000, 2000]


def test_sparklines_break_on_days_without_loads() -> None:
    runs = sparkline_runs([400.0, 420.0, None, None, 380.0, None, 500.0])
    assert len(runs) == 3  # two lines and one dot, nothing drawn for the two days without loads
    assert runs[1].split(" ")[0] == runs[1].split(" ")[1]  # a one-day run: a zero-length line (a dot)
    assert all(not p.endswith(",23.0") for run in runs for p in run.split(" "))  # never drawn at 0 ms
    assert sparkline_runs([None, None]) == []
