"""The budget chart: each daily evaluation's value coloured by its verdict, the failing and insufficient
runs as bands, a day without enough samples a gap (never 0), the last point the status's own evaluation,
sizes in KiB, and "no data for these filters" when there is nothing to draw."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dashboards.budget_figures import NO_DATA, budget_figure
from stacklens.performance.budget_eval import BudgetSpec

START = datetime(2026, 11, 1, tzinfo=UTC)


def _spec(metric: str = "load_time_ms", value: float = 2000.0) -> BudgetSpec:
    return BudgetSpec(1, 1, metric, "p75", "/checkout", value, 7, 3)


def test_gaps_bands_and_the_last_point() -> None:
    points = [
        (START, None, 0),
        (START + timedelta(days=1), 1800.0, 10),
        (START + timedelta(days=2), 2400.0, 10),
        (START + timedelta(days=3), 2600.0, 2),  # too few samples: no verdict
        (START + timedelta(days=4), 2500.0, 10),
        (START + timedelta(days=4, hours=13, minutes=47), 2700.0, 11),  # the status's evaluation
    ]
    figure = budget_figure(_spec(), points, "ms", "Load time on /checkout")
    (line,) = [t for t in figure["data"] if t.get("mode") == "lines+markers"]
    assert line["y"] == [None, 1800.0, 2400.0, None, 2500.0, 2700.0] and line["connectgaps"] is False
    assert line["x"][-1] == points[-1][0].isoformat()
    assert line["marker"]["color"] == ["#98a2b3", "#1a7f37", "#b42318", "#98a2b3", "#b42318", "#b42318"]
    rects = [s for s in figure["layout"]["shapes"] if s["type"] == "rect"]
    colours = [r["fillcolor"] for r in rects]
    assert colours == ["#e5e7eb", "#fca5a5", "#e5e7eb", "#fca5a5"]  # insufficient, fail, insufficient, fail
    assert not figure["layout"].get("annotations") or all(
        a["text"] != NO_DATA for a in figure["layout"]["annotations"]
    )


def test_bytes_in_kib_and_an_empty_chart_says_no_data() -> None:
    spec = _spec("js_bytes", 300 * 1024)
    figure = budget_figure(
        spec, [(START, 256_000.0, 5), (START + timedelta(days=1), 307_200.0, 5)], "bytes", "JS"
    )
    (line,) = [t for t in figure["data"] if t.get("mode") == "lines+markers"]
    assert line["y"] == [250.0, 300.0] and figure["layout"]["yaxis"]["title"]["text"] == "KiB"
    empty = budget_figure(spec, [], "bytes", "JS")
    assert NO_DATA in [a["text"] for a in empty["layout"]["annotations"]]
    assert empty["layout"]["xaxis"]["visible"] is False  # no axis dated January 2000
    nothing = budget_figure(spec, [(START, None, 0), (START + timedelta(days=1), None, 0)], "bytes", "JS")
    assert NO_DATA in [a["text"] for a in nothing["layout"]["annotations"]]


def test_too_few_samples_say_how_many_of_how_many() -> None:
    """Issue #47: beside a row with 7 samples of the 20 needed the chart said "no data for these filters"."""
    spec = BudgetSpec(1, 1, "load_time_ms", "p75", "/checkout", 2000.0, 7, 20)
    points = [
        (START, 1500.0, 4),
        (START + timedelta(days=1), 1600.0, 6),
        (START + timedelta(days=2), 1700.0, 7),
    ]
    figure = budget_figure(spec, points, "ms", "Load time on /checkout")
    texts = [a["text"] for a in figure["layout"]["annotations"]]
    assert "insufficient data: 7 of 20 samples" in texts and NO_DATA not in texts
