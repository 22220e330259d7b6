"""The page-load score formula: control points, renormalised weights, ratings."""

from __future__ import annotations

import pytest

from stacklens.performance.score import CONTROL_POINTS, page_load_score, rating, vital_score


def test_score_control_points_and_renormalised_weights() -> None:
    points = CONTROL_POINTS["desktop"]["lcp"]
    assert vital_score(points.p10, points) == pytest.approx(0.9, abs=1e-6)
    assert vital_score(points.median, points) == pytest.approx(0.5, abs=1e-9)
    # A page load with only FCP and TTFB (Safari) is scored on those alone.
    only = page_load_score({"fcp": 934.0, "ttfb": 800.0})
    assert only == pytest.approx(90.0, abs=1e-4)
    assert page_load_score({}) is None
    # Mobile control points are laxer: the same LCP scores higher on mobile.
    assert page_load_score({"lcp": 3000.0}, mobile=True) > page_load_score({"lcp": 3000.0})
    assert [rating("lcp", v) for v in (2500, 2501, 4001, None)] == ["good", "needs improvement", "poor", ""]
