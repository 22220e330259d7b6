"""A change is worded as points for a percentage and per cent otherwise, and toned by the metric's good
direction in the catalog (crash-free sessions up is good, LCP up is bad, a count neither)."""

from __future__ import annotations

from stacklens.explore.query import Aggregate
from stacklens.explore.widget_change import change_of


def test_points_for_a_percentage_relative_for_the_rest_toned_by_direction() -> None:
    crash_free = change_of(Aggregate("avg", "crash_free_sessions"), 99.9, 99.8)
    assert crash_free is not None and crash_free.text == "+0.1 pp" and crash_free.tone == "good"
    worse = change_of(Aggregate("avg", "crash_free_sessions"), 99.0, 99.8)
    assert worse is not None and worse.text == "-0.8 pp" and worse.tone == "bad" and worse.arrow == "▼"
    lcp = change_of(Aggregate("p75", "lcp_ms"), 2002.0, 2000.0)
    assert lcp is not None and lcp.text == "+0.1 %" and lcp.tone == "bad"
    faster = change_of(Aggregate("p75", "lcp_ms"), 1500.0, 2000.0)
    assert faster is not None and faster.text == "-25.0 %" and faster.tone == "good"
    count = change_of(Aggregate("count", ""), 120, 100)
    assert count is not None and count.text == "+20.0 %" and count.tone == "neutral"
    assert change_of(Aggregate("p75", "lcp_ms"), 2000.0, None) is None
