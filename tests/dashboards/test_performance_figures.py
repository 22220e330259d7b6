"""The performance pages' figures: what plotly is told about the axes."""

from __future__ import annotations

import pytest

from dashboards.performance_figures import series_figure, span_label, waterfall_figure


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
