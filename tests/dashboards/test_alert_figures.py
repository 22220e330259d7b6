"""The rule page's preview chart draws what the evaluator saw: a band per run of one state, the line broken
where an evaluation had too few samples (never drawn at 0), the three thresholds, a firing count that is
the firing bands' — and says "no data for these filters" instead of drawing an empty axis."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dashboards.alert_figures import NO_DATA, preview_figure
from stacklens.alerts.preview import replay
from stacklens.control.models.alerts import AlertRule

START = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)


def _rule() -> AlertRule:
    return AlertRule(
        type="performance_budget",
        metric="lcp_ms",
        statistic="p75",
        scope="/search",
        threshold=2000.0,
        warning_threshold=1500.0,
        resolve_threshold=1800.0,
        min_samples=3,
        window_seconds=6 * 3600,
    )


def _points(values: list[float | None]) -> list[tuple[datetime, float | None, int]]:
    return [(START + timedelta(hours=i), v, 0 if v is None else 5) for i, v in enumerate(values)]


def test_bands_line_thresholds_and_count_follow_the_evaluations() -> None:
    rule = _rule()
    got = replay(rule, _points([None, 1000, 1600, 2500, 2600, 1700, 1200, 2100, None, 1000]))
    assert [s.state for s in got.steps] == [
        "insufficient_data", "ok", "warning", "firing", "firing", "ok", "ok", "firing", "insufficient_data", "ok",
    ]  # fmt: skip
    figure = preview_figure(rule, got)
    shapes = figure["layout"]["shapes"]
    vrects = [s for s in shapes if s["type"] == "rect"]
    lines = sorted(s["y0"] for s in shapes if s["type"] == "line")
    assert len(vrects) == len(got.bands) == 8 and lines == [1500.0, 1800.0, 2000.0]
    assert "would have fired 2 time(s)" in figure["layout"]["title"]["text"] and len(got.periods) == 2
    assert "on /search" in figure["layout"]["title"]["text"]  # the rule's scope
    (line,) = [t for t in figure["data"] if t.get("mode") == "lines+markers"]
    assert line["y"] == [None, 1000, 1600, 2500, 2600, 1700, 1200, 2100, None, 1000]
    assert line["connectgaps"] is False and figure["layout"]["xaxis"]["type"] == "date"
    assert line["x"][0].startswith("2026-11-01T00:00")


def test_too_few_samples_is_a_gap_and_no_data_says_so() -> None:
    rule = _rule()
    few = replay(rule, [(START, 2500.0, 2), (START + timedelta(hours=1), 2600.0, 2)])  # 2 < 3 samples
    figure = preview_figure(rule, few)
    (line,) = [t for t in figure["data"] if t.get("mode") == "lines+markers"]
    assert line["y"] == [None, None] and few.periods == []
    assert [a["text"] for a in figure["layout"]["annotations"] if a["text"] == NO_DATA] == [NO_DATA]
    assert line["x"] == [START.isoformat(), (START + timedelta(hours=1)).isoformat()]  # the 30 days, not 2000
