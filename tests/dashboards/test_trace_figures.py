"""The trace page's axis: labels at 0, ¼, ½, ¾ and the end of the trace, in ms as every page writes them."""

from __future__ import annotations

from dashboards.trace_figures import ticks


def test_ticks() -> None:
    assert ticks(1000) == ["0.0 ms", "250.0 ms", "500.0 ms", "750.0 ms", "1,000.0 ms"]
    assert ticks(0) == ["0.0 ms"] * 5
