"""The trace page's geometry: bars in steps of 0.25 % of the row (a 0 ms span still one step, nothing past
the end), the axis labels in ms, indentation capped."""

from __future__ import annotations

from dashboards.trace_figures import STEPS, bar, depth_class, ticks


def test_bars_ticks_and_depths() -> None:
    assert bar(0, 100, 100).width == STEPS and bar(0, 100, 100).x == 0
    assert bar(50, 25, 100).x == 200 and bar(50, 25, 100).width == 100
    assert bar(100, 0, 100).x + bar(100, 0, 100).width <= STEPS and bar(100, 0, 100).width == 1
    assert bar(0, 0, 0).width == 1
    assert ticks(1000) == ["0.0 ms", "250.0 ms", "500.0 ms", "750.0 ms", "1,000.0 ms"]
    assert depth_class(3) == "d3" and depth_class(40) == "d16"
