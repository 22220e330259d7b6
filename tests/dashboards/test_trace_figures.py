"""The trace page's geometry: bars as shares of the trace in 1,000 SVG units (a 0 ms span still a sliver,
nothing past the end), service colours cycling after ten, the axis labels in ms, indentation capped."""

from __future__ import annotations

from dashboards.trace_figures import PALETTE, bar, colour, depth_class, ticks


def test_bars_ticks_colours_and_depths() -> None:
    assert bar(0, 100, 100) == bar(0.0, 100.0, 100.0) and bar(0, 100, 100).width == 1000
    assert bar(50, 25, 100).x == 500 and bar(50, 25, 100).width == 250
    assert bar(100, 0, 100).x + bar(100, 0, 100).width <= 1000 and bar(100, 0, 100).width == 2
    assert bar(0, 0, 0).width == 2
    assert colour(0) == PALETTE[0] and colour(10) == PALETTE[0] and colour(3) != colour(4)
    assert ticks(1000) == ["0.0 ms", "250.0 ms", "500.0 ms", "750.0 ms", "1,000.0 ms"]
    assert depth_class(3) == "d3" and depth_class(40) == "d16"
